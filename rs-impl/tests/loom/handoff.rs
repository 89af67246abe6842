//! The drain loop's hand-off (`DrainLoop::try_drain_with`): a serial producer hands values to
//! the drainer, straight into its state when the loop is idle, through a locked queue when it
//! is busy (the identity processor's upstream path).

use std::collections::VecDeque;

use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::serial::DrainLoop;

use crate::broken::BrokenRecordFirst;

/// Values the producer hands over.
const COUNT: u32 = 2;

/// A drain loop whose state collects the values, and the queue for a busy loop.
pub(crate) struct Handoff {
    pub(crate) drain: DrainLoop<Vec<u32>>,
    pub(crate) queue: Mutex<VecDeque<u32>>,
}

impl Handoff {
    fn new() -> Self {
        Handoff {
            drain: DrainLoop::new(Vec::new()),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// The drainer's pass: take everything queued, in order.
    pub(crate) fn pass(&self, state: &mut Vec<u32>) {
        state.extend(self.queue.lock().drain(..));
    }

    /// Some other caller's work (a downstream request): one more pass.
    pub(crate) fn poke(&self) {
        self.drain.drain(|st| self.pass(st));
    }
}

/// How the producer hands a value over, so that the broken twin runs the same model.
pub(crate) trait Produce: Send + Sync + 'static {
    fn produce(h: &Handoff, value: u32);
}

/// The identity processor's way: straight in when idle; else queue first, then record.
pub(crate) struct Correct;

impl Produce for Correct {
    fn produce(h: &Handoff, value: u32) {
        let accepted = h
            .drain
            .try_drain_with(value, |st, v| st.push(v), |st| h.pass(st));
        if let Err(value) = accepted {
            h.queue.lock().push_back(value);
            h.poke();
        }
    }
}

/// No lost value, order kept. Interleaving: the producer hands over `0..COUNT` one after the
/// other while another thread drains once (a request), so each value finds the loop idle (it
/// goes straight into the state) or busy (it goes through the queue), in every combination. In
/// every interleaving, once both are done: the state holds every value, in order, and the queue
/// is empty.
pub(crate) fn producer_racing_a_drainer<P: Produce>() {
    let h = Arc::new(Handoff::new());
    let other = {
        let h = h.clone();
        thread::spawn(move || h.poke())
    };
    for v in 0..COUNT {
        P::produce(&h, v);
    }
    other.join().unwrap();
    let left = h.queue.lock().len();
    assert_eq!(
        left, 0,
        "no lost wake-up: {left} value(s) left in the queue"
    );
    let mut got = Vec::new();
    h.drain.drain(|st| got = st.clone());
    assert_eq!(got, (0..COUNT).collect::<Vec<_>>(), "values in order");
}

#[test]
fn handoff_producer_racing_a_drainer() {
    crate::exhaustive(producer_racing_a_drainer::<Correct>);
}

crate::loom_rejects!(
    handoff_model_rejects_broken_record_first,
    "no lost wake-up",
    exhaustive producer_racing_a_drainer::<BrokenRecordFirst>
);
