//! One module per component, each with a `scenario()` for the registry
//! ([`crate::scenario::all`]).
//!
//! | module | scenario id | what it measures |
//! |---|---|---|
//! | [`source`] | `source` | a cold source drained into a subscriber on one thread, per element |
//! | [`interpreter`] | `interpreter` | seed 002's InterpreterBenchmark: k identity stages in one island, against separate publisher/subscriber pairs and a futures::stream chain |
//! | [`pipeline`] | `pipeline` | a producer thread handing `u64`s to a consumer thread |

pub mod interpreter;
pub mod pipeline;
pub mod source;
