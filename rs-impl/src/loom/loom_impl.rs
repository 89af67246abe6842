//! The facade over loom (`--cfg rs_loom`).

/// Synchronisation types: loom's, with the same API as the normal build's.
pub mod sync {
    pub use loom::sync::Arc;

    /// Atomic types (loom's).
    pub mod atomic {
        pub use loom::sync::atomic::{
            fence, AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering,
        };
    }

    /// A loom mutex whose `lock` ignores poisoning.
    #[derive(Debug)]
    pub struct Mutex<T>(loom::sync::Mutex<T>);

    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(loom::sync::Mutex::new(value))
        }

        /// Consumes the mutex, returning the value.
        pub fn into_inner(self) -> T {
            self.0.into_inner().unwrap_or_else(|p| p.into_inner())
        }

        /// Locks, blocking until the lock is free.
        pub fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// Locks if the lock is free right now.
        pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            match self.0.try_lock() {
                Ok(g) => Some(g),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        }
    }

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Mutex::new(T::default())
        }
    }

    /// A loom condition variable that ignores poisoning. Loom does not model time:
    /// `wait_timeout` waits for a notification and never reports a timeout.
    #[derive(Debug)]
    pub struct Condvar(loom::sync::Condvar);

    impl Default for Condvar {
        fn default() -> Self {
            Condvar::new()
        }
    }

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(loom::sync::Condvar::new())
        }

        /// Blocks until notified.
        pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(guard).unwrap_or_else(|p| p.into_inner())
        }

        /// Blocks until notified (loom has no time); never reports a timeout.
        pub fn wait_timeout<'a, T>(
            &self,
            guard: MutexGuard<'a, T>,
            _dur: std::time::Duration,
        ) -> (MutexGuard<'a, T>, bool) {
            (self.wait(guard), false)
        }

        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one()
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all()
        }
    }
}

/// loom's `UnsafeCell`.
pub mod cell {
    pub use loom::cell::UnsafeCell;
}

/// Threads (loom's).
pub mod thread {
    pub use loom::thread::{current, panicking, spawn, yield_now, JoinHandle, ThreadId};
}

/// Spin-loop hints (loom's: they yield to the model's scheduler).
pub mod hint {
    pub use loom::hint::spin_loop;
}

/// Runs `f` under `loom::model`, reading the `LOOM_*` environment variables
/// (`LOOM_MAX_PREEMPTIONS`, `LOOM_MAX_BRANCHES`, …).
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    loom::model(f)
}

/// Set in the child process that runs a model expected to fail.
const REJECT_CHILD: &str = "RS_LOOM_EXPECT_REJECTED_CHILD";

/// Asserts that `model` is **rejected** — fails under loom with `expected` in its output —
/// for proving that a model (or a TCK scenario) can fail against a deliberately broken
/// implementation.
///
/// Call it from a libtest test named `test` (its full path without the crate name, as
/// `--exact` expects it). The model runs in a child process (this test binary, filtered to that
/// one test): a failure found while other loom threads are suspended unwinds their stacks
/// outside the model and aborts the process, which `catch_unwind` cannot contain. In the child,
/// this function just runs the model under [`model`].
///
/// # Panics
///
/// In the parent, when the child succeeded (loom accepted the broken variant) or failed without
/// `expected` in its output.
pub fn assert_rejected<F>(test: &str, expected: &str, model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    if std::env::var_os(REJECT_CHILD).is_some() {
        self::model(model);
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(REJECT_CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the broken model in a child process");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "loom accepted a broken variant (expected a failure naming {expected:?}):\n{text}"
    );
    assert!(
        text.contains(expected),
        "loom rejected the broken variant, but not with a failure naming {expected:?}:\n{text}"
    );
}
