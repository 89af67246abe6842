//! The client: connect, send SETUP, and make requests whose answers are publishers (streams,
//! channels) or futures (request_response).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use rs_api::{BoxSubscriber, Publisher};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_util::codec::FramedRead;

use super::codec::FrameCodec;
use super::config::ClientConfig;
use super::conn::keepalive::{self, Keepalive};
use super::conn::{reader, writer, Conn};
use super::error::RSocketError;
use super::frame::{Frame, Setup, VERSION};
use super::inbound::Inbound;
use super::metadata::Route;
use super::outbox::{Opening, Out};
use super::part::{ChannelInput, Request};
use super::payload::Payload;
use super::response::Response;
use super::table::Role;
use crate::loom::sync::Arc;

/// The connection behind a [`Client`] and its publishers; closed when the last of them is
/// dropped.
struct Shared {
    conn: Arc<Conn>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.conn
            .close(RSocketError::Closed("the client was dropped".into()), None);
    }
}

/// An RSocket client: one TCP connection to a server, on tokio.
///
/// Cloning a `Client` shares its connection; the connection closes when the last clone and
/// the last publisher made by it are dropped, or on [`Client::close`].
///
/// # Examples
///
/// A server and a client in one process, over loopback:
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::rsocket::{Client, ClientConfig, Payload, Router, Server, ServerConfig};
/// use rs_impl::{source, subscriber};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let router = Router::new()
///     .request_response("echo", |p: Payload| async move { Ok(p) })
///     .request_stream("count", |_req| {
///         source::from_iter((0..5u32).map(|i| Payload::from(i.to_string())))
///     });
/// let server = Server::bind("127.0.0.1:0", router, ServerConfig::default()).await?.spawn();
///
/// let client = Client::connect(server.local_addr(), ClientConfig::default()).await?;
/// let answer = client.request_response("echo", Payload::from("hi")).await?;
/// assert_eq!(answer.data_utf8(), Some("hi"));
///
/// // request(n) becomes REQUEST_N: the server is asked for 2 at a time.
/// let (s, result) = subscriber::collect(subscriber::RequestStrategy::Prefetch(2));
/// client.request_stream("count", Payload::default()).subscribe(Box::new(s));
/// let got = tokio::task::spawn_blocking(move || result.wait()).await.unwrap().unwrap();
/// assert_eq!(got.len(), 5);
/// # Ok::<(), rs_impl::rsocket::RSocketError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Client {
    shared: std::sync::Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("conn", &self.shared.conn)
            .finish()
    }
}

impl Client {
    /// Connects to `addr`, sends SETUP (with `config`), and starts the connection's tasks on
    /// the current tokio runtime. With `config.lease`, waits for the server's first LEASE.
    ///
    /// # Errors
    ///
    /// An invalid `config`, a transport error, or (with `config.lease`) a connection that
    /// ended before its first LEASE.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it resolves drops the connection.
    pub async fn connect(
        addr: impl ToSocketAddrs,
        config: ClientConfig,
    ) -> Result<Client, RSocketError> {
        config.validate()?;
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (rd, wr) = stream.into_split();
        let cc = &config.connection;
        let conn = Arc::new(Conn::new(Role::Client, cc.clone()));
        if config.lease {
            conn.enforce_lease(&mut conn.lease.lock());
        }
        conn.send(Frame::Setup(Box::new(Setup {
            version: VERSION,
            keepalive_ms: config.keepalive_ms().expect("validated"),
            lifetime_ms: config.lifetime_ms().expect("validated"),
            resume_token: None,
            lease: config.lease,
            metadata_mime: config.metadata_mime.clone(),
            data_mime: config.data_mime.clone(),
            payload: config.setup_payload.clone(),
        })));
        let codec = FrameCodec::new(cc.max_frame, cc.mtu);
        let out = writer::Writer::shared(wr, codec.clone(), cc.write_buffer);
        tokio::spawn(writer::run(conn.clone(), out.clone()));
        let frames = FramedRead::with_capacity(rd, codec, 16 << 10);
        let reader = tokio::spawn(reader::run(conn.clone(), frames, None, None, out));
        conn.set_reader_task(reader.abort_handle());
        if conn.is_closed() {
            reader.abort();
        }
        tokio::spawn(keepalive::run(
            conn.clone(),
            Keepalive {
                send_every: Some(config.keepalive_interval),
                lifetime: config.max_lifetime,
                lease: None,
            },
        ));
        let client = Client {
            shared: std::sync::Arc::new(Shared { conn }),
        };
        if config.lease {
            FirstLease(&client.shared.conn).await?;
        }
        Ok(client)
    }

    fn conn(&self) -> &Arc<Conn> {
        &self.shared.conn
    }

    /// A request_stream on `route`: a cold publisher; each subscriber gets its own stream,
    /// opened by its first `request(n)` (REQUEST_STREAM with initial n), continued by
    /// REQUEST_N frames, ended by `cancel` (CANCEL).
    ///
    /// The subscriber's signals come from the connection's reader task (see the module
    /// documentation's contract).
    pub fn request_stream(&self, route: impl Into<Route>, payload: Payload) -> RemoteStream {
        RemoteStream {
            shared: self.shared.clone(),
            route: Some(route.into()),
            payload,
            input: None,
        }
    }

