//! RSocket over loopback, both ends ours: each interaction, demand carried end to end
//! (REQUEST_N), cancel, errors with their codes, fragmentation, LEASE, keepalive.
#![cfg(feature = "rsocket")]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[path = "support/rsocket.rs"]
mod support;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rs_api::Publisher;
use rs_impl::rsocket::{
    Client, ClientConfig, ErrorCode, LeaseGrant, Payload, RSocketError, Router, ServerConfig,
};
use rs_impl::source;
use support::{probe, serve, Counting, Ev, Raw};

fn client(
    rt: &tokio::runtime::Runtime,
    addr: std::net::SocketAddr,
    config: ClientConfig,
) -> Client {
    rt.block_on(Client::connect(addr, config)).unwrap()
}

/// One round trip on the connection: everything the server queued before it answers has
/// arrived when this returns (one writer, in order).
fn barrier(rt: &tokio::runtime::Runtime, c: &Client) {
    rt.block_on(c.request_response("ping", Payload::from("ping")))
        .unwrap();
}

fn router_with(counting: &Counting) -> Router {
    let c = counting.clone();
    Router::new()
        .request_response("ping", |p: Payload| async move { Ok(p) })
        .request_stream("count", move |_| c.clone())
}

#[test]
fn request_response_echo_error_and_unknown_route() {
    let router = Router::new()
        .request_response("echo", |p: Payload| async move { Ok(p) })
        .request_response("fail", |_| async move {
            Err(RSocketError::remote(ErrorCode::Rejected, "not today").into())
        })
        .request_response("later", |p: Payload| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Ok(p)
        });
    let (rt, server) = serve(router, ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let p =
        rt.block_on(c.request_response("echo", Payload::new("d", Some(Bytes::from_static(b"")))));
    assert_eq!(p.unwrap().data_utf8(), Some("d"));
    let later = rt
        .block_on(c.request_response("later", Payload::from("x")))
        .unwrap();
    assert_eq!(later.data_utf8(), Some("x"));
    let e = rt
        .block_on(c.request_response("fail", Payload::from("x")))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Rejected));
    assert_eq!(e.message(), "not today");
    let e = rt
        .block_on(c.request_response("nowhere", Payload::from("x")))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Invalid), "{e}");
    assert_eq!(c.open_streams(), 0);
}

/// The synchronous handler form: each request is answered with the handler's own value
/// (called once per request), its error goes out as an ERROR with its code, its panic as an
/// APPLICATION_ERROR, and the connection serves on after both.
#[test]
fn request_response_sync_answers_errors_and_panics() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let router = Router::new()
        .request_response_sync("echo", move |p: Payload| {
            counted.fetch_add(1, Ordering::Relaxed);
            Ok(p)
        })
        .request_response_sync("fail", |_| {
            Err(RSocketError::remote(ErrorCode::Rejected, "not today").into())
        })
        .request_response_sync("boom", |_| panic!("the sync handler broke"));
    let (rt, server) = serve(router, ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let answers = rt.block_on(futures::future::join_all(
        (0..100).map(|i| c.request_response("echo", Payload::from(i.to_string()))),
    ));
    for (i, a) in answers.into_iter().enumerate() {
        assert_eq!(a.unwrap().data_utf8(), Some(&*i.to_string()));
    }
    assert_eq!(calls.load(Ordering::Relaxed), 100);
    let e = rt
        .block_on(c.request_response("fail", Payload::from("x")))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Rejected));
    assert_eq!(e.message(), "not today");
    let e = rt
        .block_on(c.request_response("boom", Payload::from("x")))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ApplicationError), "{e}");
    assert!(
        e.message().contains("the sync handler broke"),
        "{}",
        e.message()
    );
    let p = rt
        .block_on(c.request_response("echo", Payload::from("after")))
        .unwrap();
    assert_eq!(p.data_utf8(), Some("after"));
    assert_eq!(calls.load(Ordering::Relaxed), 101);
    assert_eq!(c.open_streams(), 0);
}

