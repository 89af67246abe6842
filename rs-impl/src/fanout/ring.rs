//! The resizable multi-reader ring buffer behind the fanout.
//!
//! # Lineage
//!
//! Pekko's `ResizableMultiReaderRingBuffer` (the fanout publisher's buffer since Akka, moved
//! into a `GraphStage` by Pekko PR #2874), with the fix of Pekko PR #3730:
//! Pekko found the new oldest position by scanning **every** cursor on each read of the oldest
//! element, O(K²) per element for K readers in lock-step; #3730 counts the readers sitting at
//! the oldest position and scans only when that count reaches zero. This buffer goes one step
//! further: it keeps a reader count for
//! **every** live slot, so the count at the oldest position is exact at all times and
//! reclaiming never scans a cursor: when the oldest count drops to zero, the oldest position
//! walks forward over slots whose count is zero, dropping each element as it passes. Amortised
//! O(1) per element whatever the number of readers.
//!
//! # Positions
//!
//! Every element has a **position**: the number of elements written before it (plus the
//! starting position, normally 0). Positions are free-running `u64`s compared only through
//! wrapping differences (`pos.wrapping_sub(read) < len`), so they may wrap; the tests start
//! them just below `u64::MAX`. A position's slot is `pos & mask`. A reader's **cursor** is the
//! position of the next element it will read; the fanout keeps the cursors (next to the rest of
//! each subscriber's hot state) and reports every move to the buffer in one call per drain
//! pass ([`Ring::moved`]), so the buffer's bookkeeping is one decrement and one increment per
//! reader per pass, not per element.
//!
//! # Growth
//!
//! The array starts at the initial capacity and doubles when a write finds it full, up to the
//! maximum; a write at the maximum fails and hands the element back. It never shrinks. Pekko
//! copies the live region out unwrapped and rebases every cursor by the old oldest position,
//! because its slot index is its counter `AND` mask of the *old* array. With free-running
//! 64-bit positions neither is needed: growth moves each live element (and its reader count)
//! to `pos & new_mask`, positions never change, so no cursor is touched and growth costs
//! O(live elements), independent of the number of readers.
//!
//! # Fields and invariants
//!
//! With `len = write - read` (wrapping):
//!
//! 1. `slots.len() == counts.len()` is a power of two between the initial and the maximum
//!    capacity, and `mask == slots.len() - 1`; `len <= slots.len()`.
//! 2. A slot holds `Some` exactly when its position is in `[read, write)`.
//! 3. Every reader's cursor is in `[read, write]`. `counts[pos & mask]` is the number of
//!    readers whose cursor is `pos` for `pos` in `[read, write)`, and `caught_up` is the number
//!    whose cursor is `write`. The counts of slots outside `[read, write)` are 0. So
//!    `sum(counts) + caught_up == readers`.
//! 4. With at least one reader, `read == write` or `counts[read & mask] > 0`: the oldest
//!    element is one some reader still needs. With no reader nothing is reclaimed: the
//!    elements wait for the next reader, who starts at `read` (a late subscriber sees the
//!    oldest retained element, as in Pekko's fanout).
//! 5. `released` counts the elements ever reclaimed or cleared: `written - released == len`,
//!    which is what a producer outside the drain loop uses to know the free space.

use crate::panics;

/// A resizable ring of elements read by several cursors. See the [module docs](self).
pub(crate) struct Ring<T> {
    /// The elements at positions `[read, write)`, at `pos & mask`; `None` elsewhere.
    slots: Box<[Option<T>]>,
    /// Readers whose cursor is the slot's position (invariant 3).
    counts: Box<[u32]>,
    /// Readers whose cursor is `write` (caught up; no slot yet).
    caught_up: u32,
    /// Readers in all.
    readers: u32,
    /// `slots.len() - 1`.
    mask: u64,
    /// The oldest retained position.
    read: u64,
    /// The position the next write takes.
    write: u64,
    /// The capacity growth stops at (a power of two).
    max: usize,
    /// Elements reclaimed or cleared so far (invariant 5).
    released: u64,
    /// Reader positions examined to reclaim: one per slot count the reclaim walk reads. Seen by
    /// tests through the fanout's statistics (the complexity regression).
    cursor_reads: u64,
    /// The test-only quadratic variant (Pekko before #3730), for showing that the complexity
    /// regression catches O(K²).
    #[cfg(test)]
    scan: Option<Vec<u64>>,
}

