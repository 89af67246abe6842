//! A configurable Publisher → `Stream` bridge: correct with `StreamKnobs::default()` (it requests
//! its prefetch when first polled, then one more per item polled out), broken in exactly the
//! ways its knobs say. A queue under a lock, the waker of the last `Pending` poll, and the
//! subscription: the shape of `rs_impl::compat::to_stream` without its ring.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures::Stream;
use rs_api::{BoxPublisher, Error, Subscriber, SubscriptionRef, UNBOUNDED};
use rs_tck::publisher::BufferBound;
use rs_tck::stream::StreamBridgeVerification;

/// What to break. Every knob off: a correct bridge.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StreamKnobs {
    /// Bounded buffering: the first request is `request(UNBOUNDED)`.
    pub(crate) unbounded: bool,
    /// Bounded buffering: requests one more for every element received (ahead of the
    /// consumer), instead of for every item polled out.
    pub(crate) eager_replenish: bool,
    /// 2.6: dropping the stream does not cancel the subscription.
    pub(crate) no_cancel_on_drop: bool,
    /// 2.4 (`FusedStream`): polled after its end, the stream returns `Pending`.
    pub(crate) pending_after_end: bool,
    /// 2.4: polled after its end, the stream requests again.
    pub(crate) request_after_end: bool,
    /// 2.10: `on_error` ends the stream like `on_complete` (the error is lost).
    pub(crate) swallow_error: bool,
    /// The `Stream` contract: the consumer's waker is never woken.
    pub(crate) no_wake: bool,
}

#[derive(Default)]
struct State {
    subscription: Option<SubscriptionRef>,
    queue: VecDeque<u64>,
    /// The terminal signal: `Some(None)` completion, `Some(Some(e))` an error not yet yielded.
    done: Option<Option<Error>>,
    waker: Option<Waker>,
}

struct Shared {
    knobs: StreamKnobs,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self, mut st: MutexGuard<'_, State>) {
        let waker = st.waker.take();
        drop(st);
        if let Some(w) = waker {
            if !self.knobs.no_wake {
                w.wake();
            }
        }
    }
}

struct BridgeSubscriber(Arc<Shared>);

impl Subscriber<u64> for BridgeSubscriber {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let mut st = self.0.lock();
        if st.subscription.is_some() {
            drop(st);
            subscription.cancel(); // 2.5
            return;
        }
        st.subscription = Some(subscription);
        self.0.wake(st);
    }

    fn on_next(&mut self, item: u64) {
        let mut st = self.0.lock();
        st.queue.push_back(item);
        let eager = self
            .0
            .knobs
            .eager_replenish
            .then(|| st.subscription.clone())
            .flatten();
        self.0.wake(st);
        if let Some(s) = eager {
            s.request(1); // BUG: demand follows what arrives, not what is consumed
        }
    }

    fn on_error(&mut self, error: Error) {
        let mut st = self.0.lock();
        st.done = Some(if self.0.knobs.swallow_error {
            None // BUG: the error is lost
        } else {
            Some(error)
        });
        st.subscription = None;
        self.0.wake(st);
    }

    fn on_complete(&mut self) {
        let mut st = self.0.lock();
        st.done = Some(None);
        st.subscription = None;
        self.0.wake(st);
    }
}

struct BridgeStream {
    shared: Arc<Shared>,
    prefetch: u64,
    started: bool,
    ended: bool,
    /// The subscription, kept for requests after the end (the `request_after_end` knob) and
    /// for the cancel on drop.
    subscription: Option<SubscriptionRef>,
}

impl Stream for BridgeStream {
    type Item = Result<u64, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let k = this.shared.knobs;
        if this.ended {
            if k.request_after_end {
                if let Some(s) = &this.subscription {
                    s.request(1); // BUG: the subscription is over
                }
            }
            return if k.pending_after_end {
                Poll::Pending // BUG: an ended stream must stay ended
            } else {
                Poll::Ready(None)
            };
        }
        let mut st = this.shared.lock();
        st.waker = Some(cx.waker().clone());
        if this.subscription.is_none() {
            this.subscription = st.subscription.clone();
        }
        let mut request = None;
        if !this.started && this.subscription.is_some() {
            this.started = true;
            request = Some(if k.unbounded {
                UNBOUNDED
            } else {
                this.prefetch
            });
        }
        let item = st.queue.pop_front();
        if item.is_some() && !k.eager_replenish && !k.unbounded {
            request = Some(request.unwrap_or(0) + 1);
        }
        let done = if item.is_none() { st.done.take() } else { None };
        if let Some(Some(_)) = &done {
            st.done = Some(None); // the end comes after the error
        }
        drop(st);
        if let (Some(n), Some(s)) = (request, &this.subscription) {
            s.request(n);
        }
        match (item, done) {
            (Some(x), _) => Poll::Ready(Some(Ok(x))),
            (None, Some(Some(e))) => Poll::Ready(Some(Err(e))),
            (None, Some(None)) => {
                this.ended = true;
                Poll::Ready(None)
            }
            (None, None) => Poll::Pending,
        }
    }
}

impl Drop for BridgeStream {
    fn drop(&mut self) {
        if self.shared.knobs.no_cancel_on_drop || self.ended {
            return;
        }
        let s = self
            .subscription
            .take()
            .or_else(|| self.shared.lock().subscription.clone());
        if let Some(s) = s {
            s.cancel();
        }
    }
}

/// A stream bridge verification over [`BridgeStream`], declaring its prefetch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BrokenBridge {
    pub(crate) knobs: StreamKnobs,
    pub(crate) prefetch: u64,
}

impl BrokenBridge {
    /// The bridge broken by `knobs`, with a prefetch of 4.
    pub(crate) fn with(knobs: StreamKnobs) -> Self {
        BrokenBridge { knobs, prefetch: 4 }
    }
}

impl StreamBridgeVerification for BrokenBridge {
    type Item = u64;

    fn create_stream(
        &self,
        publisher: BoxPublisher<u64>,
    ) -> impl Stream<Item = Result<u64, Error>> + Send + 'static {
        let shared = Arc::new(Shared {
            knobs: self.knobs,
            state: Mutex::new(State::default()),
        });
        publisher.subscribe(Box::new(BridgeSubscriber(shared.clone())));
        BridgeStream {
            shared,
            prefetch: self.prefetch,
            started: false,
            ended: false,
            subscription: None,
        }
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn prefetch(&self) -> BufferBound {
        BufferBound::AtMost(self.prefetch)
    }
}
