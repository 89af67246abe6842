//! The ring buffer: our versions of the six cases of Pekko's `ResizableMultiReaderRingBufferSpec`
//! (Pekko PR #3730), each checking the raw slots plus (length, write position,
//! read position, readers) and the invariants after every step; and the same near the `u64`
//! wrap point.

use super::Rng;
use crate::fanout::ring::Ring;

/// A reader as the fanout keeps one: a cursor outside the ring.
struct Cursor(u64);

impl Cursor {
    fn join<T>(ring: &mut Ring<T>) -> Cursor {
        Cursor(ring.join())
    }

    /// Reads one element: `None` when there is nothing to read (never a panic).
    fn read<T: Clone>(&mut self, ring: &mut Ring<T>) -> Option<T> {
        let v = ring.get(self.0).cloned()?;
        ring.moved(self.0, self.0.wrapping_add(1));
        self.0 = self.0.wrapping_add(1);
        ring.check();
        Some(v)
    }
}

/// `(len, write, read, readers)` relative to `start`, as Pekko's spec checks them.
fn shape<T>(ring: &Ring<T>, start: u64) -> (usize, u64, u64, usize) {
    (
        ring.len(),
        ring.write_pos().wrapping_sub(start),
        ring.read_pos().wrapping_sub(start),
        ring.readers(),
    )
}

/// The raw slots, `0` for an empty one.
fn raw(ring: &Ring<u32>) -> Vec<u32> {
    ring.raw()
        .into_iter()
        .map(|v| v.copied().unwrap_or(0))
        .collect()
}

fn write(ring: &mut Ring<u32>, v: u32) -> bool {
    let ok = ring.write(v).is_ok();
    ring.check();
    ok
}

/// Positions starting at 0, and starting 3 below the `u64` wrap point.
const STARTS: [u64; 2] = [0, u64::MAX - 2];

#[test]
fn initially_empty_with_one_cursor() {
    for start in STARTS {
        let mut ring = Ring::<u32>::new(2, 4, start);
        let mut c = Cursor::join(&mut ring);
        ring.check();
        assert_eq!(shape(&ring, start), (0, 0, 0, 1));
        assert_eq!(raw(&ring), [0, 0]);
        assert_eq!((ring.capacity(), ring.max_capacity()), (2, 4));
        assert_eq!(c.read(&mut ring), None);
    }
}

#[test]
fn initially_empty_with_three_cursors() {
    for start in STARTS {
        let mut ring = Ring::<u32>::new(4, 4, start);
        let mut cs: Vec<Cursor> = (0..3).map(|_| Cursor::join(&mut ring)).collect();
        assert_eq!(shape(&ring, start), (0, 0, 0, 3));
        assert_eq!(raw(&ring), [0, 0, 0, 0]);
        for c in &mut cs {
            assert_eq!(c.read(&mut ring), None);
        }
    }
}

#[test]
fn reads_fail_when_nothing_can_be_read_and_only_the_slowest_frees() {
    for start in STARTS {
        let mut ring = Ring::<u32>::new(4, 4, start);
        let (mut c1, mut c2, mut c3) = (
            Cursor::join(&mut ring),
            Cursor::join(&mut ring),
            Cursor::join(&mut ring),
        );
        assert!(write(&mut ring, 1));
        assert!(write(&mut ring, 2));
        assert_eq!(shape(&ring, start), (2, 2, 0, 3));
        assert_eq!(c1.read(&mut ring), Some(1));
        assert_eq!(c1.read(&mut ring), Some(2));
        assert_eq!(c1.read(&mut ring), None); // past the write position: nothing, no panic
        assert_eq!(c2.read(&mut ring), Some(1));
        // c3 has not read 1: nothing is reclaimed yet.
        assert_eq!(shape(&ring, start).2, 0);
        assert_eq!(c3.read(&mut ring), Some(1));
        // The slowest read 1: the slot is dropped at once.
        assert_eq!(shape(&ring, start), (1, 2, 1, 3));
        assert_eq!(raw(&ring)[((start) & 3) as usize], 0);
        assert_eq!(c2.read(&mut ring), Some(2));
        assert_eq!(c3.read(&mut ring), Some(2));
        assert_eq!(shape(&ring, start), (0, 2, 2, 3));
        assert_eq!(raw(&ring), [0, 0, 0, 0]);
        for c in [&mut c1, &mut c2, &mut c3] {
            assert_eq!(c.read(&mut ring), None);
        }
    }
}

#[test]
fn writes_fail_when_full_until_every_cursor_moved() {
    let mut ring = Ring::<u32>::new(4, 4, 0);
    let (mut a, mut b) = (Cursor::join(&mut ring), Cursor::join(&mut ring));
    for v in 1..=4 {
        assert!(write(&mut ring, v));
    }
    assert!(!write(&mut ring, 5), "full at the maximum");
    assert_eq!(ring.write(5), Err(5), "the element comes back");
    assert_eq!(a.read(&mut ring), Some(1));
    assert!(!write(&mut ring, 5), "b still needs 1");
    assert_eq!(b.read(&mut ring), Some(1));
    assert!(write(&mut ring, 5));
    assert_eq!(raw(&ring), [5, 2, 3, 4]);
    for _ in 0..1 {
        assert_eq!(a.read(&mut ring), Some(2));
        assert_eq!(b.read(&mut ring), Some(2));
    }
    assert!(write(&mut ring, 6));
    assert_eq!(raw(&ring), [5, 6, 3, 4]); // wrapped: Pekko's "5 6 3 4"
    assert_eq!(shape(&ring, 0), (4, 6, 2, 2));
    for v in 3..=6 {
        assert_eq!(a.read(&mut ring), Some(v));
        assert_eq!(b.read(&mut ring), Some(v));
    }
    for v in 7..=9 {
        assert!(write(&mut ring, v));
    }
    assert_eq!(raw(&ring), [9, 0, 7, 8]); // Pekko's "9 _ 7 8"
    assert_eq!(a.read(&mut ring), Some(7));
    assert_eq!(b.read(&mut ring), Some(7));
    assert_eq!(raw(&ring), [9, 0, 0, 8]); // 7 read by both: dropped
    assert_eq!(shape(&ring, 0), (2, 9, 7, 2));
    for v in 8..=9 {
        assert_eq!(a.read(&mut ring), Some(v));
        assert_eq!(b.read(&mut ring), Some(v));
    }
    // Read to empty: every slot dropped.
    assert_eq!(raw(&ring), [0, 0, 0, 0]);
    assert_eq!(ring.len(), 0);
}

