//! [`Latch`] and [`Promise`].

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::env::TestEnvironment;
use crate::outcome::{Stop, TestResult};

/// A value slot with a condition variable, shared by [`Latch`] and [`Promise`].
#[derive(Debug)]
struct Slot<T> {
    value: Mutex<Option<T>>,
    changed: Condvar,
}

impl<T> Slot<T> {
    fn new() -> Self {
        Slot {
            value: Mutex::new(None),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        self.value.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until the slot is filled or `timeout` passes; returns the guard.
    fn wait(&self, timeout: Duration) -> MutexGuard<'_, Option<T>> {
        let deadline = Instant::now() + timeout;
        let mut guard = self.lock();
        while guard.is_none() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            guard = self
                .changed
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        guard
    }
}

/// A resettable one-shot gate (the JVM TCK's `Latch`). Clones share the gate.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_tck::{env::TestEnvironment, instruments::Latch};
///
/// let env = TestEnvironment::new(Default::default());
/// let latch = Latch::new(&env);
/// latch.assert_open("rule 1.9: only one on_subscribe expected");
/// let closer = latch.clone();
/// std::thread::spawn(move || closer.close());
/// latch.expect_close(Duration::from_secs(5), "rule 1.9: expected on_subscribe").unwrap();
/// latch.assert_open("flops: it is closed now");
/// assert_eq!(env.async_errors().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Latch {
    env: TestEnvironment,
    slot: Arc<Slot<()>>,
}

impl Latch {
    /// An open latch reporting to `env`.
    pub fn new(env: &TestEnvironment) -> Self {
        Latch {
            env: env.clone(),
            slot: Arc::new(Slot::new()),
        }
    }

    /// Closes the latch, waking every waiter.
    pub fn close(&self) {
        *self.slot.lock() = Some(());
        self.slot.changed.notify_all();
    }

    /// Opens the latch again.
    pub fn reopen(&self) {
        *self.slot.lock() = None;
    }

    /// Whether the latch is closed.
    pub fn is_closed(&self) -> bool {
        self.slot.lock().is_some()
    }

    /// Flops with `message` if the latch is closed.
    pub fn assert_open(&self, message: &str) {
        if self.is_closed() {
            self.env.flop(format!("{message} (latch expected open)"));
        }
    }

    /// Flops with `message` if the latch is open.
    pub fn assert_closed(&self, message: &str) {
        if !self.is_closed() {
            self.env.flop(format!("{message} (latch expected closed)"));
        }
    }

    /// Waits up to `timeout` for the latch to close.
    ///
    /// # Errors
    ///
    /// A failure with `message` if it did not close in time.
    pub fn expect_close(&self, timeout: Duration, message: &str) -> TestResult {
        if self.slot.wait(timeout).is_some() {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{message} (not within {} ms)",
                timeout.as_millis()
            )))
        }
    }
}

/// A write-once value (the JVM TCK's `Promise`). Clones share the value.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_tck::{env::TestEnvironment, instruments::Promise};
///
/// let env = TestEnvironment::new(Default::default());
/// let p = Promise::new(&env);
/// p.complete(7);
/// p.complete(8); // flops: completed twice
/// assert_eq!(p.expect_completion(Duration::from_millis(1), "value").unwrap(), 7);
/// assert_eq!(env.async_errors().len(), 1);
/// ```
#[derive(Debug)]
pub struct Promise<T> {
    env: TestEnvironment,
    slot: Arc<Slot<T>>,
}

impl<T> Clone for Promise<T> {
    fn clone(&self) -> Self {
        Promise {
            env: self.env.clone(),
            slot: self.slot.clone(),
        }
    }
}

impl<T: Clone> Promise<T> {
    /// An empty promise reporting to `env`.
    pub fn new(env: &TestEnvironment) -> Self {
        Promise {
            env: env.clone(),
            slot: Arc::new(Slot::new()),
        }
    }

    /// Sets the value; a second call keeps the first value and flops.
    pub fn complete(&self, value: T) {
        let mut guard = self.slot.lock();
        if guard.is_some() {
            drop(guard);
            self.env.flop("a Promise was completed twice");
            return;
        }
        *guard = Some(value);
        drop(guard);
        self.slot.changed.notify_all();
    }

    /// The value, if set.
    pub fn value(&self) -> Option<T> {
        self.slot.lock().clone()
    }

    /// Whether the value is set.
    pub fn is_completed(&self) -> bool {
        self.slot.lock().is_some()
    }

    /// Waits up to `timeout` for the value.
    ///
    /// # Errors
    ///
    /// A failure with `message` if no value came in time.
    pub fn expect_completion(&self, timeout: Duration, message: &str) -> TestResult<T> {
        match &*self.slot.wait(timeout) {
            Some(v) => Ok(v.clone()),
            None => Err(Stop::failed(format!(
                "{message} (not within {} ms)",
                timeout.as_millis()
            ))),
        }
    }
}
