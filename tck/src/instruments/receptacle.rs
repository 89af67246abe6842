//! [`Receptacle`]: a bounded, waitable queue.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A bounded queue that test code waits on with a timeout (the JVM TCK's `Receptacle`, minus
/// the end-of-stream marker, which [`ManualSubscriber`](super::ManualSubscriber) keeps as a
/// [`Signal`](super::Signal)). Producers never block: a push into a full queue is refused.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// let r = rs_tck::instruments::Receptacle::new(2);
/// assert!(r.push(1).is_ok());
/// assert!(r.push(2).is_ok());
/// assert_eq!(r.push(3), Err(3)); // full
/// assert_eq!(r.poll(Duration::ZERO), Some(1));
/// assert_eq!(r.len(), 1);
/// ```
#[derive(Debug)]
pub struct Receptacle<T> {
    capacity: usize,
    queue: Mutex<VecDeque<T>>,
    pushed: Condvar,
}

/// The JVM TCK's capacity: 2 × its `TEST_BUFFER_SIZE` of 16.
pub(crate) const DEFAULT_CAPACITY: usize = 32;

impl<T> Receptacle<T> {
    /// An empty queue holding at most `capacity` items.
    pub fn new(capacity: usize) -> Self {
        Receptacle {
            capacity,
            queue: Mutex::new(VecDeque::new()),
            pushed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `item`, or gives it back if the queue is full.
    ///
    /// # Errors
    ///
    /// The item, when the queue holds `capacity` items already.
    pub fn push(&self, item: T) -> Result<(), T> {
        let mut q = self.lock();
        if q.len() >= self.capacity {
            return Err(item);
        }
        q.push_back(item);
        drop(q);
        self.pushed.notify_all();
        Ok(())
    }

    /// Appends `item` even when the queue is full (for terminal signals, which must never be
    /// refused).
    pub(crate) fn push_unbounded(&self, item: T) {
        self.lock().push_back(item);
        self.pushed.notify_all();
    }

    /// Takes the oldest item, waiting up to `timeout` for one.
    pub fn poll(&self, timeout: Duration) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut q = self.lock();
        loop {
            if let Some(item) = q.pop_front() {
                return Some(item);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            q = self
                .pushed
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The number of items queued.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}
