//! `rs_impl::source`'s publishers, each with `source::failed` as its failed publisher, in the
//! publisher verification and in the loom mode (where `source::empty`'s scenarios are skipped:
//! they need elements). All are cold (a fresh run per subscriber), so each declares multiple
//! subscribers: the 1.11 tests are required of them.
//! `source::never` is not registered: it cannot produce `n` elements for any `n`, nor complete.
//!
//! | implementation | notes |
//! |---|---|
//! | `source::range` | `range(0..n)` |
//! | `source::from_iter` | a cloneable lazy iterator of `String`s |
//! | `source::from_fn` | a fresh iterator per subscription |
//! | `source::from_pull` | a [`Pull`] countdown |
//! | `source::empty` | `max_elements_from_publisher() = 0`: only the 0-element tests run |

use std::fmt;
use std::marker::PhantomData;

use rs_api::{BoxPublisher, Error, Publisher};
use rs_impl::source::{self, Pull, Pulled};
use rs_tck::loom;
use rs_tck::publisher::{
    self, PublisherVerification, SupportedSubscribers, DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER,
};
use rs_tck::suite::Suite;

/// The publisher suites.
pub(crate) fn suites() -> Vec<Suite> {
    each().into_iter().map(|[tck, _]| tck).collect()
}

/// The loom suites, over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    each().into_iter().map(|[_, loom]| loom).collect()
}

/// Each source's publisher verification and loom suite.
fn each() -> Vec<[Suite; 2]> {
    vec![
        both(
            "source::range",
            Source::new(|n| Box::new(source::range(0..n))),
        ),
        both(
            "source::from_iter",
            Source::new(|n| Box::new(source::from_iter((0..n).map(|i| format!("e{i}"))))),
        ),
        both(
            "source::from_fn",
            Source::new(|n| Box::new(source::from_fn(move || 0..n))),
        ),
        both(
            "source::from_pull",
            Source::new(|n| Box::new(source::from_pull(move || Countdown(n)))),
        ),
        both(
            "source::empty",
            Source {
                max_elements: 0,
                ..Source::new(|_| Box::new(source::empty::<u64>()))
            },
        ),
    ]
}

/// The publisher verification and the loom suite of `v`.
fn both<V: PublisherVerification + Clone>(name: &str, v: V) -> [Suite; 2] {
    [
        publisher::verify(name, v.clone()),
        loom::verify_publisher(name, v),
    ]
}

/// A source's verification: `create(n)`, with `source::failed` as the failed publisher.
#[derive(Clone)]
struct Source<T, F> {
    create: F,
    max_elements: u64,
    _item: PhantomData<fn() -> T>,
}

impl<T, F: Fn(u64) -> BoxPublisher<T>> Source<T, F> {
    fn new(create: F) -> Self {
        Source {
            create,
            max_elements: DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER,
            _item: PhantomData,
        }
    }
}

impl<T, F> PublisherVerification for Source<T, F>
where
    T: Send + fmt::Debug + PartialEq + 'static,
    F: Fn(u64) -> BoxPublisher<T> + Send + Sync + 'static,
{
    type Item = T;

    fn create_publisher(&self, elements: u64) -> impl Publisher<T> + Send + 'static {
        (self.create)(elements)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<T> + Send + 'static> {
        Some(source::failed(Error::msg("rs-tck: the failed publisher")))
    }

    fn max_elements_from_publisher(&self) -> u64 {
        self.max_elements
    }

    /// Cold: every subscriber gets its own run (the 1.11 tests are required).
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
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
