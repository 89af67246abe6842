//! A configurable multicast publisher: one shared ring buffer that grows, every subscriber
//! reading it at its own position — correct with `MulticastKnobs::default()`, broken in exactly
//! the ways its knobs say. It is the shape of the fanout (seed: Pekko's resizable multi-reader
//! ring buffer) in a few lines, so that each knob breaks one thing in one place.
//!
//! Elements are `u64` indices `0..n`, produced lazily as the fastest subscriber needs them. The
//! ring keeps every element from the slowest active subscriber's position up to the newest
//! one; when it is full it doubles. A subscriber that joins starts at the oldest element still
//! kept. Signals are made by one drain loop (a work-in-progress counter), with the state's lock
//! released around every call to a subscriber, so a subscriber may `request` from inside
//! `on_next`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rs_api::{BoxSubscriber, Publisher, SpecViolation, Subscription};
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

struct Core {
    knobs: MulticastKnobs,
    n: u64,
    /// Elements produced so far (the next one's index).
    produced: u64,
    /// Element `i` lives at `ring[i % ring.len()]`.
    ring: Vec<u64>,
    readers: Vec<Reader>,
    /// The `panic_stops_everyone` knob fired.
    stopped: bool,
}

impl Core {
    /// The position of the slowest active reader (the oldest element still needed).
    fn slowest(&self) -> u64 {
        self.readers
            .iter()
            .filter(|r| !r.done)
            .map(|r| r.cursor)
            .min()
            .unwrap_or(self.produced)
    }

    /// Produces the next element, growing the ring when it is full; `false` at the end.
    fn produce(&mut self) -> bool {
        if self.produced == self.n {
            return false;
        }
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
        self.ring[(self.produced % cap) as usize] = self.produced;
        self.produced += 1;
        true
    }
}

/// What one step of the drain loop does, outside the lock.
enum Call {
    Next(u64),
    Complete,
    Error,
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
            } else if cursor == core.n {
                Call::Complete
            } else if demand == 0 {
                continue;
            } else {
                if cursor == core.produced && !core.produce() {
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
                Call::Complete | Call::Error => r.done = true,
            }
            r.busy = true;
            let mut s = r.subscriber.take().expect("checked above");
            drop(core);
            let mut signal = || match call {
                Call::Next(x) => s.on_next(x),
                Call::Complete => s.on_complete(),
                Call::Error => s.on_error(SpecViolation::NonPositiveRequest.into()),
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
            shared: Arc::new(Shared {
                core: Mutex::new(Core {
                    knobs,
                    n,
                    produced: 0,
                    ring: vec![u64::MAX; INITIAL_CAPACITY],
                    readers: Vec::new(),
                    stopped: false,
                }),
                wip: AtomicUsize::new(0),
            }),
        }
    }
}

impl Publisher<u64> for Multicast {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        let index = {
            let mut core = self.shared.lock();
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
            shared: Arc::downgrade(&self.shared),
            index,
        });
        let ok = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(subscription))).is_ok();
        {
            let mut core = self.shared.lock();
            let r = &mut core.readers[index];
            r.busy = false;
            if ok {
                r.subscriber = Some(subscriber);
            } else {
                r.done = true;
            }
        }
        self.shared.drain();
    }
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
