//! A configurable multicast publisher and processor: one shared ring buffer that grows, every
//! subscriber reading it at its own position — correct with `MulticastKnobs::default()`, broken
//! in exactly the ways its knobs say. It is the shape of the fanout (Pekko's resizable
//! multi-reader ring buffer) in a few lines, so that each knob breaks one thing in one place.
//!
//! The publisher's elements are `u64` indices `0..n`, produced lazily as the fastest subscriber
//! needs them. The processor's come from its upstream, requested one at a time as the fastest
//! subscriber needs one, while the ring holds fewer than its capacity (it keeps what arrives
//! before its first subscriber). The ring keeps every element from the slowest active
//! subscriber's position up to the newest one; when it is full it doubles. A subscriber that
//! joins starts at the oldest element still kept. Signals are made by one drain loop (a
//! work-in-progress counter), with the state's lock released around every call to a
//! subscriber (and to the upstream), so a subscriber may `request` from inside `on_next`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
};
use rs_tck::processor::IdentityProcessorVerification;
use rs_tck::publisher::{PublisherVerification, SupportedSubscribers};

/// What to break. Every knob off: a correct multicast publisher.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MulticastKnobs {
    /// 1.11: when the ring grows, its slots are copied as they lie (not re-placed for the new
    /// capacity), so a subscriber behind the wrap point reads the wrong elements.
    pub(crate) grow_without_unwrapping: bool,
    /// 2.13: a subscriber's panic is caught, and the publisher stops for everyone.
    pub(crate) panic_stops_everyone: bool,
    /// 2.13: a subscriber's panic is not caught: it escapes into the caller of `request`, and
    /// the drain loop never runs again.
    pub(crate) unguarded: bool,
}

/// The ring's first capacity: small, so that 1000 elements make it grow eight times.
const INITIAL_CAPACITY: usize = 4;

struct Reader {
    subscriber: Option<BoxSubscriber<u64>>,
    /// The index of its next element.
    cursor: u64,
    demand: u64,
    /// A `request(0)` to answer with the rule 3.9 error.
    zero: bool,
    cancelled: bool,
    /// Ended: completed, failed, cancelled or panicked.
    done: bool,
    /// Being called right now (its subscriber is out of the state).
    busy: bool,
}

/// Where the elements come from.
enum Source {
    /// The publisher: element `i` is `i`, made when the fastest subscriber needs it; `n` in all.
    Generate { n: u64 },
    /// The processor: elements from its upstream.
    Upstream(Upstream),
}

#[derive(Default)]
struct Upstream {
    subscription: Option<SubscriptionRef>,
    /// One element requested and not yet received.
    requested: bool,
    /// `Some(Ok)` after `on_complete`, `Some(Err(message))` after `on_error`.
    end: Option<Result<(), String>>,
    /// The most elements the ring keeps.
    capacity: usize,
}

struct Core {
    knobs: MulticastKnobs,
    source: Source,
    /// Elements produced so far (the next one's index).
    produced: u64,
    /// The oldest element kept while no subscriber is active (a processor keeps what arrives
    /// before its first subscriber).
    base: u64,
    /// Element `i` lives at `ring[i % ring.len()]`.
    ring: Vec<u64>,
    readers: Vec<Reader>,
    /// The `panic_stops_everyone` knob fired.
    stopped: bool,
}

impl Core {
    fn new(knobs: MulticastKnobs, source: Source) -> Self {
        Core {
            knobs,
            source,
            produced: 0,
            base: 0,
            ring: vec![u64::MAX; INITIAL_CAPACITY],
            readers: Vec::new(),
            stopped: false,
        }
    }

    /// The position of the slowest active reader (the oldest element still needed).
    fn slowest(&self) -> u64 {
        self.readers
            .iter()
            .filter(|r| !r.done)
            .map(|r| r.cursor)
            .min()
            .unwrap_or(match self.source {
                Source::Generate { .. } => self.produced,
                Source::Upstream(_) => self.base,
            })
    }

    /// Produces the next element of the publisher, growing the ring when it is full; `false`
    /// at the end.
    fn produce(&mut self) -> bool {
        let Source::Generate { n } = self.source else {
            return false;
        };
        if self.produced == n {
            return false;
        }
        self.push(self.produced);
        true
    }

    /// Appends `value`, growing the ring when it is full.
    fn push(&mut self, value: u64) {
        let cap = self.ring.len();
        if (self.produced - self.slowest()) as usize == cap {
            let new_cap = cap * 2;
            let mut grown = vec![u64::MAX; new_cap];
            if self.knobs.grow_without_unwrapping {
                grown[..cap].copy_from_slice(&self.ring); // BUG: slots keep their old places
            } else {
                for i in self.slowest()..self.produced {
                    grown[(i % new_cap as u64) as usize] = self.ring[(i % cap as u64) as usize];
                }
            }
            self.ring = grown;
        }
        let cap = self.ring.len() as u64;
        self.ring[(self.produced % cap) as usize] = value;
        self.produced += 1;
    }