impl<T> std::fmt::Debug for Ring<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.slots.len())
            .field("max", &self.max)
            .field("read", &self.read)
            .field("write", &self.write)
            .field("readers", &self.readers)
            .finish_non_exhaustive()
    }
}

fn empty_slots<T>(n: usize) -> Box<[Option<T>]> {
    std::iter::repeat_with(|| None).take(n).collect()
}

impl<T> Ring<T> {
    /// An empty ring of `initial` slots that grows up to `max`, whose first element gets
    /// position `start`. Both sizes must be powers of two with `0 < initial <= max` (the
    /// fanout's configuration guarantees it).
    pub(crate) fn new(initial: usize, max: usize, start: u64) -> Self {
        debug_assert!(initial.is_power_of_two() && max.is_power_of_two() && initial <= max);
        Ring {
            slots: empty_slots(initial),
            counts: vec![0; initial].into_boxed_slice(),
            caught_up: 0,
            readers: 0,
            mask: initial as u64 - 1,
            read: start,
            write: start,
            max,
            released: 0,
            cursor_reads: 0,
            #[cfg(test)]
            scan: None,
        }
    }

    /// The test-only quadratic variant: reclaims like Pekko before #3730, scanning every
    /// cursor on each read of the oldest position.
    #[cfg(test)]
    pub(crate) fn quadratic(mut self) -> Self {
        self.scan = Some(Vec::new());
        self
    }

