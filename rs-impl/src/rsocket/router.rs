//! The server's handlers, by route: what a [`Router`] holds and how a request finds its
//! handler.
//!
//! A request's route is the first tag of the routing entry in its composite metadata
//! ([`metadata::route`](super::metadata::route)); a request without a routing entry (or with
//! metadata that is not composite) has the route `""`, which a handler registered for `""`
//! serves. A request whose route has no handler of its interaction is answered
//! `ERROR[INVALID]` ("no handler for route …"); fire-and-forget is dropped.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use rs_api::{BoxPublisher, Error, Publisher};

use super::error::{ErrorCode, RSocketError};
use super::inbound::Inbound;
use super::metadata;
use super::payload::Payload;

/// A boxed answer to a request_response.
pub(crate) type BoxResponse = Pin<Box<dyn Future<Output = Result<Payload, Error>> + Send>>;

/// What a request_response handler gave: its answer at once (a synchronous handler, nothing
/// boxed), or a future of it.
pub(crate) enum Answer {
    /// The answer, computed by the handler itself.
    Now(Result<Payload, Error>),
    /// A future of the answer (polled once inline; spawned as a task if not ready).
    Later(BoxResponse),
}

type StreamFn = Box<dyn Fn(Payload) -> BoxPublisher<Payload> + Send + Sync>;
type ResponseFn = Box<dyn Fn(Payload) -> Answer + Send + Sync>;
type FnfFn = Box<dyn Fn(Payload) + Send + Sync>;
type ChannelFn = Box<dyn Fn(Payload, ChannelInbound) -> BoxPublisher<Payload> + Send + Sync>;
type PushFn = Box<dyn Fn(Bytes) + Send + Sync>;

/// FNV-1a over a route's bytes: every request looks its route up, and SipHash cost more
/// than the rest of the lookup. No key is needed against a hostile peer: the map holds only
/// the routes registered here, so a peer's route costs at most a probe of those.
#[derive(Clone, Copy)]
pub(crate) struct RouteHasher(u64);

impl Default for RouteHasher {
    fn default() -> Self {
        RouteHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for RouteHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// A key's length prefix (`[u8]` hashes its length first): one round, not eight.
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Default)]
struct Handlers {
    stream: Option<StreamFn>,
    response: Option<ResponseFn>,
    fnf: Option<FnfFn>,
    channel: Option<ChannelFn>,
}

