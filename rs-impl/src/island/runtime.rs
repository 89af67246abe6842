//! Where islands run: the default runtime on futures' thread pool, or any executor.

use std::fmt;
use std::sync::Arc as StdArc;

use super::future::Island;

/// Why the default runtime could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The thread pool could not spawn its threads.
    #[error("the island thread pool could not start: {0}")]
    ThreadPool(#[source] std::io::Error),
}

/// Runs islands: each materialised flow becomes one [`Island`] future handed to the runtime's
/// executor. A cheap `Clone` handle.
///
/// * [`Runtime::new`]: futures' `ThreadPool`, one thread per available core (the default).
/// * [`Runtime::with_threads`]: the same with a given size.
/// * [`Runtime::from_spawner`]: any executor, given how to spawn a `Send` future on it — for
///   tokio, `move |island| { handle.spawn(island); }` with a `tokio::runtime::Handle`.
///
/// Keep a handle alive while streams run on it: the thread pool shuts down when its last
/// handle is dropped, and islands still parked on it never run again (their subscribers see
/// no terminal signal). Every publisher made with
/// [`Flow::into_publisher`](super::Flow::into_publisher) holds a handle.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::island::{Runtime};
/// use rs_impl::flow::{Flow};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = Runtime::with_threads(2).unwrap();
/// let p = Flow::from_iter(0..10u32).map(|x| x + 1).into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::Prefetch(4));
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), (1..=10).collect::<Vec<_>>());
/// ```
///
/// On tokio (a multi-thread runtime; tokio treats an island's self-wake as a yield):
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::island::{Runtime};
/// use rs_impl::flow::{Flow};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let tokio_rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
/// let handle = tokio_rt.handle().clone();
/// let runtime = Runtime::from_spawner(move |island| {
///     handle.spawn(island);
/// });
/// let p = Flow::from_iter(0..5u32).map(|x| x * x).into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![0, 1, 4, 9, 16]);
/// ```
#[derive(Clone)]
pub struct Runtime {
    spawn: StdArc<dyn Fn(Island) + Send + Sync>,
    threads: Option<usize>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// The default runtime: futures' thread pool with one thread per available core.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::ThreadPool`] when the threads cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::new().unwrap();
    /// assert!(rt.threads().unwrap() >= 1);
    /// ```
    #[cfg(not(rs_loom))]
    pub fn new() -> Result<Self, RuntimeError> {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(n)
    }

    /// Futures' thread pool with `threads` threads (at least 1), named `rs-island-N`.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::ThreadPool`] when the threads cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::with_threads(1).unwrap();
    /// assert_eq!(rt.threads(), Some(1));
    /// ```
    #[cfg(not(rs_loom))]
    pub fn with_threads(threads: usize) -> Result<Self, RuntimeError> {
        let threads = threads.max(1);
        let pool = futures::executor::ThreadPool::builder()
            .pool_size(threads)
            .name_prefix("rs-island-")
            .create()
            .map_err(RuntimeError::ThreadPool)?;
        // A task that wakes itself inside `poll` is polled again at once by this pool, so a
        // yielding island is rescheduled by a tiny task queued behind the ready ones (one
        // allocation per yield, that is per budget of events).
        let p = pool.clone();
        let yielder: super::future::Yielder =
            StdArc::new(move |w: std::task::Waker| p.spawn_ok(async move { w.wake() }));
        Ok(Runtime {
            spawn: StdArc::new(move |island: Island| {
                pool.spawn_ok(island.with_yielder(yielder.clone()))
            }),
            threads: Some(threads),
        })
    }

    /// A runtime that hands every island to `spawn` (any executor that runs `Send` futures).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// // A "manual" executor: collect the islands, run them later on this thread.
    /// let queue = Arc::new(Mutex::new(Vec::new()));
    /// let q = queue.clone();
    /// let rt = rs_impl::island::Runtime::from_spawner(move |island| q.lock().unwrap().push(island));
    /// assert_eq!(rt.threads(), None);
    /// ```
    pub fn from_spawner<F>(spawn: F) -> Self
    where
        F: Fn(Island) + Send + Sync + 'static,
    {
        Runtime {
            spawn: StdArc::new(spawn),
            threads: None,
        }
    }

    /// Hands `island` to the executor.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::with_threads(1).unwrap();
    /// rt.spawn(rs_impl::island::Island::new(rs_impl::island::GraphBuilder::new().build().unwrap()));
    /// ```
    pub fn spawn(&self, island: Island) {
        (self.spawn)(island)
    }

    /// The thread pool's size, for the default runtime; `None` for a spawner.
    ///
    /// # Examples
    ///
    /// See [`Runtime::with_threads`].
    pub fn threads(&self) -> Option<usize> {
        self.threads
    }
}