    /// Whether a reader at `cursor` has seen the whole stream: `Some(Ok)` to complete it,
    /// `Some(Err(message))` to fail it (an upstream error, at once), `None` while elements may
    /// come.
    fn end_for(&self, cursor: u64) -> Option<Result<(), String>> {
        match &self.source {
            Source::Generate { n } => (cursor == *n).then_some(Ok(())),
            Source::Upstream(up) => match &up.end {
                Some(Err(message)) => Some(Err(message.clone())),
                Some(Ok(())) if cursor == self.produced => Some(Ok(())),
                _ => None,
            },
        }
    }

    /// For a processor whose fastest reader wants an element not here yet: the subscription
    /// to request one from, if none is on its way and the ring has room for it.
    fn request_upstream(&mut self) -> Option<SubscriptionRef> {
        let kept = self.produced - self.slowest();
        let Source::Upstream(up) = &mut self.source else {
            return None;
        };
        if up.requested || up.end.is_some() || kept as usize >= up.capacity {
            return None;
        }
        let s = up.subscription.clone()?;
        up.requested = true;
        Some(s)
    }
}

/// What one step of the drain loop does, outside the lock.
enum Call {
    Next(u64),
    Complete,
    Error,
    Fail(String),
}

struct Shared {
    core: Mutex<Core>,
    wip: AtomicUsize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn drain(&self) {
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        let mut missed = 1;
        loop {
            while self.step() {}
            missed = self.wip.fetch_sub(missed, Ordering::AcqRel) - missed;
            if missed == 0 {
                break;
            }
        }
    }

    /// Makes one signal, if one is due; whether it did.
    fn step(&self) -> bool {
        let mut core = self.lock();
        if core.stopped {
            return false;
        }
        if core.readers.iter().any(|r| !r.done) {
            core.base = core.slowest();
        }
        for i in 0..core.readers.len() {
            let r = &core.readers[i];
            if r.done || r.busy || r.subscriber.is_none() {
                continue;
            }
            let (cancelled, zero, cursor, demand) = (r.cancelled, r.zero, r.cursor, r.demand);
            let call = if cancelled {
                let r = &mut core.readers[i];
                r.done = true;
                let s = r.subscriber.take();
                drop(core);
                drop(s); // 3.13
                return true;
            } else if zero {
                Call::Error
            } else if let Some(end) = core.end_for(cursor) {
                match end {
                    Ok(()) => Call::Complete,
                    Err(message) => Call::Fail(message),
                }
            } else if demand == 0 {
                continue;
            } else {
                if cursor == core.produced && !core.produce() {
                    if let Some(up) = core.request_upstream() {
                        drop(core);
                        up.request(1); // may deliver at once: on_next only records
                        return true;
                    }
                    continue;
                }
                let cap = core.ring.len() as u64;
                Call::Next(core.ring[(cursor % cap) as usize])
            };
            let knobs = core.knobs;
            let r = &mut core.readers[i];
            match call {
                Call::Next(_) => {
                    r.cursor += 1;
                    r.demand -= 1;
                }
                Call::Complete | Call::Error | Call::Fail(_) => r.done = true,
            }
            r.busy = true;
            let mut s = r.subscriber.take().expect("checked above");
            drop(core);
            let mut signal = || match &call {
                Call::Next(x) => s.on_next(*x),
                Call::Complete => s.on_complete(),
                Call::Error => s.on_error(SpecViolation::NonPositiveRequest.into()),
                Call::Fail(message) => s.on_error(Error::msg(message.clone())),
            };
            let panicked = if knobs.unguarded {
                signal();
                false
            } else {
                catch_unwind(AssertUnwindSafe(signal)).is_err()
            };
            let mut core = self.lock();
            let r = &mut core.readers[i];
            r.busy = false;
            if panicked {
                r.done = true;
                if knobs.panic_stops_everyone {
                    core.stopped = true; // BUG: one subscriber's panic ends everyone's stream
                }
                drop(core);
                let _ = catch_unwind(AssertUnwindSafe(|| drop(s)));
            } else if r.done {
                drop(core);
                drop(s);
            } else {
                r.subscriber = Some(s);
            }
            return true;
        }
        false
    }
}

struct ReaderSubscription {
    shared: Weak<Shared>,
    index: usize,
}

impl Subscription for ReaderSubscription {
    fn request(&self, n: u64) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        {
            let mut core = shared.lock();
            let r = &mut core.readers[self.index];
            if r.done || r.cancelled {
                return;
            }
            if n == 0 {
                r.zero = true;
            } else {
                r.demand = r.demand.saturating_add(n);
            }
        }
        shared.drain();
    }

    fn cancel(&self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        shared.lock().readers[self.index].cancelled = true;
        shared.drain();
    }
}

