//! The hints of violations that many checks can run into on the way to what they check.
//!
//! Every check has a hint of its own ([`TestSpec::hint`](crate::suite::TestSpec::hint)): what
//! to look at when the rule it is about is broken. But a check often fails on something else
//! first — the stream does not end, an element too many comes, nothing comes at all — and then
//! the check's own hint points at the wrong place. Those failures carry one of these hints
//! instead ([`Stop::with_hint`](crate::outcome::Stop::with_hint)): the hint names what was
//! seen, wherever it was seen. The self-tests pin each to the broken behaviour that causes it.
//!
//! # Examples
//!
//! ```
//! use rs_tck::{hints, outcome::Stop};
//!
//! let s = Stop::failed("rule 1.6: no on_complete within 100 ms").with_hint(hints::LOOK_AHEAD);
//! assert_eq!(s.hint(), Some(hints::LOOK_AHEAD));
//! ```

/// A publisher that did not call `on_complete` after its last element while no demand was
/// left: it waits for a request to discover that it has ended.
pub const LOOK_AHEAD: &str = "does the publisher discover its end without demand? With no \
     demand left after its last element it must still call on_complete: a finite source looks \
     one element ahead (or knows its length) instead of waiting for another request to find \
     that it has ended (rule 1.5)";

/// A publisher that did not call `on_complete` after its last element while demand was left.
pub const ELEMENTS_RUN_OUT: &str =
    "does the publisher call on_complete when its elements run out, even while demand is left?";

/// An element came where the end of the stream was expected.
pub const TOO_MANY_ELEMENTS: &str = "does create_publisher(n) stop after n elements? An \
     element came where the end of the stream was expected: count what is emitted against n, \
     not only against the demand";

/// `on_complete` came where an element was expected.
pub const TOO_FEW_ELEMENTS: &str = "does create_publisher(n) produce all n elements before \
     on_complete? The stream ended where an element was expected";

/// A requested element did not come.
pub const NO_DELIVERY: &str = "does request(n) make the publisher emit? Record the demand and \
     run (or wake) the drain loop on every request, from whichever thread it comes";

/// The failed publisher did not signal `on_error`.
pub const FAILED_PUBLISHER: &str =
    "does create_failed_publisher() build a publisher that calls on_subscribe, then on_error?";

/// A signal after `on_complete`.
pub const AFTER_ON_COMPLETE: &str =
    "is a terminated flag set at on_complete and checked before every later signal?";

/// The publisher did not call `on_subscribe` (or not first).
pub const ON_SUBSCRIBE: &str = "is on_subscribe the first call on every subscriber, before any \
     on_next, on_error or on_complete?";

/// `subscribe` (or `request`, `cancel`) panicked.
pub const MUST_NOT_PANIC: &str = "do subscribe, request and cancel return normally? catch \
     panics of user code (a source, a factory) and turn them into on_error";

/// A subscriber's deliberate panic escaped from `subscribe`, `request` or `cancel`.
pub const PANIC_ESCAPED: &str = "is every call to a subscriber guarded (rs_impl::panics::guard, \
     or catch_unwind)? A subscriber's panic must not escape into the caller of subscribe, \
     request or cancel: catch it, treat that subscription as cancelled, drop the subscriber";

/// A subscriber panicked and the publisher kept signalling it (or kept it).
pub const PANICKING_SUBSCRIBER: &str = "after a subscriber's signal panics, does the publisher \
     treat its subscription as cancelled (rule 2.13): no further signal to it, the subscriber \
     dropped (rs_impl::panics::drop_guarded), everyone else served as before?";

/// Several subscribers, a buffer that grows: a subscriber lost, repeated or reordered elements.
pub const GROWING_BUFFER: &str = "when the shared buffer grows (or wraps) while subscribers sit \
     at different positions, does every reader's position still point at its next element? \
     Copy the live range in order, from the slowest reader's position, and re-base every \
     reader's index on the new buffer";

/// More taken from the upstream than the declared buffer.
pub const BOUNDED_BUFFER: &str = "does the implementation request from its upstream only what \
     its buffer has room for (outstanding upstream demand plus held elements within the \
     declared bound), replenishing as downstream takes elements, rather than requesting \
     unbounded demand?";

/// Declared [`UpstreamErrorPolicy::Immediately`](crate::processor::UpstreamErrorPolicy), the
/// processor held the error (or sent held elements after it).
pub const ERROR_IMMEDIATELY: &str = "does the processor pass an upstream on_error downstream at \
     once, without waiting for demand, and drop the elements it held? If it delivers its held \
     elements first by design, declare upstream_error_policy() = AfterHeldElements";

/// Declared [`UpstreamErrorPolicy::AfterHeldElements`](crate::processor::UpstreamErrorPolicy),
/// the error overtook held elements or waited for a request after the last one.
pub const ERROR_AFTER_HELD: &str = "does the processor queue an upstream on_error behind the \
     elements it holds, deliver those on demand, and send the error right after the last one \
     without waiting for another request? If it fails at once by design, declare \
     upstream_error_policy() = Immediately";

/// A stream bridge requested more than its consumer polled plus its prefetch.
pub const BOUNDED_STREAM: &str = "does the stream request only as its consumer polls: its \
     prefetch at first, then what has been polled out (in batches at most), never more than \
     polled + prefetch in all, and nothing while the consumer does not poll?";

/// A stream returned `Pending` and never woke its consumer.
pub const STREAM_WAKE: &str = "does the subscriber side wake the waker of the last Pending poll \
     when an element or a terminal signal arrives (store the waker before checking the buffer \
     again: no lost wake-up)?";

/// A stream returned `Pending` without requesting.
pub const STREAM_DEMAND: &str = "does poll_next request from the subscription when it has no \
     element buffered and no demand outstanding (and take the subscription once on_subscribe \
     brought it)?";

/// A stream did not yield the upstream's error.
pub const STREAM_ERROR: &str =
    "does on_error become one Err item, after the elements received before it?";

/// A sink adapter signalled demand while its sink was not ready.
pub const SINK_READY: &str = "does the adapter ask the sink first (poll_ready) and request an \
     element only once the sink said it has room: one requested and not yet accepted at most?";

/// A sink adapter did not deliver every element or did not close the sink.
pub const SINK_DELIVERY: &str = "does every element reach the sink (start_send after a ready \
     poll_ready), in order, and does on_complete flush and close the sink (poll_close)?";

/// A sink adapter did not cancel upstream on a sink error.
pub const SINK_ERROR: &str =
    "does a sink error (from poll_ready, start_send, poll_flush or poll_close) cancel the subscription upstream?";

/// Two async callbacks ran at once.
pub const CALLBACKS_SERIAL: &str = "does the adapter await each callback before it starts the \
     next (one task running them in turn), rather than spawning a task per element (rules 1.3, \
     2.7 for async code)?";

/// An async-callback adapter requested while its callbacks were still running.
pub const CALLBACKS_DEMAND: &str = "does the adapter replenish demand only as callbacks finish \
     (its awaiting is its backpressure): never more requested than callbacks finished plus its \
     prefetch?";

/// An async-callback adapter lost the upstream's error or the order of the callbacks.
pub const CALLBACKS_TERMINAL: &str = "does the adapter call on_next for every element, in order, \
     then exactly one terminal callback (on_error with the upstream's error, or on_complete), \
     after the last on_next has finished?";
