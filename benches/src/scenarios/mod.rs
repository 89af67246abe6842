//! One module per component, each with a `scenario()` for the registry
//! ([`crate::scenario::all`]).
//!
//! | module | scenario id | what it measures |
//! |---|---|---|
//! | [`source`] | `source` | a cold source drained into a subscriber on one thread, per element |
//! | [`pipeline`] | `pipeline` | a producer thread handing `u64`s to a consumer thread |
//! | [`compat`] | `to_stream`, `from_stream` | the async-Rust bridges: publisher → `Stream`, `Stream` → publisher |

pub mod compat;
pub mod pipeline;
pub mod source;
