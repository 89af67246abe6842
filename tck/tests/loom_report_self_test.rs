//! How a failing loom scenario reads through the `cargo test` harness (issue 20, item 8): what
//! never happened comes first in the failure — `deadlocked while waiting: …`, naming the rule
//! — although the deadlock aborts the scenario's process (with or without the publisher's own
//! thread suspended, and with a destructor of the publisher's that panics as the deadlock
//! unwinds, which is noted next); a publisher on a plain std thread is reported as that,
//! not as the deadlock that follows; and a publisher that blocks a model thread on a plain std
//! mutex stalls the model, which the stall watchdog reports as that.
//!
//! The test runs this binary again with [`INNER`] set; that inner run is the harness over one
//! scenario per broken publisher, each in a child process of its own (the isolation
//! `tests/loom.rs` uses), and the test reads the failures it reports.
//!
//! Meaningful only in the loom build (`scripts/loom.sh`); a normal build has no test here.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use libtest_mimic::{Arguments, Trial};

#[cfg(rs_loom)]
mod scenarios {
    use std::process::Command;

    use rs_api::{BoxSubscriber, Publisher, Subscription};
    use rs_impl::loom::sync::{Condvar, Mutex};
    use rs_tck::publisher::PublisherVerification;
    use rs_tck::suite::Suite;

    /// Set in the inner run (and inherited by its isolated children).
    pub(super) const INNER: &str = "RS_TCK_LOOM_REPORT_SELF_TEST_INNER";

    /// The one scenario each broken publisher runs: 3 elements, requested by the probe and by
    /// two threads racing it.
    const SCENARIO: &str = "required_spec103_concurrent_request_vs_emission";

    /// The stall limit of the inner run (seconds).
    const STALL_SECS: u64 = 3;

    /// What the scenario waits for when the elements never come.
    const NEVER_CAME: &str = "deadlocked while waiting: rule 3.8: only some of the 3 elements \
                              requested arrived";

    /// A subscription that ignores every request.
    struct Ignores;

    impl Subscription for Ignores {
        fn request(&self, _n: u64) {}
        fn cancel(&self) {}
    }

    /// A subscription that ignores every request and panics when it is dropped.
    struct PanicsWhenDropped;

