//! Cold, unicast source publishers.
//!
//! # Contract
//!
//! * **Cold:** every [`subscribe`](rs_api::Publisher::subscribe) starts a fresh run of the
//!   source for that subscriber alone; any number of subscribers may subscribe, each sees the
//!   whole sequence (rule 1.11: each subscription is independent).
//! * **Driven by the caller:** there is no thread of its own. Signals are delivered by whoever
//!   is draining the subscription's [serial drain loop](crate::serial): the `subscribe` caller
//!   (for `on_subscribe`, and for terminal signals of empty or failed sources), then the
//!   callers of `request`. `request` may therefore call `on_next`, `on_complete` and `on_error`
//!   synchronously (rules 3.10, 3.11), re-entrantly with depth 1 (3.3).
//! * **Demand:** never more `on_next` than requested (1.1); `request(0)` ends the subscription
//!   with `on_error(`[`SpecViolation::NonPositiveRequest`](rs_api::SpecViolation)`)` (3.9);
//!   demand saturates (3.17).
//! * **End:** a finite source completes as soon as its end is known, without waiting for more
//!   demand: the engine pulls one element ahead (see [`Pull`]). Empty and failed sources
//!   terminate right after `on_subscribe`.
//! * **Cancel:** signals stop at once if cancel comes from inside `on_next`, or after the
//!   element in flight if it comes from another thread (1.8, 3.12); the subscriber and the
//!   source are dropped (3.13). Nothing is buffered, so nothing in flight is lost.
//! * **Panics:** a panicking subscriber is cancelled and dropped (2.13); a panicking source fails
//!   the stream with `on_error` (also a factory that panics while making the source for a
//!   subscription: `on_subscribe`, then `on_error`). No panic reaches the caller.
//! * **Memory:** one subscription holds the subscriber, the source and at most one element
//!   pulled ahead.
//!
//! | publisher | what it emits |
//! |---|---|
//! | [`from_iter`] | the elements of a cloneable `IntoIterator`, then `on_complete` |
//! | [`range`] | the integers of a range (`a..b`, `a..=b`, or open: `a..`), then `on_complete` |
//! | [`from_fn`] | the elements of a fresh iterator made per subscription |
//! | [`from_pull`] | the steps of a fresh [`Pull`] source made per subscription (which may answer "not ready" and wake the engine later) |
//! | [`push`] | what a [`PushSender`] sends, from callbacks, a thread or async code: hot, unicast, bounded (its own docs give its contract) |
//! | [`just`] | one value, then `on_complete` |
//! | [`empty`] | `on_complete` at once |
//! | [`failed`] | `on_error` with the given error at once |
//! | [`never()`] | nothing, until cancelled |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let numbers = source::range(0u64..10);
//! let (subscriber, result) = collect(RequestStrategy::Prefetch(4));
//! numbers.subscribe(Box::new(subscriber));
//! assert_eq!(result.wait().unwrap(), (0..10).collect::<Vec<_>>());
//! ```
//!
//! # Layout
//!
//! | file | what it holds |
//! |---|---|
//! | `pull.rs` | the pull engine: [`Pull`], [`Pulled`], one drain loop per subscription |
//! | `made.rs` | a source made per subscription, with the guard around the user's factory |
//! | `iter.rs` | [`IterPublisher`]: [`from_iter`] and [`range`] |
//! | `just.rs` | [`Just`]: [`just`] |
//! | `range.rs` | [`IntegerRange`]: the ranges [`range`] accepts |
//! | `from_fn.rs` | [`FnPublisher`]: [`from_fn`] |
//! | `from_pull.rs` | [`PullPublisher`]: [`from_pull`] |
//! | `empty.rs` | [`Empty`]: [`empty`] |
//! | `failed.rs` | [`Failed`]: [`failed`] |
//! | `never.rs` | [`Never`]: [`never()`] |
//! | `push.rs` | [`PushPublisher`] and [`PushSender`]: [`push`] |

mod empty;
mod failed;
mod from_fn;
mod from_pull;
mod iter;
mod just;
mod made;
mod never;
mod pull;
mod push;
mod range;

pub use empty::{empty, Empty};
pub use failed::{failed, Failed};
pub use from_fn::{from_fn, FnPublisher};
pub use from_pull::{from_pull, PullPublisher};
pub use iter::{from_iter, range, IterPublisher};
pub use just::{just, Just};
pub use never::{never, Never};
pub use pull::{Pull, Pulled};
pub use push::{push, PushPublisher, PushSender};
pub use range::IntegerRange;
