//! The counting allocator counts allocations on every thread, not only the caller's.
//! One test in this file, so that libtest's other threads cannot add to the counters.

// Tests use std threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_benches::alloc::{is_counting, snapshot, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn counts_allocations_on_this_and_other_threads() {
    assert!(is_counting());

    let before = snapshot();
    let v = std::hint::black_box(vec![0u8; 1000]);
    let here = snapshot().since(before);
    assert!(here.allocs >= 1 && here.bytes >= 1000, "{here:?}");
    drop(v);

    // A spawned thread allocates 10 × 4096 bytes; spawning costs something too (more the
    // first time: one-time runtime setup), so warm up, then compare with a thread that
    // allocates nothing. Retried, since the test harness's own thread may allocate meanwhile.
    let measure = |k: usize| {
        let before = snapshot();
        std::thread::spawn(move || {
            for _ in 0..k {
                drop(std::hint::black_box(vec![1u8; 4096]));
            }
        })
        .join()
        .unwrap();
        snapshot().since(before)
    };
    measure(0);
    let exact = (0..5).any(|_| {
        let idle = measure(0);
        let busy = measure(10);
        let extra = (busy.allocs - idle.allocs, busy.bytes - idle.bytes);
        if extra != (10, 40_960) {
            eprintln!("idle {idle:?}, busy {busy:?}");
        }
        extra == (10, 40_960)
    });
    assert!(
        exact,
        "the other thread's allocations were not counted exactly"
    );

    // Frees are not subtracted; a realloc counts its new size.
    let before = snapshot();
    let mut v: Vec<u64> = Vec::with_capacity(1);
    v.reserve_exact(8);
    std::hint::black_box(&v);
    let grown = snapshot().since(before);
    assert_eq!(grown.allocs, 2);
    assert_eq!(grown.bytes, 8 + 64);
}
