//! The facade over the standard library (the normal build).

/// Synchronisation types: std's, shaped like loom's.
pub mod sync {
    pub use std::sync::Arc;

    /// Atomic types: thin wrappers over std's, so that the workspace's clippy ban on direct
    /// std atomics flags every use outside this facade.
    pub mod atomic {
        pub use std::sync::atomic::{fence, Ordering};

        macro_rules! atomic_int {
            ($(#[$doc:meta] $name:ident($int:ty);)*) => {$(
                #[$doc]
                #[derive(Default)]
                #[repr(transparent)]
                pub struct $name(std::sync::atomic::$name);

                impl std::fmt::Debug for $name {
                    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        std::fmt::Debug::fmt(&self.0, f)
                    }
                }

                impl $name {
                    /// A new atomic holding `v`.
                    #[inline]
                    pub fn new(v: $int) -> Self { Self(std::sync::atomic::$name::new(v)) }
                    /// Loads the value.
                    #[inline]
                    pub fn load(&self, order: Ordering) -> $int { self.0.load(order) }
                    /// Stores `v`.
                    #[inline]
                    pub fn store(&self, v: $int, order: Ordering) { self.0.store(v, order) }
                    /// Stores `v`, returning the previous value.
                    #[inline]
                    pub fn swap(&self, v: $int, order: Ordering) -> $int { self.0.swap(v, order) }
                    /// Adds `v` (wrapping), returning the previous value.
                    #[inline]
                    pub fn fetch_add(&self, v: $int, order: Ordering) -> $int { self.0.fetch_add(v, order) }
                    /// Subtracts `v` (wrapping), returning the previous value.
                    #[inline]
                    pub fn fetch_sub(&self, v: $int, order: Ordering) -> $int { self.0.fetch_sub(v, order) }
                    /// Bitwise or with `v`, returning the previous value.
                    #[inline]
                    pub fn fetch_or(&self, v: $int, order: Ordering) -> $int { self.0.fetch_or(v, order) }
                    /// Bitwise and with `v`, returning the previous value.
                    #[inline]
                    pub fn fetch_and(&self, v: $int, order: Ordering) -> $int { self.0.fetch_and(v, order) }
                    /// Stores the maximum of the value and `v`, returning the previous value.
                    #[inline]
                    pub fn fetch_max(&self, v: $int, order: Ordering) -> $int { self.0.fetch_max(v, order) }
                    /// Compare-and-exchange.
                    ///
                    /// # Errors
                    ///
                    /// The current value, when it differs from `current`.
                    #[inline]
                    pub fn compare_exchange(&self, current: $int, new: $int, success: Ordering, failure: Ordering) -> Result<$int, $int> {
                        self.0.compare_exchange(current, new, success, failure)
                    }
                    /// Applies `f` until it succeeds or returns `None`.
                    ///
                    /// # Errors
                    ///
                    /// The current value, when `f` returned `None`.
                    #[inline]
                    pub fn fetch_update<F>(&self, set: Ordering, fetch: Ordering, f: F) -> Result<$int, $int>
                    where
                        F: FnMut($int) -> Option<$int>,
                    {
                        self.0.fetch_update(set, fetch, f)
                    }
                    /// Consumes the atomic, returning the value.
                    #[inline]
                    pub fn into_inner(self) -> $int { self.0.into_inner() }
                }
            )*};
        }

        atomic_int! {
            /// `std::sync::atomic::AtomicUsize`, through the facade.
            AtomicUsize(usize);
            /// `std::sync::atomic::AtomicU64`, through the facade.
            AtomicU64(u64);
            /// `std::sync::atomic::AtomicU32`, through the facade.
            AtomicU32(u32);
            /// `std::sync::atomic::AtomicI64`, through the facade.
            AtomicI64(i64);
        }

        /// `std::sync::atomic::AtomicBool`, through the facade.
        #[derive(Default)]
        #[repr(transparent)]
        pub struct AtomicBool(std::sync::atomic::AtomicBool);

        impl std::fmt::Debug for AtomicBool {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }

