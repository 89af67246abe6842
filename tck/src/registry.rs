//! The registry of built-in implementations that the runner verifies.
//!
//! One line per implementation: a [`Suite`] from a verification's `verify` function. Later
//! verifications (subscriber, processor) and implementations (fanout, boundary) add their
//! lines to [`builtins`].
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `source::range` | publisher | `range(0..n)` |
//! | `source::from_iter` | publisher | a cloneable lazy iterator of `String`s |
//! | `source::from_fn` | publisher | a fresh iterator per subscription |
//! | `source::from_pull` | publisher | a [`rs_impl::source::Pull`] countdown |
//! | `source::empty` | publisher | `max_elements_from_publisher() = 0`: only the 0-element tests run |
//!
//! Every entry uses `source::failed` as its failed publisher. `source::never` is not
//! registered: it cannot produce `n` elements for any `n`, nor complete.
//!
//! Subscribers and processors (module `subscribers`):
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `subscriber::collect(Unbounded)`, `(Prefetch(8))`, `(OneByOne)` | subscriber whitebox, blackbox | whitebox through [`ProbeReporting`](crate::subscriber::ProbeReporting); the puppet's `signal_cancel` is the handle's `cancel` |
//! | `subscriber::for_each(Prefetch(4))` | subscriber whitebox, blackbox | as above |
//! | `processor::IdentityProcessor` | identity processor | buffer 16, `does_coordinated_emission() = true`, failed publisher: a processor subscribed to `source::failed` |
//!
//! The async-Rust bridges and the push source (module `compat`): `compat::from_stream`,
//! `source::push(0)` and the round trip `to_stream → from_try_stream` (publisher);
//! `compat::sink_subscriber` and `compat::from_async` (subscriber whitebox and blackbox).

use rs_api::Error;
use rs_impl::source::{self, Pull, Pulled};

use crate::publisher::{self, BoxPublisher, PublisherFactory};
use crate::suite::Suite;

mod compat;
mod subscribers;

/// Every built-in implementation with its verification.
///
/// # Examples
///
/// ```
/// let suites = rs_tck::registry::builtins();
/// assert!(suites.iter().any(|s| s.implementation == "source::range"));
/// assert!(suites.iter().filter(|s| s.verification == "publisher").all(|s| s.tests.len() == 38));
/// ```
pub fn builtins() -> Vec<Suite> {
    let mut suites = vec![
        publisher::verify(
            "source::range",
            PublisherFactory::new(|n| Box::new(source::range(0..n))).with_failed(failed),
        ),
        publisher::verify(
            "source::from_iter",
            PublisherFactory::new(|n| Box::new(source::from_iter((0..n).map(|i| format!("e{i}")))))
                .with_failed(failed),
        ),
        publisher::verify(
            "source::from_fn",
            PublisherFactory::new(|n| Box::new(source::from_fn(move || 0..n))).with_failed(failed),
        ),
        publisher::verify(
            "source::from_pull",
            PublisherFactory::new(|n| Box::new(source::from_pull(move || Countdown(n))))
                .with_failed(failed),
        ),
        publisher::verify(
            "source::empty",
            PublisherFactory::new(|_| Box::new(source::empty::<u64>()))
                .with_max_elements(0)
                .with_failed(failed),
        ),
    ];
    suites.extend(subscribers::suites());
    suites.extend(compat::suites());
    suites
}

/// The failed publisher of every built-in entry.
fn failed<T: Send + 'static>() -> BoxPublisher<T> {
    Box::new(source::failed(Error::msg("rs-tck: the failed publisher")))
}

/// Emits `n - 1`, ..., `0`, then completes.
struct Countdown(u64);

impl Pull<u64> for Countdown {
    fn pull(&mut self) -> Pulled<u64> {
        if self.0 == 0 {
            return Pulled::Complete;
        }
        self.0 -= 1;
        Pulled::Next(self.0)
    }
}
