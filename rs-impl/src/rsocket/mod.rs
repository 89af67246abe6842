//! Reactive Streams across processes: RSocket 1.0 over TCP, on tokio (feature `rsocket`).
//!
//! [RSocket](https://rsocket.io) carries the Reactive Streams contract over the network:
//! `request(n)` travels as REQUEST_N, `cancel` as CANCEL, `on_error` as ERROR, and it is
//! spoken by rsocket-java, rsocket-py, rsocket-js and others. A [`Server`] serves publishers
//! by route ([`Router`]); a [`Client`]'s [`request_stream`](Client::request_stream) returns a
//! [`Publisher`](rs_api::Publisher) whose subscriber's demand is the remote publisher's
//! demand.
//!
//! # Contract
//!
//! **What a subscriber of a remote stream sees** ([`RemoteStream`]): `on_subscribe` at once;
//! its first `request(n)` sends the request (REQUEST_STREAM or REQUEST_CHANNEL) carrying `n`
//! as its initial credit, and each later `request(n)` a REQUEST_N: the responder sends at
//! most what was requested, however the requests are split. Demand is `u64` and saturates;
//! on the wire a bounded demand goes in frames of at most 2^31 − 2, and an unbounded one
//! (3.17) as the single credit 2^31 − 1, which rsocket-java reads as unbounded. `request(0)`
//! cancels the stream and delivers rule 3.9's error. `cancel` sends CANCEL and drops the
//! subscriber (3.13). The responder's ERROR arrives as `on_error` carrying
//! [`RSocketError::Remote`] with its [`ErrorCode`]; the connection's end as `on_error` with
//! its reason.
//!
//! **Who may call what, and from which thread.** `subscribe`, `request` and `cancel` from
//! any thread, re-entrantly too; they only record and queue (they never wait for the
//! network). Elements and terminal signals are delivered serially on the connection's reader
//! task (or on a thread that calls `request` while elements wait): keep `on_next` short, as
//! a subscriber that holds the reader holds every stream of its connection.
//!
//! **What a served publisher sees** (the server's `request_stream` / `request_channel`
//! handlers, the client's channel input): it is asked for no more than the peer granted
//! and no more than `stream_window` elements beyond what the writer has written to the
//! socket, so a slow reader on the other side slows the publisher to its pace. Requests come
//! from the connection's tasks; no request starts after its terminal signal (2.4). The
//! peer's CANCEL, the peer's ERROR and the connection's end cancel it. Its `on_error` goes
//! out as `ERROR[APPLICATION_ERROR]` with the error's text (or the code of an
//! [`RSocketError::Remote`]).
//!
//! **When slow.** Nothing in a connection grows without bound. Every bound is a field of
//! [`ConnectionConfig`]:
//!
//! | what | bound |
//! |---|---|
//! | elements a served publisher was asked for and the socket has not taken | `stream_window` per stream |
//! | items waiting for the writer | `control_queue` (the reader waits above it before handling a request, a KEEPALIVE(R) or a METADATA_PUSH) + per stream `stream_window` + 2 (one credit-or-cancel item and one opening request or answer) |
//! | bytes encoded and not yet taken by the socket | `write_buffer` plus one frame |
//! | elements received and not yet delivered to a busy subscriber | `inbound_buffer` per stream; when full, the reader stops reading the socket |
//! | one frame read | `max_frame` bytes (the decoder refuses a longer length prefix before reading it) |
//! | one reassembled payload | `max_payload` bytes; fragmented payloads at once: `max_streams` |
//! | streams | `max_streams` per direction |
//! | frames for inbound lanes (a server with `lanes > 1`) | one waiting in the reader + [`LANE_INPUT_BUFFER`] + per lane `lane_capacity` ([`ServerConfig::lane_capacity`]) + [`LANE_CREDIT`] |
//!
//! A peer that stops reading therefore stops the writer, then the served publishers (no more
//! requests), then the reader (its requests wait): TCP holds the rest.
//!
//! **Inbound lanes (seed 004).** A server handles each connection's frames on the
//! connection's reader task by default ([`ServerConfig::lanes`] = 1: nothing else is built).
//! With `lanes` = n > 1 the peer's requests (REQUEST_STREAM, REQUEST_CHANNEL,
//! REQUEST_RESPONSE, REQUEST_FNF) and the frames that follow on their streams (REQUEST_N,
//! CANCEL, PAYLOAD, ERROR) are dispatched across n lanes by the keyed-lanes operator
//! ([`Flow::subscribe_lanes`](crate::flow::Flow::subscribe_lanes)), keyed by a stable hash
//! of the request's route: lane [`lane_of`](crate::lanes::lane_of)`(murmur2(route), n)`,
//! the route `""` for a request without one. A stream's frames follow the lane of its
//! route, so each stream's frames and each route's requests are handled in wire order;
//! different lanes run in parallel on the tokio runtime, and have no order between them.
//! Control frames (SETUP, KEEPALIVE, LEASE, METADATA_PUSH, ERROR on stream 0) never enter a
//! lane: the reader answers them even while a lane is full or its handler is stalled. A
//! full lane stops the reader at the next frame for a lane, so the socket is not read (one
//! frame waits in the reader; the table above adds up the rest), and holds back the frames
//! of every lane behind it (head-of-line blocking, as in Pekko's partition hub). The stream
//! id checks (parity, growth, a frame for an id never opened) stay in wire order, in the
//! reader. [`ConnectionStats::lanes`] says how many lanes a connection built.
//!
//! **On termination.** A stream leaves the connection's stream table when its last half
//! ends; a late frame for it is ignored. The connection's end (the peer's ERROR on stream 0,
//! end of file, a transport error, a protocol error, a keepalive timeout, [`Client::close`],
//! [`ServerHandle::shutdown`]) ends every stream once, as above.
//!
//! **A panicking subscriber or handler.** A subscriber's panic is caught at the callback
//! (2.13): its stream is cancelled (CANCEL goes out) and the others go on. A handler's
//! panic is answered `ERROR[APPLICATION_ERROR]` on its stream.
//!
//! # The protocol
//!
//! RSocket 1.0 over TCP, each frame behind its 24-bit length prefix: SETUP (version 1.0,
//! keepalive interval and max lifetime, metadata and data MIME types, the setup payload),
//! KEEPALIVE in both roles (the client sends it every interval; either side closes a
//! connection whose peer is silent past the max lifetime), REQUEST_RESPONSE, REQUEST_FNF,
//! REQUEST_STREAM, REQUEST_CHANNEL, REQUEST_N, CANCEL, PAYLOAD (NEXT, COMPLETE, FOLLOWS:
//! payloads larger than [`ConnectionConfig::mtu`] are fragmented and reassembled), ERROR
//! with every code of the spec ([`ErrorCode`]), METADATA_PUSH, LEASE (honoured by the
//! requester when the peer sends it; granted by the server to clients that ask), and routing
//! by the routing extension inside composite metadata ([`metadata`], [`Route`]), as Spring
//! Messaging routes. **Resumption is not supported**: a SETUP asking for it is answered
//! `ERROR[REJECTED_SETUP]`, a RESUME `ERROR[CONNECTION_ERROR]`.
//!
//! Bad input ends only its own connection, with the spec's ERROR frame: a truncated frame, a
//! length prefix above `max_frame`, a metadata length beyond its frame, a REQUEST_N of 0, a
//! frame of an unknown type without the IGNORE flag, a frame for a stream id that was never
//! opened (a `CONNECTION_ERROR` each); a bad SETUP (`INVALID_SETUP`, `UNSUPPORTED_SETUP`,
//! `REJECTED_SETUP`). Where the spec is loose this module decides as follows: a REQUEST_N of
//! 0 ends the connection (the sender broke a MUST; rule 3.9 on the wire); a frame for a
//! stream that *has ended* is ignored (it crossed the end on the wire), one for an id that
//! was *never opened* is an error; composite metadata's explicit MIME length byte is read
//! as length − 1, as rsocket-java and rsocket-py write it.
//!
//! # Layout
//!
//! | file | what it holds |
//! |---|---|
//! | `frame/` | frame types, flags and fields; parsing (zero-copy) and writing (fragmentation) |
//! | `codec.rs` | the TCP length prefix: tokio-util's `Decoder`/`Encoder` |
//! | `metadata.rs` | composite metadata and routing |
//! | `part.rs` | the parts of a stream as the connection sees them (traits) |
//! | `table.rs` | the stream table: ids, slots, the close |
//! | `outbox.rs` | the writer's queue and its bounds |
//! | `inbound.rs` | PAYLOADs to a local subscriber; its requests and cancel to the wire |
//! | `pump.rs` | a local publisher's elements to the wire, against the peer's credit |
//! | `response.rs` | request_response on both sides |
//! | `dispatch.rs` | the peer's stream frames to their streams (one lane's handling) |
//! | `lanes.rs` | a server connection's inbound lanes: stream frames keyed by route onto the keyed-lanes operator |
//! | `conn/` | the connection: shared state and close; reader, writer, keepalive tasks |
//! | `router.rs` | the server's handlers by route |
//! | `client.rs`, `server.rs` | the public entry points |
//!
//! # Examples
//!
//! A server serving a stream, and a client consuming it two elements at a time (with four
//! inbound lanes per connection, the server would take `config.lanes = 4`):
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::rsocket::{Client, ClientConfig, Payload, Router, Server, ServerConfig};
//! use rs_impl::{source, subscriber};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let router = Router::new().request_stream("numbers", |request: Payload| {
//!     let n: u32 = request.data_utf8().unwrap().parse().unwrap();
//!     source::from_iter((0..n).map(|i| Payload::from(i.to_string())))
//! });
//! let server = Server::bind("127.0.0.1:0", router, ServerConfig::default()).await?.spawn();
//!
//! let client = Client::connect(server.local_addr(), ClientConfig::default()).await?;
//! let numbers = client.request_stream("numbers", Payload::from("10"));
//! let (s, result) = subscriber::collect(subscriber::RequestStrategy::Prefetch(2));
//! numbers.subscribe(Box::new(s));
//! let got = tokio::task::spawn_blocking(move || result.wait()).await.unwrap().unwrap();
//! assert_eq!(got.len(), 10);
//! assert_eq!(got[9].data_utf8(), Some("9"));
//! # Ok::<(), rs_impl::rsocket::RSocketError>(())
//! # }).unwrap();
//! ```

mod client;
mod codec;
mod config;
mod conn;
mod dispatch;
mod error;
mod frame;
mod inbound;
mod lanes;
pub mod metadata;
#[cfg(rs_loom)]
#[doc(hidden)]
pub mod model;
mod outbox;
mod part;
mod payload;
mod pump;
mod response;
mod router;
mod server;
mod table;

pub use client::{Client, RemoteStream};
pub use config::{
    ClientConfig, ConfigError, ConnectionConfig, LeaseGrant, ServerConfig,
    DEFAULT_INBOUND_LANE_CAPACITY,
};
pub use error::{ErrorCode, RSocketError};
pub use lanes::{LANE_CREDIT, LANE_INPUT_BUFFER};
pub use metadata::Route;
pub use payload::Payload;
pub use response::Response;
pub use router::{ChannelInbound, Router};
pub use server::{ConnectionStats, Server, ServerHandle};