#[test]
fn request_stream_sends_exactly_what_was_requested_then_cancel_reaches_the_publisher() {
    let counting = Counting::default();
    let (rt, server) = serve(router_with(&counting), ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let (s, h) = probe();
    c.request_stream("count", Payload::default())
        .subscribe(Box::new(s));
    h.request(3);
    assert_eq!(h.take(3), ["0", "1", "2"]);
    barrier(&rt, &c);
    assert!(h.pending().is_empty(), "more than the 3 requested");
    assert_eq!(counting.produced.load(Ordering::SeqCst), 3);
    h.request(2);
    assert_eq!(h.take(2), ["3", "4"]);
    barrier(&rt, &c);
    assert!(h.pending().is_empty());
    assert_eq!(counting.produced.load(Ordering::SeqCst), 5);
    assert_eq!(counting.requested.load(Ordering::SeqCst), 5);
    h.cancel();
    support_wait("the server's publisher is cancelled", || {
        counting.cancelled.load(Ordering::SeqCst)
    });
    assert!(
        h.dropped.load(Ordering::SeqCst),
        "rule 3.13: the subscriber is dropped"
    );
    barrier(&rt, &c);
    assert_eq!(c.open_streams(), 0);
}

fn support_wait(what: &str, cond: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < support::PATIENCE,
            "timed out waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_finite_stream_completes_under_unbounded_demand() {
    let counting = Counting {
        limit: Some(1000),
        ..Counting::default()
    };
    let (rt, server) = serve(router_with(&counting), ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let (s, h) = probe();
    c.request_stream("count", Payload::default())
        .subscribe(Box::new(s));
    h.request(u64::MAX);
    assert_eq!(h.take(1000).len(), 1000);
    assert!(matches!(h.next(), Ev::Complete));
    // Unbounded on the wire (2^31 - 1), the server's publisher is still asked window by
    // window (64 by default) as the socket takes its elements.
    let asked = counting.requested.load(Ordering::SeqCst);
    assert!((1000..=1000 + 64).contains(&asked), "asked {asked}");
}

#[test]
fn request_zero_is_rule_3_9_and_cancels() {
    let counting = Counting::default();
    let (rt, server) = serve(router_with(&counting), ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let (s, h) = probe();
    c.request_stream("count", Payload::default())
        .subscribe(Box::new(s));
    h.request(1);
    assert_eq!(h.take(1), ["0"]);
    h.request(0);
    match h.next() {
        Ev::Error(e) => assert!(e.to_string().contains("3.9"), "{e}"),
        other => panic!("expected the 3.9 error, got {other:?}"),
    }
    support_wait("cancelled", || counting.cancelled.load(Ordering::SeqCst));
}

/// Issue item 3: a counting server publisher, a client requesting small batches with
/// pauses: at every element the server produced no more than the client had requested.
#[test]
fn backpressure_end_to_end_produced_never_exceeds_requested() {
    let counting = Counting::default();
    let client_requested = Arc::new(AtomicU64::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let (cr, v, produced) = (
        client_requested.clone(),
        violations.clone(),
        counting.produced.clone(),
    );
    // The server's publisher checks, as it emits each element, against what the client's
    // subscriber had requested by then (the client records before it requests).
    let checked = CheckedCounting {
        inner: counting.clone(),
        client_requested: cr,
        violations: v,
    };
    let router = Router::new()
        .request_response("ping", |p: Payload| async move { Ok(p) })
        .request_stream("count", move |_| checked.clone());
    let mut config = ServerConfig::default();
    config.connection.stream_window = 4;
    let (rt, server) = serve(router, config);
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let (s, h) = probe();
    c.request_stream("count", Payload::default())
        .subscribe(Box::new(s));
    let mut received = 0u64;
    for batch in [1u64, 3, 2, 5, 1, 8, 4] {
        client_requested.fetch_add(batch, Ordering::SeqCst);
        h.request(batch);
        received += h.take(batch as usize).len() as u64;
        std::thread::sleep(Duration::from_millis(2));
        assert!(produced.load(Ordering::SeqCst) <= client_requested.load(Ordering::SeqCst));
    }
    barrier(&rt, &c);
    assert_eq!(received, 24);
    assert_eq!(produced.load(Ordering::SeqCst), 24);
    assert_eq!(
        violations.load(Ordering::SeqCst),
        0,
        "produced > requested at some moment"
    );
}

#[derive(Clone)]
struct CheckedCounting {
    inner: Counting,
    client_requested: Arc<AtomicU64>,
    violations: Arc<AtomicUsize>,
}

impl Publisher<Payload> for CheckedCounting {
    fn subscribe(&self, s: rs_api::BoxSubscriber<Payload>) {
        struct Check {
            s: rs_api::BoxSubscriber<Payload>,
            produced: Arc<AtomicU64>,
            client_requested: Arc<AtomicU64>,
            violations: Arc<AtomicUsize>,
        }
        impl rs_api::Subscriber<Payload> for Check {
            fn on_subscribe(&mut self, s: rs_api::SubscriptionRef) {
                self.s.on_subscribe(s)
            }
            fn on_next(&mut self, p: Payload) {
                if self.produced.load(Ordering::SeqCst)
                    > self.client_requested.load(Ordering::SeqCst)
                {
                    self.violations.fetch_add(1, Ordering::SeqCst);
                }
                self.s.on_next(p)
            }
            fn on_error(&mut self, e: rs_api::Error) {
                self.s.on_error(e)
            }
            fn on_complete(&mut self) {
                self.s.on_complete()
            }
        }
        self.inner.subscribe(Box::new(Check {
            s,
            produced: self.inner.produced.clone(),
            client_requested: self.client_requested.clone(),
            violations: self.violations.clone(),
        }));
    }
}

#[test]
fn request_channel_echoes_the_requesters_payloads() {
    let router = Router::new().request_channel("echo", |first: Payload, inbound| {
        assert_eq!(first.data_utf8(), Some("first"));
        inbound
    });
    let (rt, server) = serve(router, ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let input = source::from_iter((0..5u32).map(|i| Payload::from(format!("in{i}"))));
    let (s, h) = probe();
    c.request_channel("echo", Payload::from("first"), input)
        .subscribe(Box::new(s));
    h.request(2);
    assert_eq!(h.take(2), ["in0", "in1"]);
    h.request(10);
    assert_eq!(h.take(3), ["in2", "in3", "in4"]);
    assert!(matches!(h.next(), Ev::Complete));
}

#[test]
fn fire_and_forget_and_metadata_push_reach_the_server() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s1, s2) = (seen.clone(), seen.clone());
    let router = Router::new()
        .request_response("ping", |p: Payload| async move { Ok(p) })
        .fire_and_forget("log", move |p| {
            s1.lock().unwrap().push(p.data_utf8().unwrap().to_owned())
        })
        .metadata_push(move |m| {
            s2.lock()
                .unwrap()
                .push(format!("push:{}", String::from_utf8_lossy(&m)))
        });
    let (rt, server) = serve(router, ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    rt.block_on(c.fire_and_forget("log", Payload::from("a")))
        .unwrap();
    rt.block_on(c.metadata_push(Bytes::from_static(b"m")))
        .unwrap();
    rt.block_on(c.fire_and_forget("log", Payload::from("b")))
        .unwrap();
    barrier(&rt, &c);
    assert_eq!(*seen.lock().unwrap(), ["a", "push:m", "b"]);
}

#[test]
fn payloads_beyond_the_mtu_are_fragmented_and_reassembled() {
    let router = Router::new().request_response("echo", |p: Payload| async move { Ok(p) });
    let mut sc = ServerConfig::default();
    sc.connection.mtu = 64;
    let (rt, server) = serve(router, sc);
    let mut cc = ClientConfig::default();
    cc.connection.mtu = 200;
    let c = client(&rt, server.local_addr(), cc);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let meta: Vec<u8> = (0..300u32).map(|i| (i % 7) as u8).collect();
    let p = Payload::new(data.clone(), Some(Bytes::from(meta.clone())));
    let back = rt.block_on(c.request_response("echo", p)).unwrap();
    assert_eq!(&back.data[..], &data[..]);
    // The echo carries the request's metadata: the routing entry, then ours.
    let m = back.metadata.unwrap();
    assert!(m.ends_with(&meta));
}

#[test]
fn lease_is_honoured_by_the_requester_and_enforced_by_the_responder() {
    let router = Router::new().request_response("echo", |p: Payload| async move { Ok(p) });
    let mut sc = ServerConfig::default();
    sc.lease = LeaseGrant {
        ttl: Duration::from_secs(60),
        requests: 2,
    };
    let (rt, server) = serve(router, sc);
    let mut cc = ClientConfig::default();
    cc.lease = true;
    let c = client(&rt, server.local_addr(), cc);
    for _ in 0..2 {
        rt.block_on(c.request_response("echo", Payload::from("x")))
            .unwrap();
    }
    let e = rt
        .block_on(c.request_response("echo", Payload::from("x")))
        .unwrap_err();
    assert!(matches!(e, RSocketError::NoLease(_)), "{e}");
    // The responder enforces it too: a raw requester that ignores the LEASE is REJECTED.
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&support::setup_with(
        1,
        60_000,
        60_000,
        0x40,
        b"message/x.rsocket.composite-metadata.v0",
    ));
    let lease = raw.recv().unwrap();
    assert_eq!(lease.1, 0x02, "a LEASE first");
    for id in [1u32, 3, 5] {
        raw.send(&support::request(0x04, id, None, "echo", b"x"));
    }
    let mut codes = Vec::new();
    while codes.len() < 3 {
        let (id, ty, _, body) = raw.recv().unwrap();
        if ty == 0x0B {
            codes.push((id, u32::from_be_bytes([body[0], body[1], body[2], body[3]])));
        } else if ty == 0x0A {
            codes.push((id, 0));
        }
    }
    assert_eq!(codes, [(1, 0), (3, 0), (5, 0x202)]);
}

#[test]
fn a_silent_client_is_disconnected_after_its_max_lifetime() {
    let (rt, server) = serve(Router::new(), ServerConfig::default());
    let _rt = rt;
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&support::setup_frame(50, 200, b"application/octet-stream"));
    let (id, code) = raw.expect_error_then_close();
    assert_eq!((id, code), (0, 0x101));
}

#[test]
fn the_client_sends_keepalives_and_leaves_a_silent_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut cc = ClientConfig::default();
    cc.keepalive_interval = Duration::from_millis(20);
    cc.max_lifetime = Duration::from_millis(300);
    let c = client(&rt, addr, cc);
    let (s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(support::PATIENCE)).unwrap();
    let mut raw = Raw(s);
    let setup = raw.recv().unwrap();
    assert_eq!(setup.1, 0x01);
    let keepalive = raw.recv().unwrap();
    assert_eq!(
        (keepalive.0, keepalive.1, keepalive.2 & 0x80),
        (0, 0x03, 0x80),
        "KEEPALIVE(R)"
    );
    // Never answered: the client closes with CONNECTION_ERROR.
    let (id, code) = raw.expect_error_then_close();
    assert_eq!((id, code), (0, 0x101));
    assert!(matches!(
        c.closed(),
        Some(RSocketError::Remote {
            code: ErrorCode::ConnectionError,
            ..
        })
    ));
}

#[test]
fn the_server_answers_keepalives() {
    let (rt, server) = serve(Router::new(), ServerConfig::default());
    let _rt = rt;
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&support::setup_frame(
        60_000,
        60_000,
        b"application/octet-stream",
    ));
    let mut body = vec![0u8; 8];
    body.extend_from_slice(b"echo me");
    raw.send(&support::frame(0, 0x03, 0x80, &body));
    let (id, ty, flags, b) = raw.recv().unwrap();
    assert_eq!((id, ty, flags & 0x80), (0, 0x03, 0));
    assert_eq!(&b[8..], b"echo me");
}

