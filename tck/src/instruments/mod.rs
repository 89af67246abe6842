//! The instruments of the verifications, as in the JVM TCK's `TestEnvironment`: the pieces a
//! verification uses to drive an implementation and to record what it sees, from any thread.
//! (The whitebox *probe*, which a subscriber under test reports to, is
//! [`WhiteboxSubscriberProbe`](crate::subscriber::WhiteboxSubscriberProbe).)
//!
//! | instrument | what it is |
//! |---|---|
//! | [`Latch`] | a resettable one-shot gate; flops on an unexpected state |
//! | [`Promise`] | a write-once value; flops on a second write |
//! | [`Receptacle`] | a bounded queue that a test waits on with timeouts |
//! | [`UpstreamTap`] | counts what an implementation takes from its upstream (requests from a publisher, items pulled from a stream): the bounded-buffering checks' measure |
//! | [`ManualSubscriber`] | a test-driven subscriber: the test requests, cancels and expects signals; checks 1.1, 1.7, 1.9, 3.3 as signals arrive |
//!
//! Checks that run in a signal (on the publisher's thread) never panic: they flop into the
//! [`TestEnvironment`](crate::env::TestEnvironment). Waits return a
//! [`TestResult`](crate::outcome::TestResult) whose failure names the rule.

mod latch;
mod manual;
mod receptacle;
pub(crate) mod tally;
mod tap;

pub use latch::{Latch, Promise};
pub use manual::{subscribe_guarded, ManualSubscriber, ProbeHandle, ProbeSubscriber, Signal};
pub use receptacle::Receptacle;
pub use tap::{TappedPublisher, TappedStream, UpstreamTap};