        impl AtomicBool {
            /// A new atomic holding `v`.
            #[inline]
            pub fn new(v: bool) -> Self {
                Self(std::sync::atomic::AtomicBool::new(v))
            }
            /// Loads the value.
            #[inline]
            pub fn load(&self, order: Ordering) -> bool {
                self.0.load(order)
            }
            /// Stores `v`.
            #[inline]
            pub fn store(&self, v: bool, order: Ordering) {
                self.0.store(v, order)
            }
            /// Stores `v`, returning the previous value.
            #[inline]
            pub fn swap(&self, v: bool, order: Ordering) -> bool {
                self.0.swap(v, order)
            }
            /// Logical or with `v`, returning the previous value.
            #[inline]
            pub fn fetch_or(&self, v: bool, order: Ordering) -> bool {
                self.0.fetch_or(v, order)
            }
            /// Compare-and-exchange.
            ///
            /// # Errors
            ///
            /// The current value, when it differs from `current`.
            #[inline]
            pub fn compare_exchange(
                &self,
                current: bool,
                new: bool,
                success: Ordering,
                failure: Ordering,
            ) -> Result<bool, bool> {
                self.0.compare_exchange(current, new, success, failure)
            }
            /// Consumes the atomic, returning the value.
            #[inline]
            pub fn into_inner(self) -> bool {
                self.0.into_inner()
            }
        }
    }

    /// A mutual-exclusion lock whose `lock` ignores poisoning: a panic while the lock was held
    /// does not make every later user panic too (state protected here is kept consistent by
    /// its owners, who catch subscriber panics at the callback).
    #[derive(Default)]
    pub struct Mutex<T: ?Sized>(std::sync::Mutex<T>);

    impl<T: ?Sized> std::fmt::Debug for Mutex<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Mutex").finish_non_exhaustive()
        }
    }

    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(std::sync::Mutex::new(value))
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

    /// A condition variable that ignores poisoning, like [`Mutex`].
    #[derive(Debug, Default)]
    pub struct Condvar(std::sync::Condvar);

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(std::sync::Condvar::new())
        }

        /// Blocks until notified (spurious wake-ups possible: re-check the condition).
        pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(guard).unwrap_or_else(|p| p.into_inner())
        }

        /// Blocks until notified or until `dur` has passed; the flag says whether it timed out.
        pub fn wait_timeout<'a, T>(
            &self,
            guard: MutexGuard<'a, T>,
            dur: std::time::Duration,
        ) -> (MutexGuard<'a, T>, bool) {
            match self.0.wait_timeout(guard, dur) {
                Ok((g, r)) => (g, r.timed_out()),
                Err(p) => {
                    let (g, r) = p.into_inner();
                    (g, r.timed_out())
                }
            }
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

/// `UnsafeCell` with loom's closure-based access API.
pub mod cell {
    /// A cell whose contents are accessed through raw pointers inside closures, so that loom
    /// can track every access in the loom build.
    #[derive(Debug, Default)]
    pub struct UnsafeCell<T: ?Sized>(core::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// A new cell holding `value`.
        pub fn new(value: T) -> Self {
            UnsafeCell(core::cell::UnsafeCell::new(value))
        }

        /// Consumes the cell, returning the value.
        pub fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    impl<T: ?Sized> UnsafeCell<T> {
        /// Calls `f` with a shared pointer to the contents.
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        /// Calls `f` with a mutable pointer to the contents.
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

/// Threads (std's).
pub mod thread {
    pub use std::thread::{current, panicking, yield_now, JoinHandle, ThreadId};

    /// Spawns a thread (`std::thread::spawn`, through the facade).
    pub fn spawn<F, T>(f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        std::thread::spawn(f)
    }
}

/// Spin-loop hints (std's).
pub mod hint {
    pub use std::hint::spin_loop;
}

/// Driving a future on the current thread (futures' executor: the thread parks between
/// wake-ups).
pub mod future {
    pub use futures::executor::block_on;
}

/// Runs `f` once. In the loom build this is `loom::model`, which runs it under every
/// interleaving; write model tests against this function so they compile in both builds.
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    f()
}

/// Runs `f` once. In the loom build this runs it under every interleaving with at most
/// `LOOM_MAX_PREEMPTIONS` preemptions, or `default_bound` when that variable is unset.
pub fn model_with_preemption_bound<F>(default_bound: usize, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let _ = default_bound;
    f()
}
