//! [`FanoutStats`]: a fanout's state and work counters, as its last drain pass published them.

use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A snapshot of a fanout, as published by its last drain pass.
///
/// The counters make the cost visible: in steady state `cursor_reads` grows by about one per
/// element whatever the number of subscribers (the ring reads the reader count of the oldest
/// slot, never the cursors), and `demand_reads` by at most one per delivery (a subscriber's
/// demand is re-read only when its cached total is used up), never by a scan of every
/// subscription.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (tx, p) = fanout::channel::<u8>(16);
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// tx.try_send(1).unwrap();
/// let stats = p.stats();
/// assert_eq!((stats.subscribers, stats.elements, stats.deliveries), (1, 1, 1));
/// tx.complete();
/// r.wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FanoutStats {
    /// Current subscribers.
    pub subscribers: usize,
    /// Elements retained in the buffer.
    pub buffered: usize,
    /// The buffer's current array length.
    pub capacity: usize,
    /// The buffer's capacity (its largest length).
    pub max_capacity: usize,
    /// Elements written into the buffer so far.
    pub elements: u64,
    /// `on_next` calls made so far, over all subscribers.
    pub deliveries: u64,
    /// Reader positions the buffer examined to reclaim slots.
    pub cursor_reads: u64,
    /// Times a subscriber's demand was read (or, in a scanning design, examined).
    pub demand_reads: u64,
}

/// The published statistics: plain stores by the drainer, loads by anyone.
#[derive(Default)]
pub(super) struct Stats {
    pub(super) subscribers: AtomicUsize,
    pub(super) buffered: AtomicUsize,
    pub(super) capacity: AtomicUsize,
    pub(super) elements: AtomicU64,
    pub(super) deliveries: AtomicU64,
    pub(super) cursor_reads: AtomicU64,
    pub(super) demand_reads: AtomicU64,
}

impl Stats {
    /// The snapshot, with the configured `max_capacity`.
    pub(super) fn snapshot(&self, max_capacity: usize) -> FanoutStats {
        FanoutStats {
            subscribers: self.subscribers.load(Ordering::Relaxed),
            buffered: self.buffered.load(Ordering::Relaxed),
            capacity: self.capacity.load(Ordering::Relaxed),
            max_capacity,
            elements: self.elements.load(Ordering::Relaxed),
            deliveries: self.deliveries.load(Ordering::Relaxed),
            cursor_reads: self.cursor_reads.load(Ordering::Relaxed),
            demand_reads: self.demand_reads.load(Ordering::Relaxed),
        }
    }
}
