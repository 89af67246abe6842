//! Every registered implementation (the runner's registry, `tck/src/bin/rs-tck/registry/`,
//! included from the binary) through the `cargo test` harness: one test per rule,
//! verification and implementation, named `<implementation>::<verification>::<test>`, so that
//! `cargo test -p rs-tck --test registry -- fanout` runs the TCK over one area's
//! implementations. The runner binary runs the same suites with a table and a JSON report.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[allow(dead_code)] // the loom half of the registry is run by tests/loom.rs
#[path = "../src/bin/rs-tck/registry/mod.rs"]
mod registry;

fn main() {
    rs_tck::harness::main(registry::all());
}
