//! A collecting sink stage ([`CollectSink`]), for tests and examples of graphs wired by hand.
//!
//! The linear operators, the iterator source, the publisher source and the subscriber sink
//! as stages of their own are in [`crate::flow`] ([`OperatorStage`](crate::flow::OperatorStage),
//! [`IterSource`](crate::flow::IterSource), …): they are the flow's parts, written once.

use std::fmt;

use rs_api::Error;

use super::interpreter::Ctx;
use super::port::{Inlet, PortId, Ports};
use super::stage::Stage;
use crate::loom::sync::{Arc, Mutex};

/// The elements so far, and how the stream ended (`None` while it runs).
type Seen<T> = (Vec<T>, Option<Result<(), Error>>);

/// What a [`CollectSink`] saw: the elements, and how the stream ended.
pub struct Collected<T> {
    inner: Arc<Mutex<Seen<T>>>,
}

impl<T> fmt::Debug for Collected<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collected").finish_non_exhaustive()
    }
}

impl<T> Clone for Collected<T> {
    fn clone(&self) -> Self {
        Collected {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Collected<T> {
    /// The elements and the outcome once the stream ended (`None` before): `Ok` with every
    /// element after completion, the error after a failure, or
    /// [`Cancelled`](crate::subscriber::Cancelled) if the sink was stopped without either.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn take(&self) -> Option<Result<Vec<T>, Error>> {
        let mut g = self.inner.lock();
        let outcome = g.1.take()?;
        let items = std::mem::take(&mut g.0);
        Some(outcome.map(|()| items))
    }

    /// How many elements arrived so far.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (_o, i) = g.connection::<u8>();
    /// let (_sink, seen) = rs_impl::island::stages::CollectSink::new(i);
    /// assert_eq!(seen.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.lock().0.len()
    }

    /// Whether no element arrived so far.
    ///
    /// # Examples
    ///
    /// See [`Collected::len`].
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sink that pulls one element at a time and collects them (for tests and examples).
pub struct CollectSink<T> {
    inlet: Inlet<T>,
    seen: Collected<T>,
}

impl<T> fmt::Debug for CollectSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollectSink").finish_non_exhaustive()
    }
}

impl<T> CollectSink<T> {
    /// The sink and the handle on what it collects.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn new(inlet: Inlet<T>) -> (Self, Collected<T>) {
        let seen = Collected {
            inner: Arc::new(Mutex::new((Vec::new(), None))),
        };
        (
            CollectSink {
                inlet,
                seen: seen.clone(),
            },
            seen,
        )
    }
}

impl<T: Send + 'static> Stage for CollectSink<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.seen.inner.lock().0.push(x);
        ctx.pull(self.inlet);
    }
    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.seen.inner.lock().1.get_or_insert(Ok(()));
        ctx.complete_stage();
    }
    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        self.seen.inner.lock().1.get_or_insert(Err(error));
        ctx.complete_stage();
    }
    fn post_stop(&mut self) {
        self.seen
            .inner
            .lock()
            .1
            .get_or_insert(Err(Error::new(crate::subscriber::Cancelled)));
    }
}
