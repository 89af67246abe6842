//! The burst entry (`blocking_send_all`, `send_iter`): one drain-loop entry per burst, the
//! same elements in the same order as per-element sends, and the edges (a full buffer, a
//! closed fanout, a panicking iterator).

use std::sync::Arc;

use rs_api::Publisher;

use crate::fanout::channel;
use crate::subscriber::{collect, RequestStrategy};

#[test]
fn a_burst_enters_the_drain_loop_once_where_sends_enter_it_per_element() {
    for k in [1usize, 8] {
        let (tx, p) = channel::<u64>(64);
        let handles: Vec<_> = (0..k)
            .map(|_| {
                let (s, h) = collect(RequestStrategy::Unbounded);
                p.subscribe(Box::new(s));
                h
            })
            .collect();
        tx.blocking_send(0).unwrap(); // the joins are taken in this pass
        let before = p.drain_calls();
        tx.blocking_send_all(1..1_001).unwrap();
        assert_eq!(
            p.drain_calls() - before,
            1,
            "k = {k}: one entry for 1,000 elements"
        );
        let before = p.drain_calls();
        for x in 1_001..1_101 {
            tx.blocking_send(x).unwrap();
        }
        assert_eq!(p.drain_calls() - before, 100, "k = {k}: one entry per send");
        tx.complete();
        for h in handles {
            assert_eq!(h.wait().unwrap(), (0..1_101).collect::<Vec<_>>());
        }
    }
}

#[test]
fn a_burst_waits_for_a_slow_subscriber_and_keeps_the_order() {
    let (tx, p) = channel::<u64>(4);
    let (fast, rf) = collect(RequestStrategy::Unbounded);
    let (slow, rs) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(fast));
    p.subscribe(Box::new(slow));
    let slow_thread = std::thread::spawn(move || rs.wait());
    tx.blocking_send_all(0..500).unwrap();
    futures::executor::block_on(tx.send_iter(500..600)).unwrap();
    tx.complete();
    assert_eq!(rf.wait().unwrap(), (0..600).collect::<Vec<_>>());
    assert_eq!(
        slow_thread.join().unwrap().unwrap(),
        (0..600).collect::<Vec<_>>()
    );
}

#[test]
fn a_burst_into_a_closed_fanout_gives_back_the_first_element() {
    let (tx, p) = channel::<u64>(8);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    tx.blocking_send_all([1, 2]).unwrap();
    tx.complete();
    let e = tx.blocking_send_all([3, 4]).unwrap_err();
    assert_eq!(e.into_inner(), 3);
    assert_eq!(h.wait().unwrap(), vec![1, 2]);
}

#[test]
fn a_panicking_iterator_reaches_the_caller_after_the_elements_before_it() {
    let (tx, p) = channel::<u64>(8);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let tx = Arc::new(tx);
    let t2 = tx.clone();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _ = t2.blocking_send_all((0..10u64).inspect(|x| {
            assert!(*x < 3, "the iterator broke");
        }));
    }));
    assert!(r.is_err());
    // The fanout is intact: the drain loop was left before the panic went on.
    tx.blocking_send_all([7, 8]).unwrap();
    tx.complete();
    assert_eq!(h.wait().unwrap(), vec![0, 1, 2, 7, 8]);
}
