//! One module per component, each with a `scenario()` for the registry
//! ([`crate::scenario::all`]).
//!
//! | module | scenario id | what it measures |
//! |---|---|---|
//! | [`source`] | `source` | a cold source drained into a subscriber on one thread, per element |
//! | [`pipeline`] | `pipeline` | a producer thread handing `u64`s to a consumer thread |
//! | [`fanout`] | `fanout`, `fanout-slow` | one producer, N subscribers: continuous demand and `request(1)`; one slow subscriber among fast ones |

pub mod fanout;
pub mod pipeline;
pub mod source;
