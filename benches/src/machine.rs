//! What machine a report was measured on: cores, memory, CPU model, OS, compiler, date.
//!
//! Read from `/proc` and `/etc/os-release` on Linux; anything unreadable is `"unknown"`. The
//! compiler is the `rustc` that built this binary (recorded by the build script).

use serde::{Deserialize, Serialize};

/// The machine behind a report: no figure is published without the machine it was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// Cores this process may use (`std::thread::available_parallelism`).
    pub cores: usize,
    /// The CPU model (`/proc/cpuinfo` "model name").
    pub cpu_model: String,
    /// Total memory in bytes (`/proc/meminfo` MemTotal); 0 if unknown.
    pub memory_bytes: u64,
    /// Total memory, human-readable.
    pub memory: String,
    /// Operating system (`/etc/os-release` PRETTY_NAME, else the target OS).
    pub os: String,
    /// Kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// The compiler that built the benchmarks (`rustc --version`).
    pub rustc: String,
    /// When the report was made, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute figures when measuring started: how busy the
    /// machine was with other work.
    #[serde(default)]
    pub load_average: String,
}

const UNKNOWN: &str = "unknown";

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The value after `key` and a colon in a `key : value` listing such as `/proc/cpuinfo`.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

impl Machine {
    /// Describes this machine, now.
    ///
    /// # Examples
    ///
    /// ```
    /// let m = rs_benches::machine::Machine::detect();
    /// assert!(m.cores >= 1);
    /// assert!(m.date.ends_with('Z'));
    /// ```
    #[must_use]
    pub fn detect() -> Machine {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpu_model = read("/proc/cpuinfo")
            .and_then(|t| field(&t, "model name").map(str::to_owned))
            .unwrap_or_else(|| UNKNOWN.to_owned());
        let memory_bytes = read("/proc/meminfo")
            .and_then(|t| {
                let kb = field(&t, "MemTotal")?.trim_end_matches("kB").trim();
                kb.parse::<u64>().ok()
            })
            .map_or(0, |kb| kb * 1024);
        let memory = if memory_bytes == 0 {
            UNKNOWN.to_owned()
        } else {
            format!("{:.1} GiB", memory_bytes as f64 / f64::from(1u32 << 30))
        };
        let os = read("/etc/os-release")
            .and_then(|t| {
                t.lines().find_map(|l| {
                    l.strip_prefix("PRETTY_NAME=")
                        .map(|v| v.trim_matches('"').to_owned())
                })
            })
            .unwrap_or_else(|| std::env::consts::OS.to_owned());
        let kernel = read("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|| UNKNOWN.to_owned());
        Machine {
            cores,
            cpu_model,
            memory_bytes,
            memory,
            os: format!("{os} ({})", std::env::consts::ARCH),
            kernel,
            rustc: env!("RS_BENCHES_RUSTC_VERSION").to_owned(),
            date: utc_now(),
            load_average: load_average(),
        }
    }
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or `"unknown"`.
#[must_use]
pub fn load_average() -> String {
    read("/proc/loadavg")
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
#[must_use]
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_utc(secs)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian).
///
/// # Examples
///
/// ```
/// assert_eq!(rs_benches::machine::format_utc(0), "1970-01-01T00:00:00Z");
/// assert_eq!(rs_benches::machine::format_utc(951_782_400), "2000-02-29T00:00:00Z");
/// ```
#[must_use]
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