    /// A request_channel on `route`: `first` goes in the REQUEST_CHANNEL frame, then the
    /// elements of `input` as PAYLOAD frames, as the responder grants credit; the returned
    /// publisher is the responder's answers (as for [`request_stream`](Self::request_stream)).
    /// Each subscriber of the returned publisher opens its own channel and subscribes
    /// `input` again.
    pub fn request_channel<P>(
        &self,
        route: impl Into<Route>,
        first: Payload,
        input: P,
    ) -> RemoteStream
    where
        P: Publisher<Payload> + Send + Sync + 'static,
    {
        let input: ChannelInput = std::sync::Arc::new(input);
        RemoteStream {
            shared: self.shared.clone(),
            route: Some(route.into()),
            payload: first,
            input: Some(input),
        }
    }

    /// A request_response on `route`: a future of the answer (sent when first polled).
    pub fn request_response(&self, route: impl Into<Route>, payload: Payload) -> Response {
        Response::new(self.conn().clone(), Some(route.into()), payload)
    }

    /// A fire-and-forget on `route`: queued for the writer; resolves once queued.
    ///
    /// # Errors
    ///
    /// The connection is closed, or the peer's LEASE does not allow a request.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it resolves may or may not send the request.
    pub async fn fire_and_forget(
        &self,
        route: impl Into<Route>,
        payload: Payload,
    ) -> Result<(), RSocketError> {
        let conn = self.conn();
        let limit = conn.config.control_queue;
        futures::future::poll_fn(|cx| conn.outbox.poll_below(cx, limit)).await;
        conn.take_lease()?;
        let payload = writer::with_route(Some(route.into()), payload);
        if conn.outbox.push(Out::Open(Opening::FireAndForget(payload))) {
            Ok(())
        } else {
            Err(self.closed_error())
        }
    }

    /// Sends METADATA_PUSH (connection-level metadata).
    ///
    /// # Errors
    ///
    /// The connection is closed.
    pub async fn metadata_push(&self, metadata: Bytes) -> Result<(), RSocketError> {
        let conn = self.conn();
        let limit = conn.config.control_queue;
        futures::future::poll_fn(|cx| conn.outbox.poll_below(cx, limit)).await;
        if conn
            .outbox
            .push(Out::Frame(Frame::MetadataPush { metadata }))
        {
            Ok(())
        } else {
            Err(self.closed_error())
        }
    }

    fn closed_error(&self) -> RSocketError {
        self.conn()
            .close_reason()
            .unwrap_or_else(|| RSocketError::Closed("the connection is closed".into()))
    }

    /// Closes the connection: every stream on it ends with [`RSocketError::Closed`].
    pub fn close(&self) {
        self.conn()
            .close(RSocketError::Closed("closed by the client".into()), None);
    }

    /// Whether the connection is closed, and why.
    pub fn closed(&self) -> Option<RSocketError> {
        self.conn().close_reason()
    }

    /// Streams open on the connection now.
    pub fn open_streams(&self) -> usize {
        self.conn().table.len()
    }
}

/// Waits for the first LEASE.
struct FirstLease<'a>(&'a Arc<Conn>);

impl Future for FirstLease<'_> {
    type Output = Result<(), RSocketError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let conn = self.0;
        if let Some(e) = conn.close_reason() {
            return Poll::Ready(Err(e));
        }
        let mut lease = conn.lease.lock();
        if lease.expires.is_some() {
            return Poll::Ready(Ok(()));
        }
        lease.waiters.push(cx.waker().clone());
        drop(lease);
        if let Some(e) = conn.close_reason() {
            return Poll::Ready(Err(e));
        }
        Poll::Pending
    }
}

/// A remote stream (request_stream) or channel (request_channel): a cold [`Publisher`] of the
/// responder's payloads. Each `subscribe` opens a new stream on the connection.
///
/// # Contract
///
/// * `on_subscribe` at once, on the subscribing thread; nothing is sent before the first
///   `request(n)`, which sends the request with `n` as its initial credit.
/// * `request(n)` sends REQUEST_N(n) (credit coalesced while a frame waits for the writer;
///   above 2^31 − 2 split, unbounded as 2^31 − 1); `cancel` sends CANCEL and drops the
///   subscriber.
/// * Elements and the terminal signal come from the connection's reader task (or from a
///   thread that calls `request` while elements wait), serially. Keep `on_next` short, or
///   move the work elsewhere: a subscriber that holds the reader holds every stream of the
///   connection.
/// * The responder's ERROR arrives as `on_error` with an [`RSocketError::Remote`]; the
///   connection's end as `on_error` with its reason.
#[must_use = "a remote stream sends nothing until subscribed and requested from"]
pub struct RemoteStream {
    shared: std::sync::Arc<Shared>,
    route: Option<Route>,
    payload: Payload,
    input: Option<ChannelInput>,
}

impl std::fmt::Debug for RemoteStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStream")
            .field("route", &self.route.as_ref().map(Route::name))
            .field("channel", &self.input.is_some())
            .finish()
    }
}

impl Publisher<Payload> for RemoteStream {
    fn subscribe(&self, subscriber: BoxSubscriber<Payload>) {
        let route = self.route.clone();
        let payload = self.payload.clone();
        let request = match &self.input {
            None => Request::Stream { route, payload },
            Some(input) => Request::Channel {
                route,
                payload,
                input: input.clone(),
            },
        };
        let conn = self.shared.conn.clone();
        let inbound = Inbound::requester(conn.clone(), request);
        inbound.start(subscriber);
        if let Some(e) = conn.close_reason() {
            inbound.fail(e.into());
        }
    }
}
