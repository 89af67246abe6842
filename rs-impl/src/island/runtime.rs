//! [`Runtime`]: the one executor parameter of the crate — where islands and the bridges'
//! tasks run.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc as StdArc;

use futures::future::{BoxFuture, FutureExt};
use futures::task::{FutureObj, Spawn, SpawnError};

use super::future::{Island, Yielder};

/// Why the default runtime could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The thread pool could not spawn its threads.
    #[error("the island thread pool could not start: {0}")]
    ThreadPool(#[source] std::io::Error),
}

/// Where islands and tasks run: every place in the crate that spawns (a flow's islands, the
/// `Stream` and `Sink` bridges' tasks) takes a `&Runtime`. A cheap `Clone` handle over an
/// executor:
///
/// * [`Runtime::new`] / [`Runtime::with_threads`]: futures' `ThreadPool` (cargo feature
///   `thread-pool`, on by default), one thread per available core by default;
/// * `Runtime::tokio` (cargo feature `tokio`): a tokio runtime's handle, also as
///   `Runtime::from(handle)`; `Runtime::tokio_current` for the runtime the caller runs on;
/// * [`Runtime::from_spawn`]: any [`futures::task::Spawn`] (a `LocalPool`'s spawner, a
///   `ThreadPool` of your own);
/// * [`Runtime::from_spawner`]: any executor, given how to spawn a boxed `Send` future;
/// * [`Runtime::thread_per_task`]: a thread of its own per task, from the loom facade (so the
///   bridges can be model-checked).
///
/// A task the executor refuses (it shut down) is dropped: an island's stages then stop and its
/// subscriber is dropped without a terminal signal, as on a cancel (a ready-made subscriber's
/// handle reports it). Keep a handle alive while streams run on it: futures' pool shuts down
/// when its last handle is dropped. Every publisher made with
/// [`Flow::into_publisher`](crate::flow::Flow::into_publisher) holds a handle.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::flow::Flow;
/// use rs_impl::island::Runtime;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = Runtime::with_threads(2).unwrap();
/// let p = Flow::from_iter(0..10u32).map(|x| x + 1).into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::Prefetch(4));
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), (1..=10).collect::<Vec<_>>());
/// ```
///
/// Any `Spawn`, here a thread pool of the caller's own:
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::flow::Flow;
/// use rs_impl::island::Runtime;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let pool = futures::executor::ThreadPool::builder().pool_size(1).create().unwrap();
/// let runtime = Runtime::from_spawn(pool);
/// let p = Flow::from_iter(0..5u32).map(|x| x * x).into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![0, 1, 4, 9, 16]);
/// ```
///
/// A single-threaded executor (futures' `LocalPool`) is not `Send`: hand it the tasks through
/// [`Runtime::from_spawner`] and a channel, and drive it on its thread.
#[derive(Clone)]
pub struct Runtime {
    spawn: StdArc<dyn Fn(BoxFuture<'static, ()>) + Send + Sync>,
    /// How a yielding island is rescheduled on this executor (futures' pool polls a task that
    /// wakes itself inside `poll` again at once: it needs a tiny task behind the ready ones).
    yielder: Option<Yielder>,
    threads: Option<usize>,
    kind: &'static str,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("executor", &self.kind)
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
    #[cfg(all(feature = "thread-pool", not(rs_loom)))]
    pub fn new() -> Result<Self, RuntimeError> {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(n)
    }

    /// Futures' thread pool with `threads` threads.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::ThreadPool`] when the threads cannot be spawned.
    ///
    /// # Panics
    ///
    /// If `threads` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::with_threads(2).unwrap();
    /// assert_eq!(rt.threads(), Some(2));
    /// ```
    #[cfg(all(feature = "thread-pool", not(rs_loom)))]
    pub fn with_threads(threads: usize) -> Result<Self, RuntimeError> {
        assert!(
            threads > 0,
            "Runtime::with_threads: a pool needs at least one thread"
        );
        let pool = futures::executor::ThreadPool::builder()
            .pool_size(threads)
            .name_prefix("rs-island-")
            .create()
            .map_err(RuntimeError::ThreadPool)?;
        let p = pool.clone();
        let yielder: Yielder =
            StdArc::new(move |w: std::task::Waker| p.spawn_ok(async move { w.wake() }));
        Ok(Runtime {
            spawn: StdArc::new(move |task| pool.spawn_ok(task)),
            yielder: Some(yielder),
            threads: Some(threads),
            kind: "futures::executor::ThreadPool",
        })
    }

    /// A runtime on any [`futures::task::Spawn`]. A task it refuses is dropped (see
    /// [`Runtime`]).
    ///
    /// # Examples
    ///
    /// See [`Runtime`].
    pub fn from_spawn<S>(spawner: S) -> Self
    where
        S: Spawn + Send + Sync + 'static,
    {
        Runtime {
            spawn: StdArc::new(move |task| {
                // A refused task is dropped, which stops it (its `Drop` tells its subscriber).
                let _ = spawner.spawn_obj(FutureObj::new(task));
            }),
            yielder: None,
            threads: None,
            kind: "futures::task::Spawn",
        }
    }

    /// A runtime on any executor, given how to spawn a boxed `Send` future on it.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::from_spawner(|task| {
    ///     std::thread::spawn(move || futures::executor::block_on(task));
    /// });
    /// # drop(rt);
    /// ```
    pub fn from_spawner<F>(spawn: F) -> Self
    where
        F: Fn(BoxFuture<'static, ()>) + Send + Sync + 'static,
    {
        Runtime {
            spawn: StdArc::new(spawn),
            yielder: None,
            threads: None,
            kind: "spawner",
        }
    }

    /// A runtime that runs every task on a new thread of its own, which sleeps between
    /// wake-ups. Its threads and its `block_on` come from the [facade](crate::loom), so in a
    /// loom build every task is a loom thread and everything spawned on it can be
    /// model-checked (the TCK's loom mode does). Outside loom it suits tests and a few
    /// long-lived tasks; for many short tasks, use a pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::compat::from_stream;
    /// use rs_impl::island::Runtime;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let publisher = from_stream(futures::stream::iter(0..5u32), &Runtime::thread_per_task());
    /// let (s, result) = collect(RequestStrategy::Prefetch(2));
    /// publisher.subscribe(Box::new(s));
    /// assert_eq!(result.wait().unwrap(), vec![0, 1, 2, 3, 4]);
    /// ```
    pub fn thread_per_task() -> Self {
        Runtime {
            spawn: StdArc::new(|task| {
                drop(crate::loom::thread::spawn(move || {
                    crate::loom::future::block_on(task)
                }));
            }),
            yielder: None,
            threads: None,
            kind: "a thread per task",
        }
    }

    /// A runtime on a tokio runtime (multi-thread or current-thread; tokio treats an island's
    /// self-wake as a yield).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::flow::Flow;
    /// use rs_impl::island::Runtime;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let tokio_rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    /// let runtime = Runtime::tokio(tokio_rt.handle().clone());
    /// let p = Flow::from_iter(0..5u32).map(|x| x * x).into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 1, 4, 9, 16]);
    /// ```
    #[cfg(feature = "tokio")]
    pub fn tokio(handle: tokio::runtime::Handle) -> Self {
        Runtime {
            spawn: StdArc::new(move |task| drop(handle.spawn(task))),
            yielder: None,
            threads: None,
            kind: "tokio",
        }
    }

    /// A runtime on the tokio runtime the caller runs on.
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime (as [`tokio::runtime::Handle::current`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let tokio_rt = tokio::runtime::Runtime::new().unwrap();
    /// let runtime = tokio_rt.block_on(async { rs_impl::island::Runtime::tokio_current() });
    /// # drop(runtime);
    /// ```
    #[cfg(feature = "tokio")]
    pub fn tokio_current() -> Self {
        Runtime::tokio(tokio::runtime::Handle::current())
    }

    /// Spawns `task` (an [`Island`], or any future) on the executor.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = rs_impl::island::Runtime::with_threads(1).unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// rt.spawn(async move { tx.send(7).unwrap() });
    /// assert_eq!(rx.recv().unwrap(), 7);
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut task = Some(task);
        if let Some(y) = &self.yielder {
            let any: &mut dyn Any = &mut task;
            if let Some(island) = any.downcast_mut::<Option<Island>>().and_then(Option::take) {
                (self.spawn)(island.with_yielder(y.clone()).boxed());
                return;
            }
        }
        if let Some(task) = task {
            (self.spawn)(task.boxed());
        }
    }

    /// The number of threads, for a thread pool made here.
    ///
    /// # Examples
    ///
    /// See [`Runtime::with_threads`].
    pub fn threads(&self) -> Option<usize> {
        self.threads
    }
}

#[cfg(feature = "tokio")]
impl From<tokio::runtime::Handle> for Runtime {
    fn from(handle: tokio::runtime::Handle) -> Self {
        Runtime::tokio(handle)
    }
}

impl Spawn for Runtime {
    fn spawn_obj(&self, future: FutureObj<'static, ()>) -> Result<(), SpawnError> {
        self.spawn(future);
        Ok(())
    }
}