    /// Elements retained.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.write.wrapping_sub(self.read) as usize
    }

    /// The current array length.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The maximum capacity.
    #[cfg(test)]
    pub(crate) fn max_capacity(&self) -> usize {
        self.max
    }

    /// Free space allowing for growth: `max - len` (Pekko's `maxAvailable`).
    #[inline]
    pub(crate) fn free(&self) -> usize {
        self.max - self.len()
    }

    /// The number of readers.
    #[inline]
    pub(crate) fn readers(&self) -> usize {
        self.readers as usize
    }

    /// The oldest retained position.
    #[cfg(test)]
    pub(crate) fn read_pos(&self) -> u64 {
        self.read
    }

    /// The position the next write takes.
    #[inline]
    pub(crate) fn write_pos(&self) -> u64 {
        self.write
    }

    /// Elements reclaimed or cleared so far.
    #[inline]
    pub(crate) fn released(&self) -> u64 {
        self.released
    }

    /// Reader positions examined to reclaim so far.
    pub(crate) fn cursor_reads(&self) -> u64 {
        self.cursor_reads
    }

    /// The element at `pos`, or `None` when `pos` is not retained (nothing to read there yet,
    /// or already reclaimed). Never panics.
    #[inline]
    pub(crate) fn get(&self, pos: u64) -> Option<&T> {
        if pos.wrapping_sub(self.read) >= self.write.wrapping_sub(self.read) {
            return None;
        }
        self.slots[(pos & self.mask) as usize].as_ref()
    }

    /// Whether nothing is retained.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.read == self.write
    }

    /// Counts an element that every reader read as it was written, without storing it: leaves
    /// the buffer exactly as [`write`](Self::write) followed by
    /// [`moved_many`](Self::moved_many)`(at, at + 1, readers)` would (the position advances,
    /// the element counts as released, and the reclaim's one look at the slot count is one
    /// cursor read), without touching a slot. Only for an empty buffer whose readers are all
    /// caught up, and never in the test-only quadratic variant.
    #[inline]
    pub(crate) fn pass_through(&mut self) {
        debug_assert!(self.is_empty() && self.readers > 0 && self.caught_up == self.readers);
        #[cfg(test)]
        debug_assert!(self.scan.is_none());
        self.write = self.write.wrapping_add(1);
        self.read = self.write;
        self.released += 1;
        self.cursor_reads += 1;
    }

    /// Appends `value`, growing the array if it is full and below the maximum.
    ///
    /// # Errors
    ///
    /// `value` itself when the buffer holds the maximum already.
    pub(crate) fn write(&mut self, value: T) -> Result<(), T> {
        if self.len() == self.slots.len() {
            if self.slots.len() >= self.max {
                return Err(value);
            }
            self.grow();
        }
        let i = (self.write & self.mask) as usize;
        debug_assert!(self.slots[i].is_none() && self.counts[i] == 0);
        self.slots[i] = Some(value);
        // The caught-up readers now sit at the new element's position.
        self.counts[i] = self.caught_up;
        self.caught_up = 0;
        self.write = self.write.wrapping_add(1);
        Ok(())
    }

    /// Doubles the array, moving each live element and its count to `pos & new_mask`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        let mut slots = empty_slots(cap);
        let mut counts = vec![0u32; cap].into_boxed_slice();
        let new_mask = cap as u64 - 1;
        let mut pos = self.read;
        while pos != self.write {
            let (old, new) = ((pos & self.mask) as usize, (pos & new_mask) as usize);
            slots[new] = self.slots[old].take();
            counts[new] = self.counts[old];
            pos = pos.wrapping_add(1);
        }
        self.slots = slots;
        self.counts = counts;
        self.mask = new_mask;
    }

    /// Adds a reader at the oldest retained position; returns its cursor.
    pub(crate) fn join(&mut self) -> u64 {
        self.readers += 1;
        let pos = self.read;
        self.inc(pos, 1);
        #[cfg(test)]
        if let Some(scan) = &mut self.scan {
            scan.push(pos);
        }
        pos
    }

    /// Removes the reader whose cursor is `pos`; the elements only it still needed are dropped
    /// at once. The last reader to leave takes with it what it has read (every reader there was
    /// has read it) and leaves the rest, from its cursor on, for the next reader.
    pub(crate) fn leave(&mut self, pos: u64) {
        self.dec(pos, 1);
        self.readers -= 1;
        #[cfg(test)]
        if let Some(scan) = &mut self.scan {
            let i = scan
                .iter()
                .position(|&c| c == pos)
                .expect("a reader at pos");
            scan.swap_remove(i);
        }
        if self.readers == 0 {
            while self.read != pos {
                self.cursor_reads += 1;
                let i = (self.read & self.mask) as usize;
                self.drop_slot(i);
                self.read = self.read.wrapping_add(1);
                self.released += 1;
            }
        } else if pos == self.read {
            self.reclaim();
        }
    }

    /// Moves one reader's cursor from `from` to `to` (it read `to - from` elements); reclaims
    /// what no reader needs any more. One call per reader per drain pass.
    #[inline]
    pub(crate) fn moved(&mut self, from: u64, to: u64) {
        self.moved_many(from, to, 1);
    }

    /// Moves `n` readers whose cursors are all `from` to `to`: one count update for all of them
    /// (the fanout's group of caught-up subscribers, which read each new element together).
    #[inline]
    pub(crate) fn moved_many(&mut self, from: u64, to: u64, n: u32) {
        if from == to || n == 0 {
            return;
        }
        #[cfg(test)]
        if self.scan.is_some() {
            for _ in 0..n {
                self.moved_scanning(from, to);
            }
            return;
        }
        self.dec(from, n);
        self.inc(to, n);
        if from == self.read {
            self.reclaim();
        }
    }

    #[inline]
    fn inc(&mut self, pos: u64, n: u32) {
        if pos == self.write {
            self.caught_up += n;
        } else {
            self.counts[(pos & self.mask) as usize] += n;
        }
    }

    #[inline]
    fn dec(&mut self, pos: u64, n: u32) {
        if pos == self.write {
            self.caught_up -= n;
        } else {
            self.counts[(pos & self.mask) as usize] -= n;
        }
    }

    /// Walks the oldest position forward over slots no reader is at, dropping each element.
    /// Does nothing without readers (invariant 4). Each slot count read is one cursor read.
    #[inline]
    fn reclaim(&mut self) {
        if self.readers == 0 {
            return;
        }
        while self.read != self.write {
            self.cursor_reads += 1;
            let i = (self.read & self.mask) as usize;
            if self.counts[i] != 0 {
                break;
            }
            self.drop_slot(i);
            self.read = self.read.wrapping_add(1);
            self.released += 1;
        }
    }

    fn drop_slot(&mut self, i: usize) {
        let value = self.slots[i].take();
        if std::mem::needs_drop::<T>() {
            // An element's `Drop` is user code: a panic there must not unwind the drain loop.
            panics::drop_guarded(value);
        }
    }

    /// Drops every retained element (the fanout failed or shut down). Only without readers.
    pub(crate) fn clear(&mut self) {
        debug_assert_eq!(self.readers, 0, "clear with readers");
        while self.read != self.write {
            let i = (self.read & self.mask) as usize;
            self.counts[i] = 0;
            self.drop_slot(i);
            self.read = self.read.wrapping_add(1);
            self.released += 1;
        }
        self.caught_up = 0;
    }

    /// Pekko before #3730: every read at the oldest position scans every cursor for the new
    /// minimum (`updateReadIx`). The counts are kept too, so the invariants still hold.
    #[cfg(test)]
    fn moved_scanning(&mut self, from: u64, to: u64) {
        self.dec(from, 1);
        self.inc(to, 1);
        let mut scan = self.scan.take().expect("scanning variant");
        // Per element read, as Pekko's `read` does it.
        let mut pos = from;
        let i = scan
            .iter()
            .position(|&c| c == from)
            .expect("a reader at from");
        while pos != to {
            pos = pos.wrapping_add(1);
            let at_oldest = scan[i] == self.read;
            scan[i] = pos;
            if at_oldest {
                let mut min = self.write.wrapping_sub(self.read);
                for &c in scan.iter() {
                    self.cursor_reads += 1;
                    min = min.min(c.wrapping_sub(self.read));
                }
                for _ in 0..min {
                    let i = (self.read & self.mask) as usize;
                    self.drop_slot(i);
                    self.read = self.read.wrapping_add(1);
                    self.released += 1;
                }
            }
        }
        self.scan = Some(scan);
    }

    /// Checks invariants 1–4 (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let len = self.len();
        assert!(self.slots.len().is_power_of_two() && len <= self.slots.len());
        assert_eq!(self.mask, self.slots.len() as u64 - 1);
        let mut sum = u64::from(self.caught_up);
        for (i, slot) in self.slots.iter().enumerate() {
            let live = (i as u64).wrapping_sub(self.read) & self.mask < len as u64;
            assert_eq!(slot.is_some(), live, "slot {i}: live {live}");
            if !live {
                assert_eq!(self.counts[i], 0, "count of dead slot {i}");
            }
            sum += u64::from(self.counts[i]);
        }
        assert_eq!(sum, u64::from(self.readers), "counts and readers disagree");
        if self.readers > 0 && len > 0 {
            assert!(
                self.counts[(self.read & self.mask) as usize] > 0,
                "nobody at oldest"
            );
        }
    }

    /// The raw slots, oldest array index first (tests compare layouts like Pekko's spec).
    #[cfg(test)]
    pub(crate) fn raw(&self) -> Vec<Option<&T>> {
        self.slots.iter().map(Option::as_ref).collect()
    }
}