#[test]
fn closing_the_client_ends_its_streams() {
    let counting = Counting::default();
    let (rt, server) = serve(router_with(&counting), ServerConfig::default());
    let c = client(&rt, server.local_addr(), ClientConfig::default());
    let (s, h) = probe();
    c.request_stream("count", Payload::default())
        .subscribe(Box::new(s));
    h.request(1);
    assert_eq!(h.take(1), ["0"]);
    c.close();
    match h.next() {
        Ev::Error(e) => assert!(e.downcast_ref::<RSocketError>().is_some(), "{e}"),
        other => panic!("{other:?}"),
    }
    support_wait("the server cancels the stream", || {
        counting.cancelled.load(Ordering::SeqCst)
    });
    support_wait("the server drops the connection", || {
        server.connections() == 0
    });
}

/// `metadata::route` reads the usual shape (one routing entry of one tag, as `Route` writes
/// it) at once, and every other shape through the entries: both give the same answers.
#[test]
fn route_reads_the_usual_shape_as_any_other() {
    use rs_impl::rsocket::metadata::{self, CompositeMetadata};
    use rs_impl::rsocket::Route;

    let usual = Route::new("prices.btc");
    assert_eq!(metadata::route(usual.metadata()), Ok(Some("prices.btc")));
    assert_eq!(metadata::route(Route::new("").metadata()), Ok(Some("")));
    // The same entry followed by another, and preceded by another: the entries' way.
    let after = CompositeMetadata::new()
        .push_route("prices.btc")
        .push("application/json", b"{}")
        .build();
    assert_eq!(metadata::route(&after), Ok(Some("prices.btc")));
    let before = CompositeMetadata::new()
        .push("application/json", b"{}")
        .push_route("prices.btc")
        .build();
    assert_eq!(metadata::route(&before), Ok(Some("prices.btc")));
    // Two tags in the routing entry: the first is the route.
    let two = [0xFE, 0, 0, 4, 1, b'a', 1, b'b'];
    assert_eq!(metadata::route(&two), Ok(Some("a")));
    // The usual shape with a tag that is not UTF-8: the error the entries' way gives.
    let bad = [0xFE, 0, 0, 3, 2, 0xC3, 0x28];
    let err = metadata::route(&bad).unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");
    // A tag longer than its entry: malformed, as before.
    let short = [0xFE, 0, 0, 2, 5, b'a'];
    assert!(metadata::route(&short).is_err());
}
