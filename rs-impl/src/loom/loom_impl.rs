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
    pub struct Mutex<T: ?Sized>(loom::sync::Mutex<T>);

    impl<T: ?Sized> std::fmt::Debug for Mutex<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Mutex").finish_non_exhaustive()
        }
    }

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
    }

    impl<T: ?Sized> Mutex<T> {
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

/// Driving a future on the current thread (loom's: the thread sleeps on loom's own
/// notification between wake-ups, so the model sees every wake-up).
pub mod future {
    pub use loom::future::block_on;
}

/// Runs `f` under `loom::model`, reading the `LOOM_*` environment variables
/// (`LOOM_MAX_PREEMPTIONS`, `LOOM_MAX_BRANCHES`, …).
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    loom::model(f)
}

/// Runs `f` under loom with at most `LOOM_MAX_PREEMPTIONS` preemptions per interleaving, or
/// `default_bound` when that variable is unset (loom's own default is no bound, which makes a
/// model with a few threads run for many minutes). The other `LOOM_*` variables apply as in
/// [`model`]. `LOOM_LOG` prints its trace only when `LOOM_MAX_PREEMPTIONS` is set as well
/// (then this is [`model`], which installs the trace's writer).
pub fn model_with_preemption_bound<F>(default_bound: usize, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_some() {
        return loom::model(f);
    }
    if std::env::var_os("LOOM_LOG").is_some() {
        eprintln!(
            "rs_impl::loom: LOOM_LOG prints its trace only with LOOM_MAX_PREEMPTIONS set as \
             well (for example LOOM_MAX_PREEMPTIONS={default_bound}); running without the trace"
        );
    }
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(default_bound);
    builder.check(f);
}
