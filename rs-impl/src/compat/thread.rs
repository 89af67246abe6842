//! [`ThreadPerTask`]: a `Spawn` that gives every task a thread of its own, on the facade.

use futures::future::FutureObj;
use futures::task::{Spawn, SpawnError};

use crate::loom::future::block_on;
use crate::loom::thread;

/// An executor that runs every spawned task on a new thread of its own, which sleeps between
/// wake-ups (`block_on`).
///
/// Its threads and its `block_on` come from the [facade](crate::loom), so in a loom build
/// every task is a loom thread and the bridges that take an executor
/// ([`from_stream`](super::from_stream), [`sink_subscriber`](super::sink_subscriber), …) can
/// be model-checked with it (the TCK's loom mode does). Outside loom it suits tests and a few
/// long-lived tasks (a stream that deserves its own thread); for many short tasks, use a pool.
///
/// The thread ends when its task completes. A task that is never woken again keeps its thread
/// asleep (as it would keep a pool's task pending).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::compat::{from_stream, ThreadPerTask};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let publisher = from_stream(futures::stream::iter(0..5u32), ThreadPerTask);
/// let (s, result) = collect(RequestStrategy::Prefetch(2));
/// publisher.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadPerTask;

impl Spawn for ThreadPerTask {
    fn spawn_obj(&self, future: FutureObj<'static, ()>) -> Result<(), SpawnError> {
        drop(thread::spawn(move || block_on(future)));
        Ok(())
    }
}
