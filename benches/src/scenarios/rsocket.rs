//! Scenarios `remote-ping-pong` and `request-stream`: RSocket over loopback, both endpoints
//! in this process (`rs_impl::rsocket`, feature `rsocket`).
//!
//! * `remote-ping-pong` — seed 004's RemotePingPong shape (Akka.NET Artery's benchmark): `c`
//!   clients, each its own connection, each keeping 50 request_responses in flight; `n`
//!   round trips in all, `n / c` per client. Each request carries its index (8 bytes, a view
//!   of a static table, as in `request-stream`, so that the allocation figures are the
//!   connection's and the client's futures'), the server echoes it, the client checks the
//!   answer and adds the index to the checksum. The server's `ping` handler is the
//!   synchronous form, `Router::request_response_sync("ping", Ok)` (what a user writes for an
//!   echo: no future is boxed per request), in the first two of our rows; the third row has
//!   an `async` handler (`Router::request_response`), which adds one allocation per round
//!   trip (the boxed future): the form for a handler that awaits something.
//!   Parameter: clients. Peer, the
//!   ceiling: a raw tokio TCP echo of 24-bit length-prefixed 8-byte messages with the same
//!   window (50 in flight per connection), batched reads and writes on both sides, no
//!   protocol. Messages per second = round trips per second. Ours runs against three servers:
//!   the default (`lanes = 1`: every frame handled on the connection's reader task) and one
//!   with two inbound lanes per connection (`lanes = 2`: request frames keyed by route onto
//!   the keyed-lanes operator; every client uses the one route `ping`, so one lane serves
//!   each connection and the row shows what the lane machinery costs), and the default with
//!   the `async` handler.
//! * `request-stream` — one request_stream of `n` small payloads (8 bytes of data, no
//!   metadata) from the server to a `for_each` subscriber with request strategy k. The
//!   payloads are views of a static table, so that the counting allocator sees only what the
//!   connection itself allocates per element (`bytes_per_element`: the target is 0).
//!   Parameter: the subscriber's request size (`Prefetch(k)`: REQUEST_N k/2 at a time;
//!   unbounded: one REQUEST_N of 2^31 − 1).
//!
//! One tokio runtime (two worker threads) and one server serve every run; the clients connect
//! inside the run (setup amortised over `n`).

use std::sync::OnceLock;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use rs_api::Publisher;
use rs_impl::rsocket::{
    Client, ClientConfig, Payload, Route, Router, Server, ServerConfig, ServerHandle,
};
use rs_impl::source;
use rs_impl::subscriber::for_each;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario, UNBOUNDED};
use crate::scenarios::source::strategy;

/// Requests in flight per client (the RemotePingPong window).
pub const IN_FLIGHT: usize = 50;

/// 8-byte little-endian numbers `0..TABLE_LEN`, for payloads that allocate nothing.
const TABLE_LEN: usize = 1 << 16;
static TABLE: [u8; TABLE_LEN * 8] = {
    let mut t = [0u8; TABLE_LEN * 8];
    let mut i = 0;
    while i < TABLE_LEN {
        let b = (i as u64).to_le_bytes();
        let mut j = 0;
        while j < 8 {
            t[i * 8 + j] = b[j];
            j += 1;
        }
        i += 1;
    }
    t
};

fn table_payload(i: u64) -> Payload {
    let at = (i as usize % TABLE_LEN) * 8;
    Payload::from(Bytes::from_static(&TABLE[at..at + 8]))
}

struct Env {
    rt: tokio::runtime::Runtime,
    server: ServerHandle,
    /// The same router with two inbound lanes per connection.
    laned: ServerHandle,
    /// A server whose `ping` handler is `async` (`Router::request_response`).
    asynchronous: ServerHandle,
    echo: std::net::SocketAddr,
}

