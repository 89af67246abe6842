//! [`observe_on`]: a publisher's signals delivered on another executor, through the island's
//! input side (a hand-off ring of `prefetch`, replenished at 75 %).

use std::fmt;
use std::sync::Arc as StdArc;

use rs_api::Publisher;

use crate::boundary::Shared;
use crate::flow::{Build, Exit, Flow, FlowPublisher, RingEntry, RingIn, Shape, SharedPublisher};
use crate::island::{BuildError, Runtime};

/// The source of an [`observe_on`]: the publisher, read through a ring of `prefetch` that is
/// replenished once three quarters of it were taken (RxJava's `observeOn` limit).
pub(super) struct ObserveOnSource<T> {
    publisher: SharedPublisher<T>,
    prefetch: usize,
}

impl<T> Clone for ObserveOnSource<T> {
    fn clone(&self) -> Self {
        ObserveOnSource {
            publisher: self.publisher.clone(),
            prefetch: self.prefetch,
        }
    }
}

impl<T> fmt::Debug for ObserveOnSource<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObserveOnSource")
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

/// The replenish batch of a queue of `size` (RxJava's `observeOn`: `prefetch - prefetch / 4`).
pub(super) fn observe_on_batch(size: usize) -> usize {
    (size - size / 4).max(1)
}

impl<T: Send + 'static> Shape for ObserveOnSource<T> {
    type Out = T;

    fn place<X: Exit<T> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let shared = Shared::new(self.prefetch);
        let batch = observe_on_batch(shared.size());
        let ring = RingIn::with_batch(shared, Some(self.publisher.clone()), batch);
        b.segment(RingEntry::new(ring), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        1
    }
}

/// Delivers `publisher`'s signals on `runtime` (RxJava's `observeOn`, for a publisher that is
/// not in a [`Flow`]; inside a flow, an [async boundary](Flow::async_boundary_with) is the
/// same hand-off between islands).
///
/// Each subscription runs one island on `runtime`: it subscribes to `publisher`, prefetches
/// `prefetch` elements (rounded up to a power of two) into a ring of that size, replenishes
/// once three quarters of it were taken (`prefetch - prefetch / 4`), and hands the elements
/// to the subscriber from the island, serially. The contract is the flow publisher's
/// ([`Flow`]): `request` and `cancel` only post to the island; completion comes after every
/// element; an error overtakes what is buffered; an upstream that sends more than it was
/// asked for fails with [`IslandError::InputOverrun`](crate::island::IslandError::InputOverrun)
/// (a missing-backpressure error, nothing dropped silently). The ring is the subscription's
/// own, freed with it: no pool.
///
/// # Panics
///
/// If `prefetch` is 0.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::{merge, source, subscriber::{collect, RequestStrategy}, Runtime};
///
/// let runtime = Runtime::with_threads(1).unwrap();
/// let p = merge::observe_on(source::range(0u64..1000), &runtime, 128);
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap().len(), 1000);
/// ```
pub fn observe_on<T, P>(publisher: P, runtime: &Runtime, prefetch: usize) -> FlowPublisher<T>
where
    T: Send + 'static,
    P: Publisher<T> + Send + Sync + 'static,
{
    assert!(
        prefetch > 0,
        "observe_on: the prefetch must be at least one element"
    );
    let publisher: SharedPublisher<T> = StdArc::new(publisher);
    Flow::from_shape(ObserveOnSource {
        publisher,
        prefetch,
    })
    .into_publisher(runtime)
}