/// The handlers a server serves, by route.
///
/// Each handler runs when its request arrives, on the connection's reader task (or, with
/// inbound lanes, on its route's lane: [`ServerConfig::lanes`](super::ServerConfig::lanes)):
/// it should return promptly (build the publisher or the future, and let them do the work).
/// A handler that stalls stalls every request behind it on its reader or lane.
///
/// * `request_stream(route, f)`: `f(request)` returns the publisher of the stream. It is
///   subscribed at once and asked only for what the requester's REQUEST_N frames allow,
///   within the connection's `stream_window` (see the module documentation).
/// * `request_channel(route, f)`: `f(first, inbound)` gets the REQUEST_CHANNEL's payload and
///   the publisher of the requester's further payloads ([`ChannelInbound`]: its
///   subscriber's requests become REQUEST_N frames), and returns the publisher of the
///   answers: a processor-like handler (an `rs_api::Processor` subscribed to `inbound` and
///   returned fits).
/// * `request_response(route, f)`: `f(request)` returns a future of the answer; an error
///   goes out as an ERROR frame (`APPLICATION_ERROR`, or the code of an
///   [`RSocketError::Remote`]). The future is boxed (one allocation per request), polled
///   once at once, and run as a task if it is not ready.
/// * `request_response_sync(route, f)`: `f(request)` returns the answer itself, computed on
///   the reader (or lane) task: nothing is boxed or spawned. The form for answers that need
///   no waiting (an echo, a lookup in memory); errors go out as for `request_response`.
/// * `fire_and_forget(route, f)`: `f(request)`.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::{Payload, Router};
/// use rs_impl::source;
///
/// let router = Router::new()
///     .request_response("echo", |p: Payload| async move { Ok(p) })
///     .request_response_sync("size", |p: Payload| Ok(Payload::from(p.data.len().to_string())))
///     .request_stream("count", |_req| {
///         source::from_iter((0..10u32).map(|i| Payload::from(i.to_string())))
///     })
///     .fire_and_forget("log", |p| println!("{:?}", p.data));
/// assert_eq!(router.routes().count(), 4);
/// ```
#[derive(Default)]
pub struct Router {
    /// By the route's bytes: a request's route is looked up before (and without) checking
    /// that it is UTF-8; only a route that matches none is read as text (for the error).
    routes: HashMap<Box<[u8]>, Handlers, std::hash::BuildHasherDefault<RouteHasher>>,
    metadata_push: Option<PushFn>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("routes", &self.routes().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Router {
    /// A router with no routes.
    pub fn new() -> Self {
        Self::default()
    }

    fn entry(&mut self, route: &str) -> &mut Handlers {
        self.routes.entry(route.as_bytes().into()).or_default()
    }

    /// Serves request_stream on `route`: `f(request)` is the stream's publisher.
    pub fn request_stream<F, P>(mut self, route: &str, f: F) -> Self
    where
        F: Fn(Payload) -> P + Send + Sync + 'static,
        P: Publisher<Payload> + Send + 'static,
    {
        self.entry(route).stream = Some(Box::new(move |p| Box::new(f(p))));
        self
    }

    /// Serves request_channel on `route`: `f(first, inbound)` is the publisher of the
    /// answers.
    pub fn request_channel<F, P>(mut self, route: &str, f: F) -> Self
    where
        F: Fn(Payload, ChannelInbound) -> P + Send + Sync + 'static,
        P: Publisher<Payload> + Send + 'static,
    {
        self.entry(route).channel = Some(Box::new(move |p, i| Box::new(f(p, i))));
        self
    }

    /// Serves request_response on `route`: `f(request)` is a future of the answer.
    pub fn request_response<F, Fut>(mut self, route: &str, f: F) -> Self
    where
        F: Fn(Payload) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Payload, Error>> + Send + 'static,
    {
        self.entry(route).response = Some(Box::new(move |p| Answer::Later(Box::pin(f(p)))));
        self
    }

    /// Serves request_response on `route` with a synchronous handler: `f(request)` is the
    /// answer (or the error to send as an ERROR frame), computed on the connection's reader
    /// task (or its lane) as the request arrives. Nothing is boxed or spawned per request:
    /// for answers that need no waiting, this costs less than
    /// [`request_response`](Self::request_response) with an `async` block. A handler that
    /// blocks holds every request behind it. A panic in `f` is answered as an
    /// `APPLICATION_ERROR`, as in the other forms. Registering either form on a route
    /// replaces the other.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::rsocket::{Payload, Router};
    ///
    /// let router = Router::new().request_response_sync("echo", |p: Payload| Ok(p));
    /// assert_eq!(router.routes().collect::<Vec<_>>(), ["echo"]);
    /// ```
    pub fn request_response_sync<F>(mut self, route: &str, f: F) -> Self
    where
        F: Fn(Payload) -> Result<Payload, Error> + Send + Sync + 'static,
    {
        self.entry(route).response = Some(Box::new(move |p| Answer::Now(f(p))));
        self
    }

    /// Serves fire-and-forget on `route`.
    pub fn fire_and_forget<F>(mut self, route: &str, f: F) -> Self
    where
        F: Fn(Payload) + Send + Sync + 'static,
    {
        self.entry(route).fnf = Some(Box::new(f));
        self
    }

    /// Receives the connection-level METADATA_PUSH frames.
    pub fn metadata_push<F>(mut self, f: F) -> Self
    where
        F: Fn(Bytes) + Send + Sync + 'static,
    {
        self.metadata_push = Some(Box::new(f));
        self
    }

    /// The routes with at least one handler.
    pub fn routes(&self) -> impl Iterator<Item = &str> {
        // Every key was a `&str`.
        self.routes
            .keys()
            .filter_map(|k| std::str::from_utf8(k).ok())
    }

    /// The request's route (its bytes: UTF-8 unless no handler matches) and its handlers.
    fn handlers<'s, 'r>(
        &'s self,
        request: &'r Payload,
    ) -> Result<(&'r [u8], Option<&'s Handlers>), RSocketError> {
        // The usual routing metadata, read as bytes: a route that matches a registered one
        // is UTF-8 (every key was a `&str`), so it needs no check; anything else takes the
        // general path below, with its errors unchanged.
        if let Some(tag) = request.metadata.as_deref().and_then(metadata::route_tag) {
            if let Some(h) = self.routes.get(tag) {
                return Ok((tag, Some(h)));
            }
        }
        let route = match &request.metadata {
            Some(m) => metadata::route(m)
                .map_err(|e| RSocketError::remote(ErrorCode::Invalid, e.to_string()))?
                .unwrap_or(""),
            None => "",
        };
        Ok((route.as_bytes(), self.routes.get(route.as_bytes())))
    }

    fn missing(route: &[u8], what: &str) -> RSocketError {
        RSocketError::remote(
            ErrorCode::Invalid,
            format!(
                "no {what} handler for route {:?}",
                String::from_utf8_lossy(route)
            ),
        )
    }

    pub(crate) fn handle_stream(
        &self,
        request: Payload,
    ) -> Result<BoxPublisher<Payload>, RSocketError> {
        let (route, h) = self.handlers(&request)?;
        match h.and_then(|h| h.stream.as_ref()) {
            Some(f) => Ok(f(request)),
            None => Err(Self::missing(route, "request_stream")),
        }
    }

    pub(crate) fn handle_channel(
        &self,
        first: Payload,
        inbound: ChannelInbound,
    ) -> Result<BoxPublisher<Payload>, RSocketError> {
        let (route, h) = self.handlers(&first)?;
        match h.and_then(|h| h.channel.as_ref()) {
            Some(f) => Ok(f(first, inbound)),
            None => Err(Self::missing(route, "request_channel")),
        }
    }

    pub(crate) fn handle_response(&self, request: Payload) -> Result<Answer, RSocketError> {
        let (route, h) = self.handlers(&request)?;
        match h.and_then(|h| h.response.as_ref()) {
            Some(f) => Ok(f(request)),
            None => Err(Self::missing(route, "request_response")),
        }
    }

    pub(crate) fn handle_fnf(&self, request: Payload) {
        let f = match self.handlers(&request) {
            Ok((_, Some(Handlers { fnf: Some(f), .. }))) => f,
            _ => return,
        };
        f(request);
    }

    pub(crate) fn handle_push(&self, metadata: Bytes) {
        if let Some(f) = &self.metadata_push {
            f(metadata);
        }
    }
}

/// The requester's payloads on a channel, after the first: a publisher that can be
/// subscribed once (a second subscriber gets `on_error` with rule 1.9's rejection). Its
/// subscriber's `request(n)` becomes REQUEST_N to the requester; its `cancel`, CANCEL.
///
/// If nobody subscribes, the requester is never granted credit and sends nothing more.
#[must_use = "the requester sends nothing until this publisher is subscribed and requested from"]
pub struct ChannelInbound {
    inner: crate::loom::sync::Mutex<Option<std::sync::Arc<Inbound>>>,
}

impl std::fmt::Debug for ChannelInbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelInbound").finish_non_exhaustive()
    }
}

impl ChannelInbound {
    pub(crate) fn new(inbound: std::sync::Arc<Inbound>) -> Self {
        ChannelInbound {
            inner: crate::loom::sync::Mutex::new(Some(inbound)),
        }
    }
}

impl Drop for ChannelInbound {
    /// Never subscribed: the requester's half is cancelled, so that the stream can end.
    fn drop(&mut self) {
        if let Some(inbound) = self.inner.lock().take() {
            inbound.cancel();
        }
    }
}

impl Publisher<Payload> for ChannelInbound {
    fn subscribe(&self, subscriber: rs_api::BoxSubscriber<Payload>) {
        match self.inner.lock().take() {
            Some(inbound) => inbound.start(subscriber),
            None => crate::source::failed(
                rs_api::SpecViolation::Rejected {
                    reason: "a channel's inbound payloads can be subscribed once".into(),
                }
                .into(),
            )
            .subscribe(subscriber),
        }
    }
}
