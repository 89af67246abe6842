//! Records the version of the compiler that builds the benchmarks, for the report's machine
//! section (`RS_BENCHES_RUSTC_VERSION`).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=RS_BENCHES_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