/// The runtime, our server and the raw echo server, made once.
fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let router = || {
            Router::new()
                // The form a user picks for an echo: a synchronous handler (nothing boxed
                // per request). The first two `remote-ping-pong` rows use it.
                .request_response_sync("ping", Ok)
                .request_stream("nums", |req: Payload| {
                    let n = req.data.clone().get_u64_le();
                    source::from_iter((0..n).map(table_payload))
                })
        };
        let server = rt
            .block_on(Server::bind(
                "127.0.0.1:0",
                router(),
                ServerConfig::default(),
            ))
            .expect("bind");
        let server = rt.block_on(async { server.spawn() });
        let mut two = ServerConfig::default();
        two.lanes = 2;
        let laned = rt
            .block_on(Server::bind("127.0.0.1:0", router(), two))
            .expect("bind");
        let laned = rt.block_on(async { laned.spawn() });
        // The form a handler that awaits something takes: an `async` handler (its future
        // boxed per request). The third row uses it.
        let async_router =
            Router::new().request_response("ping", |p: Payload| async move { Ok(p) });
        let asynchronous = rt
            .block_on(Server::bind(
                "127.0.0.1:0",
                async_router,
                ServerConfig::default(),
            ))
            .expect("bind");
        let asynchronous = rt.block_on(async { asynchronous.spawn() });
        let echo = rt.block_on(echo_server());
        Env {
            rt,
            server,
            laned,
            asynchronous,
            echo,
        }
    })
}

/// Ours: `clients` connections, 50 request_responses in flight each, `n` round trips in all.
pub fn rsocket_ping_pong(clients: u64, n: u64) -> u64 {
    ping_pong(env().server.local_addr(), clients, n)
}

/// Ours against the server with two inbound lanes per connection.
pub fn rsocket_ping_pong_lanes2(clients: u64, n: u64) -> u64 {
    ping_pong(env().laned.local_addr(), clients, n)
}

/// Ours against a server whose handler is `async` (its answer future boxed per request).
pub fn rsocket_ping_pong_async(clients: u64, n: u64) -> u64 {
    ping_pong(env().asynchronous.local_addr(), clients, n)
}

fn ping_pong(addr: std::net::SocketAddr, clients: u64, n: u64) -> u64 {
    let env = env();
    let clients = clients.max(1);
    env.rt.block_on(async move {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let (from, to) = (n * c / clients, n * (c + 1) / clients);
                tokio::spawn(async move {
                    let client = Client::connect(addr, ClientConfig::default())
                        .await
                        .expect("connect");
                    let route = Route::new("ping");
                    let sum = Checksum::default();
                    let mut next = from;
                    let mut inflight = FuturesUnordered::new();
                    // The request carries a view of the static table (no allocation of
                    // the bench's own); the answer must be the same 8 bytes.
                    let send = |i: u64| {
                        client
                            .request_response(&route, table_payload(i))
                            .map(move |r| (i, r))
                    };
                    while next < to && inflight.len() < IN_FLIGHT {
                        inflight.push(send(next));
                        next += 1;
                    }
                    while let Some((i, r)) = inflight.next().await {
                        let mut answer = r.expect("an answer").data;
                        assert_eq!(answer.get_u64_le(), i % TABLE_LEN as u64, "a wrong answer");
                        sum.add(i);
                        if next < to {
                            inflight.push(send(next));
                            next += 1;
                        }
                    }
                    sum.get()
                })
            })
            .collect();
        let mut total = 0u64;
        for t in tasks {
            total = total.wrapping_add(t.await.expect("client task"));
        }
        total
    })
}

/// The raw echo server: 3-byte length prefix, then the message; echoed back in batches.
async fn echo_server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let mut inbuf = BytesMut::with_capacity(64 << 10);
                let mut out = BytesMut::with_capacity(64 << 10);
                loop {
                    match s.read_buf(&mut inbuf).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    while inbuf.len() >= 3 {
                        let len = ((inbuf[0] as usize) << 16)
                            | ((inbuf[1] as usize) << 8)
                            | inbuf[2] as usize;
                        if inbuf.len() < 3 + len {
                            break;
                        }
                        out.put_slice(&inbuf[..3 + len]);
                        inbuf.advance(3 + len);
                    }
                    if s.write_all_buf(&mut out).await.is_err() {
                        return;
                    }
                    out.clear();
                }
            });
        }
    });
    addr
}

