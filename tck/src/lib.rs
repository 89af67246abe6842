//! The Reactive Streams verification kit (TCK). Under construction.
#![forbid(unsafe_code)]

pub mod loom;