/// The multicast publisher of `0..n`.
pub(crate) struct Multicast {
    shared: Arc<Shared>,
}

impl Multicast {
    pub(crate) fn new(n: u64, knobs: MulticastKnobs) -> Self {
        Multicast {
            shared: Shared::new(Core::new(knobs, Source::Generate { n })),
        }
    }
}

impl Shared {
    fn new(core: Core) -> Arc<Shared> {
        Arc::new(Shared {
            core: Mutex::new(core),
            wip: AtomicUsize::new(0),
        })
    }
}

impl Publisher<u64> for Multicast {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        subscribe(&self.shared, subscriber);
    }
}

fn subscribe(shared: &Arc<Shared>, mut subscriber: BoxSubscriber<u64>) {
    let index = {
        let mut core = shared.lock();
        let start = core.slowest();
        core.readers.push(Reader {
            subscriber: None,
            cursor: start,
            demand: 0,
            zero: false,
            cancelled: false,
            done: false,
            busy: true,
        });
        core.readers.len() - 1
    };
    let subscription = Arc::new(ReaderSubscription {
        shared: Arc::downgrade(shared),
        index,
    });
    let ok = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(subscription))).is_ok();
    {
        let mut core = shared.lock();
        let r = &mut core.readers[index];
        r.busy = false;
        if ok {
            r.subscriber = Some(subscriber);
        } else {
            r.done = true;
        }
    }
    shared.drain();
}

/// A publisher verification over [`Multicast`], declaring multiple subscribers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BrokenMulticast(pub(crate) MulticastKnobs);

impl PublisherVerification for BrokenMulticast {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        Multicast::new(elements, self.0)
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
}

/// The multicast processor: a `Clone` handle; its clones are the same processor.
#[derive(Clone)]
pub(crate) struct MulticastProcessor {
    shared: Arc<Shared>,
}

impl MulticastProcessor {
    /// A processor keeping at most `capacity` elements (a power of two, at least
    /// [`INITIAL_CAPACITY`]: its ring grows from that up to `capacity`).
    pub(crate) fn new(capacity: usize, knobs: MulticastKnobs) -> Self {
        assert!(capacity.is_power_of_two() && capacity >= INITIAL_CAPACITY);
        let source = Source::Upstream(Upstream {
            capacity,
            ..Upstream::default()
        });
        MulticastProcessor {
            shared: Shared::new(Core::new(knobs, source)),
        }
    }

    fn upstream(&self, f: impl FnOnce(&mut Upstream)) {
        if let Source::Upstream(up) = &mut self.shared.lock().source {
            f(up);
        }
        self.shared.drain();
    }
}

impl Publisher<u64> for MulticastProcessor {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        subscribe(&self.shared, subscriber);
    }
}

impl Subscriber<u64> for MulticastProcessor {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let mut second = None;
        self.upstream(|up| {
            if up.subscription.is_some() {
                second = Some(subscription); // 2.5
            } else {
                up.subscription = Some(subscription);
            }
        });
        if let Some(s) = second {
            s.cancel();
        }
    }

    fn on_next(&mut self, item: u64) {
        {
            let mut core = self.shared.lock();
            if let Source::Upstream(up) = &mut core.source {
                up.requested = false;
            }
            core.push(item);
        }
        self.shared.drain();
    }

    fn on_error(&mut self, error: Error) {
        self.upstream(|up| {
            up.end = Some(Err(error.to_string()));
            up.subscription = None;
        });
    }

    fn on_complete(&mut self) {
        self.upstream(|up| {
            up.end = Some(Ok(()));
            up.subscription = None;
        });
    }
}

/// An identity-processor verification over [`MulticastProcessor`] (any number of subscribers,
/// each at its own pace), with a buffer of [`GROWING_PROCESSOR_BUFFER`]: its ring starts at
/// [`INITIAL_CAPACITY`] and grows while the growth check's readers sit at different positions.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BrokenMulticastProcessor(pub(crate) MulticastKnobs);

/// The buffer of [`BrokenMulticastProcessor`]: room for the growth check's lagging subscriber
/// to fall behind by more than the ring's first sizes.
pub(crate) const GROWING_PROCESSOR_BUFFER: usize = 256;

impl IdentityProcessorVerification for BrokenMulticastProcessor {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl rs_api::Processor<u64, u64> + Clone + Send + 'static {
        MulticastProcessor::new(
            buffer_size.next_power_of_two().max(INITIAL_CAPACITY),
            self.0,
        )
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn processor_buffer_size(&self) -> usize {
        GROWING_PROCESSOR_BUFFER
    }
}