    impl Subscription for PanicsWhenDropped {
        fn request(&self, _n: u64) {}
        fn cancel(&self) {}
    }

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("the subscription's destructor panicked (test publisher)");
        }
    }

    /// BUG: calls `on_subscribe` and then nothing, whatever is requested. The scenario's
    /// other threads are done by then: only its own wait deadlocks.
    struct Silent;

    impl Publisher<u64> for Silent {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            subscriber.on_subscribe(std::sync::Arc::new(Ignores));
        }
    }

    /// BUG: as [`Silent`], with a subscription whose destructor panics: the scenario's record
    /// holds the last reference, so it is dropped while the deadlock unwinds: a panic during a
    /// panic.
    struct SilentPanicsWhenDropped;

    impl Publisher<u64> for SilentPanicsWhenDropped {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            subscriber.on_subscribe(std::sync::Arc::new(PanicsWhenDropped));
        }
    }

    /// A thread of its own that calls `on_subscribe`, then waits for a wake-up that `request`
    /// never sends (BUG: the request is lost): the scenario deadlocks with that thread
    /// suspended.
    struct LostWakeUp;

    struct Parked {
        woken: Mutex<bool>,
        wake: Condvar,
    }

    impl Subscription for Parked {
        fn request(&self, _n: u64) {} // BUG: neither records nor wakes
        fn cancel(&self) {
            *self.woken.lock() = true;
            self.wake.notify_one();
        }
    }

    impl Publisher<u64> for LostWakeUp {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            let parked = std::sync::Arc::new(Parked {
                woken: Mutex::new(false),
                wake: Condvar::new(),
            });
            rs_impl::loom::thread::spawn(move || {
                subscriber.on_subscribe(parked.clone());
                let mut woken = parked.woken.lock();
                while !*woken {
                    woken = parked.wake.wait(woken);
                }
            });
        }
    }

    /// Signals from a `std::thread` (loom cannot see it), then waits for demand on std locks.
    struct StdThread;

    struct StdDemand(std::sync::Mutex<u64>, std::sync::Condvar);

    impl Subscription for StdDemand {
        fn request(&self, n: u64) {
            *self.0.lock().unwrap() += n;
            self.1.notify_one();
        }
        fn cancel(&self) {
            *self.0.lock().unwrap() = u64::MAX;
            self.1.notify_one();
        }
    }

    impl Publisher<u64> for StdThread {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            std::thread::spawn(move || {
                let demand = std::sync::Arc::new(StdDemand(
                    std::sync::Mutex::new(0),
                    std::sync::Condvar::new(),
                ));
                subscriber.on_subscribe(demand.clone());
                // Waits for demand the scenario's loom threads cannot make: leaked.
                let mut d = demand.0.lock().unwrap();
                while *d == 0 {
                    d = demand.1.wait(d).unwrap();
                }
            });
        }
    }

    /// Holds a plain `std` mutex (`gate`) while it takes a loom lock: when loom switches to
    /// another model thread there and that one requests, it blocks on the `std` mutex, and
    /// with it the OS thread every model thread runs on (BUG: a lock loom cannot see).
    struct StdLock;

    struct StdLocked {
        gate: std::sync::Mutex<()>,
        /// The subscriber (once `subscribe` stored it), the next element, the demand.
        state: Mutex<(Option<BoxSubscriber<u64>>, u64, u64)>,
    }

    impl StdLocked {
        fn drain(&self) {
            let _gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                let mut state = self.state.lock();
                let (subscriber, next, demand) = &mut *state;
                let Some(s) = subscriber.as_mut() else { return };
                if *next == 3 {
                    s.on_complete();
                    let done = subscriber.take();
                    drop(state);
                    drop(done);
                    return;
                }
                if *demand == 0 {
                    return;
                }
                *demand -= 1;
                *next += 1;
                s.on_next(*next - 1);
            }
        }
    }

    impl Subscription for StdLocked {
        fn request(&self, n: u64) {
            self.state.lock().2 += n;
            self.drain();
        }
        fn cancel(&self) {
            let gone = self.state.lock().0.take();
            drop(gone);
        }
    }

    impl Publisher<u64> for StdLock {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            let shared = std::sync::Arc::new(StdLocked {
                gate: std::sync::Mutex::new(()),
                state: Mutex::new((None, 0, 0)),
            });
            subscriber.on_subscribe(shared.clone());
            shared.state.lock().0 = Some(subscriber);
            shared.drain();
        }
    }

    /// A publisher verification over `P`.
    struct Over<P>(fn() -> P);

    impl<P: Publisher<u64> + Send + 'static> PublisherVerification for Over<P> {
        type Item = u64;

        fn create_publisher(&self, _elements: u64) -> impl Publisher<u64> + Send + 'static {
            (self.0)()
        }
    }

    /// The loom suite of `create` with only [`SCENARIO`].
    fn only<P: Publisher<u64> + Send + 'static>(name: &str, create: fn() -> P) -> Suite {
        let mut suite = rs_tck::loom::verify_publisher(name, Over(create));
        suite.tests.retain(|t| t.name == SCENARIO);
        assert_eq!(suite.tests.len(), 1);
        suite
    }

    /// The suites of the inner run.
    pub(super) fn suites() -> Vec<Suite> {
        vec![
            only("silent", || Silent),
            only("lost_wake_up", || LostWakeUp),
            only("panics_when_dropped", || SilentPanicsWhenDropped),
            only("std_thread", || StdThread),
            only("std_lock", || StdLock),
        ]
    }

    /// The inner run's failure message of `implementation`'s scenario (what `cargo test`
    /// prints under `---- name ----`).
    fn failure<'a>(text: &'a str, implementation: &str) -> Result<&'a str, String> {
        let head = format!("---- {implementation}::loom_publisher::{SCENARIO} ----\n");
        let start = text
            .find(&head)
            .ok_or_else(|| format!("no failure reported for {implementation}:\n{text}"))?
            + head.len();
        let rest = &text[start..];
        Ok(&rest[..rest.find("\n---- ").unwrap_or(rest.len())])
    }

    fn expect(ok: bool, what: &str, message: &str) -> Result<(), libtest_mimic::Failed> {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}:\n{message}").into())
        }
    }

    pub(super) fn what_never_happened_comes_first() -> Result<(), libtest_mimic::Failed> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let out = Command::new(exe)
            .args(["--test-threads=1"])
            .env(INNER, "1")
            .env(rs_tck::loom::STALL_SECS_VAR, STALL_SECS.to_string())
            .output()
            .map_err(|e| e.to_string())?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        expect(
            text.contains("0 passed; 5 failed"),
            "every broken publisher must fail",
            &text,
        )?;
        // A deadlock aborts the scenario's process (loom's objects are dropped outside the
        // model as it unwinds), with the publisher's thread suspended or without: the failure
        // opens with what never happened all the same, ahead of the end of the process's
        // output (a thread dump and backtraces, longer than the part quoted).
        for implementation in ["silent", "lost_wake_up", "panics_when_dropped"] {
            let message = failure(&text, implementation)?;
            expect(
                message.starts_with(NEVER_CAME),
                &format!("{implementation}: the failure opens with what never happened"),
                message,
            )?;
            expect(
                message.contains("the test's process ended without an outcome"),
                &format!("{implementation}: the process aborted"),
                message,
            )?;
        }
        // A destructor of the implementation that panics as the deadlock unwinds: noted right
        // after what never happened (and nothing so for the others: loom's own panics while
        // it tears the model down are not the implementation's).
        let dropped = failure(&text, "panics_when_dropped")?;
        expect(
            dropped.starts_with(&format!(
                "{NEVER_CAME} (a request made while another thread was emitting was lost?) \
                 (loom found an interleaving in which this never happens); then, as the \
                 deadlock unwound, a panic: the subscription's destructor panicked (test \
                 publisher) (at tck/tests/loom_report_self_test.rs:"
            )),
            "the destructor's panic, noted after what never happened",
            dropped,
        )?;
        for implementation in ["silent", "lost_wake_up"] {
            let message = failure(&text, implementation)?;
            expect(
                !message.contains("as the deadlock unwound"),
                &format!("{implementation}: no panic of the implementation's is noted"),
                message,
            )?;
        }
        // The std thread: that is the failure, not the deadlock it leads to.
        let std_thread = failure(&text, "std_thread")?;
        expect(
            std_thread
                .starts_with("the publisher called on_subscribe from a thread loom does not know"),
            "a std thread's failure opens with the thread",
            std_thread,
        )?;
        expect(
            !std_thread.contains("rule 1.9: the publisher never called on_subscribe")
                && !std_thread.contains("deadlocked while waiting"),
            "nothing that follows from the std thread is reported as the cause",
            std_thread,
        )?;
        // A std lock loom cannot see: the model stalls, and the failure says so.
        let std_lock = failure(&text, "std_lock")?;
        expect(
            std_lock.starts_with(&format!(
                "stalled: no interleaving began for {STALL_SECS} s: a model thread is blocked \
                 on something loom cannot see (a std mutex"
            )),
            "a model blocked on a std lock is reported as that",
            std_lock,
        )?;
        expect(
            std_lock.contains("the test's process ended without an outcome"),
            "std_lock: the watchdog ended the process",
            std_lock,
        )?;
        Ok(())
    }
}

fn main() {
    #[cfg(rs_loom)]
    if std::env::var_os(scenarios::INNER).is_some() {
        rs_tck::harness::main(scenarios::suites());
    }
    let args = Arguments::from_args();
    #[cfg(rs_loom)]
    let trials = vec![Trial::test(
        "what_never_happened_comes_first",
        scenarios::what_never_happened_comes_first,
    )];
    #[cfg(not(rs_loom))]
    let trials: Vec<Trial> = Vec::new(); // nothing to check without loom
    libtest_mimic::run(&args, trials).exit()
}