#[test]
fn grows_when_full_below_the_maximum() {
    for start in STARTS {
        let mut ring = Ring::<u32>::new(2, 8, start);
        let (mut a, mut b) = (Cursor::join(&mut ring), Cursor::join(&mut ring));
        assert!(write(&mut ring, 1));
        assert!(write(&mut ring, 2));
        assert_eq!(ring.capacity(), 2);
        assert!(write(&mut ring, 3), "grows 2 -> 4 on the third write");
        assert_eq!(ring.capacity(), 4);
        assert_eq!(a.read(&mut ring), Some(1));
        assert_eq!(b.read(&mut ring), Some(1));
        assert_eq!(a.read(&mut ring), Some(2));
        assert_eq!(b.read(&mut ring), Some(2));
        for v in 4..=6 {
            assert!(write(&mut ring, v));
        }
        // Live: 3 4 5 6 in 4 slots (wrapped when start = 0: positions 2..6).
        assert_eq!(ring.capacity(), 4);
        assert!(write(&mut ring, 7), "grows 4 -> 8 on the seventh write");
        assert_eq!(ring.capacity(), 8);
        assert_eq!(shape(&ring, start), (5, 7, 2, 2));
        // Each element sits at its position modulo 8; cursors are untouched by growth.
        let layout = raw(&ring);
        for (k, v) in (3..=7u32).enumerate() {
            let pos = start.wrapping_add(2 + k as u64);
            assert_eq!(layout[(pos & 7) as usize], v);
        }
        assert_eq!(layout.iter().filter(|&&v| v == 0).count(), 3);
        for v in 3..=7 {
            assert_eq!(a.read(&mut ring), Some(v));
        }
        assert_eq!(a.read(&mut ring), None);
        for v in 3..=7 {
            assert_eq!(b.read(&mut ring), Some(v));
        }
        assert_eq!(raw(&ring), [0; 8], "never shrinks, every slot dropped");
    }
}

#[test]
fn stress() {
    let mut rng = Rng::new(0x5eed);
    for max_log in 1..=6u32 {
        for start in [0, u64::MAX - 50] {
            for _run in 0..2 {
                let max = 1usize << max_log;
                let mut ring = Ring::<u32>::new(1, max, start);
                let readers = 1 + rng.below(8) as usize;
                let mut cursors: Vec<(Cursor, u32)> =
                    (0..readers).map(|_| (Cursor::join(&mut ring), 1)).collect();
                let mut next = 1u32;
                while !cursors.is_empty() {
                    // Writes weigh 2, each cursor's read 1 (Pekko's bias).
                    let pick = rng.below(cursors.len() as u64 + 2) as usize;
                    if pick < 2 {
                        if next < 200 && ring.write(next).is_ok() {
                            next += 1;
                        }
                        ring.check();
                    } else {
                        let (c, expect) = &mut cursors[pick - 2];
                        if let Some(v) = c.read(&mut ring) {
                            assert_eq!(v, *expect, "out of order");
                            *expect += 1;
                        }
                        if *expect == 200 {
                            let (c, _) = cursors.swap_remove(pick - 2);
                            ring.leave(c.0);
                            ring.check();
                        }
                    }
                    assert!(ring.len() <= max);
                }
                assert_eq!(ring.readers(), 0);
            }
        }
    }
}

#[test]
fn leaving_frees_what_only_that_reader_needed() {
    let mut ring = Ring::<u32>::new(4, 4, u64::MAX);
    let slow = Cursor::join(&mut ring);
    let mut fast = Cursor::join(&mut ring);
    for v in 1..=4 {
        assert!(write(&mut ring, v));
    }
    for v in 1..=3 {
        assert_eq!(fast.read(&mut ring), Some(v));
    }
    assert_eq!(ring.len(), 4);
    ring.leave(slow.0);
    ring.check();
    assert_eq!(
        ring.len(),
        1,
        "1..=3 only the slow reader needed: dropped at once"
    );
    assert_eq!(raw(&ring).iter().filter(|&&v| v != 0).count(), 1);
    // The last reader leaving keeps what is left for the next one (nothing is reclaimed
    // without readers).
    ring.leave(fast.0);
    ring.check();
    assert_eq!(ring.len(), 1);
    let mut late = Cursor::join(&mut ring);
    assert_eq!(late.read(&mut ring), Some(4));
}

#[test]
fn reclaimed_elements_are_dropped_at_once() {
    use std::sync::Arc;
    let token = Arc::new(());
    let mut ring = Ring::<Arc<()>>::new(2, 2, 0);
    let mut c = Cursor::join(&mut ring);
    ring.write(token.clone()).unwrap();
    assert_eq!(Arc::strong_count(&token), 2);
    drop(c.read(&mut ring));
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the buffer let go of the element"
    );
}