/// The ceiling: the same shape over raw length-prefixed TCP messages.
pub fn tcp_echo(clients: u64, n: u64) -> u64 {
    let env = env();
    let addr = env.echo;
    let clients = clients.max(1);
    env.rt.block_on(async move {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let (from, to) = (n * c / clients, n * (c + 1) / clients);
                tokio::spawn(async move {
                    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
                    s.set_nodelay(true).expect("nodelay");
                    let sum = Checksum::default();
                    let (mut next, mut done) = (from, from);
                    let mut out = BytesMut::with_capacity(64 << 10);
                    let mut inbuf = BytesMut::with_capacity(64 << 10);
                    let put = |out: &mut BytesMut, i: u64| {
                        out.put_slice(&[0, 0, 8]);
                        out.put_u64_le(i);
                    };
                    while next < to && next - from < IN_FLIGHT as u64 {
                        put(&mut out, next);
                        next += 1;
                    }
                    s.write_all_buf(&mut out).await.expect("write");
                    out.clear();
                    while done < to {
                        if s.read_buf(&mut inbuf).await.expect("read") == 0 {
                            panic!("the echo server closed");
                        }
                        while inbuf.len() >= 11 {
                            inbuf.advance(3);
                            sum.add(inbuf.get_u64_le());
                            done += 1;
                            if next < to {
                                put(&mut out, next);
                                next += 1;
                            }
                        }
                        if !out.is_empty() {
                            s.write_all_buf(&mut out).await.expect("write");
                            out.clear();
                        }
                    }
                    sum.get()
                })
            })
            .collect();
        let mut total = 0u64;
        for t in tasks {
            total = total.wrapping_add(t.await.expect("client task"));
        }
        total
    })
}

/// Ours: one request_stream of `n` payloads into `for_each` with request strategy `k`.
pub fn rsocket_request_stream(k: u64, n: u64) -> u64 {
    let env = env();
    let client = env
        .rt
        .block_on(Client::connect(
            env.server.local_addr(),
            ClientConfig::default(),
        ))
        .expect("connect");
    let sum = std::sync::Arc::new(Checksum::default());
    let s2 = sum.clone();
    let mut index = 0u64;
    let (subscriber, done) = for_each(strategy(k), move |p: Payload| {
        let mut d = p.data;
        assert_eq!(d.get_u64_le(), index % TABLE_LEN as u64, "out of order");
        s2.add(index);
        index += 1;
    });
    let mut req = BytesMut::with_capacity(8);
    req.put_u64_le(n);
    client
        .request_stream("nums", Payload::from(req.freeze()))
        .subscribe(Box::new(subscriber));
    done.wait().expect("the stream completes");
    client.close();
    sum.get()
}

/// Scenario `remote-ping-pong`.
#[must_use]
pub fn ping_pong_scenario() -> Scenario {
    Scenario {
        id: "remote-ping-pong",
        title: "RemotePingPong: request_response round trips, 50 in flight per client, over loopback",
        param_name: "clients",
        params: [1, 5, 10, 15, 20, 25, 30].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl rsocket request_response",
                ours: true,
                per_param: true,
                what: "our RSocket client and server: each client its own connection, 50 request_responses in flight (FuturesUnordered), 8-byte payloads echoed",
                run: rsocket_ping_pong,
                lossy: false,
            },
            Implementation {
                name: "rs-impl rsocket request_response, lanes = 2",
                ours: true,
                per_param: true,
                what: "the same against a server with two inbound lanes per connection (ServerConfig::lanes = 2): request frames keyed by route onto the keyed-lanes operator",
                run: rsocket_ping_pong_lanes2,
                lossy: false,
            },
            Implementation {
                name: "rs-impl rsocket request_response, async handler",
                ours: true,
                per_param: true,
                what: "the first row with the server's handler written `async` (Router::request_response: its answer future boxed per request) instead of Router::request_response_sync",
                run: rsocket_ping_pong_async,
                lossy: false,
            },
            Implementation {
                name: "raw tokio TCP echo (ceiling)",
                ours: false,
                per_param: true,
                what: "the same shape with no protocol: 24-bit length-prefixed 8-byte messages echoed, 50 in flight per connection, batched reads and writes",
                run: tcp_echo,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}

/// Scenario `request-stream`.
#[must_use]
pub fn stream_scenario() -> Scenario {
    Scenario {
        id: "request-stream",
        title: "request_stream: small payloads from the server to one subscriber, over loopback",
        param_name: "request size",
        params: [64, 256, 1024, UNBOUNDED].into_iter().map(Param::new).collect(),
        implementations: vec![Implementation {
            name: "rs-impl rsocket request_stream",
            ours: true,
            per_param: true,
            what: "our RSocket client and server: source::from_iter of 8-byte payloads (static) served by route, the client's for_each subscriber requesting with Prefetch(k)",
            run: rsocket_request_stream,
            lossy: false,
        }],
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}
