//! `cargo run --release -p rs-tck [-- --json FILE] [--threads N] [FILTER]`: runs every
//! verification over every implementation of this workspace (the [`registry`]), with the
//! command line of [`rs_tck::runner::main`].
// The runner uses std threads and I/O directly (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]
#![forbid(unsafe_code)]

mod registry;

fn main() -> std::process::ExitCode {
    rs_tck::runner::main(registry::all())
}
