//! Ready-made subscribers: [`collect`] into a `Vec`, [`for_each`] element, [`fold`] into an
//! accumulator (a sum, a count: the result comes with the handle), and [`external`]:
//! one whose demand and signals are driven from outside (for bridges and event loops; its
//! own docs give its contract).
//!
//! # Contract
//!
//! * **Demand** follows a [`RequestStrategy`]: unbounded, or a bounded prefetch of `n` that is
//!   replenished by `n / 2` (at least 1) each time that many elements have been consumed, so
//!   at most `n` elements are ever outstanding (rule 2.1).
//! * **One subscription** (2.5): a second `on_subscribe` — or one after the end — is cancelled
//!   at once, and the first subscription is kept.
//! * **Terminal signals** (2.3, 2.4): the subscription is dropped without being called.
//! * **Serial calls** (2.7): the subscriber's own requests (made from inside its signals) and
//!   its handle's `cancel` (from any thread) never overlap on the subscription, and nothing is
//!   requested after the cancel; no lock is held while calling out. The one exception is a
//!   subscription of this crate's own publishers (cold sources, flows, the fanout) that its
//!   publisher marks as taking concurrent calls: its `request` and `cancel` only record
//!   atomically, and a request after the cancel is ignored (3.6), so the replenishing
//!   requests skip the gate (see the cost note below).
//! * **The handle:** each subscriber comes with a [`Handle`] that waits for the outcome from
//!   any thread (or is awaited: it is a `Future`), and can cancel the subscription.
//!   **Dropping the handle cancels the subscription** (as dropping a `Stream` or futures'
//!   `RemoteHandle` does; [`Handle::detach`] lets the stream run on instead). A stream that
//!   did not end by itself has a typed outcome of its own: [`Cancelled`] (through the handle),
//!   [`Panicked`] (the consumer panicked: the subscriber cancels its subscription, and the
//!   panic never reaches the publisher), [`Dropped`] (the publisher dropped the subscriber
//!   without a terminal signal) — a waiting thread or task never hangs on a subscriber that is
//!   gone.
//! * **Sizes:** [`RequestStrategy::Prefetch`] takes a `usize` (a size, as every buffer size in
//!   the crate); `Prefetch(0)` panics in the constructors (a request of 0 breaks rule 3.9;
//!   nothing is silently rounded).
//! * **Cost:** no lock and no allocation per element (`collect` pushes into its own `Vec`; the
//!   handle sees the result only at the end). Per element: one `dyn` call from the publisher,
//!   the consumer, and with bounded demand a count; a request (each `n / 2` elements, or
//!   after every element for `OneByOne`) goes through the rule-2.7 gate, two atomic
//!   read-modify-writes around the call (`fetch_or`, `fetch_and`). Measured in issue 24,
//!   these two were the larger part of what `OneByOne` costs over unbounded demand on a
//!   cold source once the request itself was trampolined by this crate's publishers (a plain
//!   store, see [`crate::demand`]). A lighter gate needs a store-load fence on both sides
//!   (the same cost on x86), so a foreign subscription keeps it; this crate's own, which take
//!   concurrent calls, are requested without it. Per element every strategy then pays one
//!   countdown (a decrement and a test); when it reaches 0 with such a subscription, one test
//!   and the request, inline in `on_next` (for `for_each` with `OneByOne` on `range`: about
//!   20 instructions from `on_next`'s entry to the call of `request`, the consumer's sum
//!   included, where the count up to the batch and an out-of-line replenish made it about
//!   38; counted with callgrind on
//!   `benches/examples/source_prof`, the module docs of the pull engine in
//!   `rs-impl/src/source/pull.rs` have the whole path).
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, fold, for_each, RequestStrategy};
//!
//! let (s, result) = collect(RequestStrategy::Prefetch(8));
//! source::range(0u32..100).subscribe(Box::new(s));
//! assert_eq!(result.wait().unwrap().len(), 100);
//!
//! let mut sum = 0u64;
//! let total = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
//! let t = total.clone();
//! let (s, done) = for_each(RequestStrategy::OneByOne, move |x: u64| {
//!     sum += x;
//!     t.store(sum, std::sync::atomic::Ordering::Relaxed);
//! });
//! source::range(1u64..5).subscribe(Box::new(s));
//! done.wait().unwrap();
//! assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), 10);
//!
//! // The same sum without a closure that shares state:
//! let (s, sum) = fold(RequestStrategy::OneByOne, 0u64, |acc, x: u64| acc + x);
//! source::range(1u64..5).subscribe(Box::new(s));
//! assert_eq!(sum.wait().unwrap(), 10);
//! ```
//!
//! # Layout
//!
//! | file | what it holds |
//! |---|---|
//! | `ready_made.rs` | [`collect`], [`for_each`] and [`fold`]: one subscriber core, three consumers |
//! | `request.rs` | [`RequestStrategy`], and the subscription handling that applies it |
//! | `gate.rs` | the rule 2.7 gate between the subscriber's requests and its handle's `cancel` |
//! | `handle.rs` | [`Handle`] (blocking or awaited), the outcome slot it shares with its subscriber, [`Cancelled`], [`Panicked`], [`Dropped`], [`AlreadyTaken`] |
//! | `external.rs` | [`external`]: the subscriber driven by a [`Requester`], its signals read from [`Signals`] |

mod external;
mod gate;
mod handle;
mod ready_made;
mod request;

pub use external::{external, External, Requester, Signals};
pub use handle::{AlreadyTaken, Cancelled, Dropped, Handle, Panicked};
pub use ready_made::{collect, fold, for_each, Collect, Fold, ForEach};
pub use request::RequestStrategy;
