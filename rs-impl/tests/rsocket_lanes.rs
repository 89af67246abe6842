//! A server connection's inbound lanes (`ServerConfig::lanes`, seed 004): each route's
//! frames in order across lanes, control frames answered while a lane is full, a full lane
//! stopping the socket's reading, one lane building nothing, and the configuration's checks.
#![cfg(feature = "rsocket")]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[path = "support/rsocket.rs"]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rs_api::Publisher;
use rs_impl::lanes::{lane_of, murmur2};
use rs_impl::rsocket::{
    Client, ClientConfig, Payload, RSocketError, Router, Server, ServerConfig, LANE_CREDIT,
    LANE_INPUT_BUFFER,
};
use rs_impl::source;
use rs_impl::subscriber::{collect, RequestStrategy};
use support::{frame, probe, request, serve, setup_frame, wait_for, Counting, Raw, PATIENCE};

const MIME: &[u8] = b"message/x.rsocket.composite-metadata.v0";
const FNF: u8 = 0x05;
const KEEPALIVE: u8 = 0x03;
const METADATA_PUSH: u8 = 0x0C;
const CONNECTION_ERROR: u32 = 0x101;

fn lanes(n: usize, capacity: usize) -> ServerConfig {
    let mut c = ServerConfig::default();
    c.lanes = n;
    c.lane_capacity = capacity;
    c
}

/// The lanes the routes fall on among `n`.
fn lanes_of(routes: &[String], n: usize) -> BTreeSet<usize> {
    routes
        .iter()
        .map(|r| lane_of(murmur2(r.as_bytes()), n))
        .collect()
}

/// A route on lane `lane` of `n`, named `{prefix}{i}`.
fn route_on(prefix: &str, lane: usize, n: usize) -> String {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .find(|r| lane_of(murmur2(r.as_bytes()), n) == lane)
        .unwrap()
}

/// A gate that handlers wait at (off the runtime's worker: `block_in_place`).
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn wait(&self) {
        let (open, cv) = &*self.0;
        let mut o = open.lock().unwrap();
        while !*o {
            o = cv.wait(o).unwrap();
        }
    }
    fn open(&self) {
        let (open, cv) = &*self.0;
        *open.lock().unwrap() = true;
        cv.notify_all();
    }
}

/// Opens the gate when dropped: a failing test does not leave a handler waiting (the
/// runtime's drop would wait for it).
struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[test]
fn lanes_config_accepts_one_or_more_and_refuses_zero_with_a_typed_error() {
    for n in [1, 2, 4, 64] {
        assert!(lanes(n, 1).validate().is_ok(), "lanes = {n}");
    }
    let e = lanes(0, 16).validate().unwrap_err();
    assert_eq!(e.field(), "lanes");
    assert!(e.to_string().contains("lanes is 0"), "{e}");
    assert_eq!(lanes(2, 0).validate().unwrap_err().field(), "lane_capacity");
    // The server refuses it before binding, with the same typed error.
    let rt = tokio::runtime::Runtime::new().unwrap();
    match rt.block_on(Server::bind("127.0.0.1:0", Router::new(), lanes(0, 16))) {
        Err(RSocketError::Config(e)) => assert_eq!(e.field(), "lanes"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn one_lane_builds_no_lane_and_no_task_more_than_before() {
    // Tasks of one connection on the server's runtime: with one lane the connection, its
    // reader, writer and keepalive timer (as before lanes existed); with n lanes, one island
    // more for the dispatcher and one per lane.
    let client_rt = tokio::runtime::Runtime::new().unwrap();
    let mut extra = Vec::new();
    for n in [1usize, 2, 4] {
        let router = Router::new().request_response("ping", |p: Payload| async move { Ok(p) });
        let (rt, server) = serve(router, lanes(n, 16));
        let before = rt.metrics().num_alive_tasks();
        let c = client_rt
            .block_on(Client::connect(
                server.local_addr(),
                ClientConfig::default(),
            ))
            .unwrap();
        let r = client_rt.block_on(c.request_response("ping", Payload::from("x")));
        assert_eq!(r.unwrap().data_utf8(), Some("x"));
        let stats = server.stats();
        assert_eq!(stats.len(), 1);
        assert_eq!(stats[0].lanes, if n == 1 { 0 } else { n });
        assert!(stats[0].lane_depth <= if n == 1 { 0 } else { 16 });
        wait_for("the connection's tasks", || {
            rt.metrics().num_alive_tasks() - before >= 4
        });
        extra.push(rt.metrics().num_alive_tasks() - before);
        c.close();
    }
    assert_eq!(extra, [4, 4 + 3, 4 + 5]);
}

#[test]
fn each_routes_requests_are_handled_in_order_across_lanes() {
    for n in [2usize, 4] {
        let routes: Vec<String> = (0..8).map(|i| format!("route-{i}")).collect();
        assert!(lanes_of(&routes, n).len() >= 2, "the routes span lanes");
        let seen: Arc<Mutex<HashMap<String, Vec<u32>>>> = Arc::default();
        let total = Arc::new(AtomicU64::new(0));
        let mut router = Router::new().request_response("ping", |p: Payload| async move { Ok(p) });
        for r in &routes {
            let (seen, total, name) = (seen.clone(), total.clone(), r.clone());
            router = router.fire_and_forget(r, move |p| {
                let i: u32 = p.data_utf8().unwrap().parse().unwrap();
                seen.lock()
                    .unwrap()
                    .entry(name.clone())
                    .or_default()
                    .push(i);
                total.fetch_add(1, Ordering::SeqCst);
            });
        }
        let (rt, server) = serve(router, lanes(n, 8));
        let c = rt
            .block_on(Client::connect(
                server.local_addr(),
                ClientConfig::default(),
            ))
            .unwrap();
        const EACH: u32 = 300;
        rt.block_on(async {
            for i in 0..EACH {
                for r in &routes {
                    c.fire_and_forget(r.as_str(), Payload::from(i.to_string()))
                        .await
                        .unwrap();
                }
            }
        });
        let want = u64::from(EACH) * routes.len() as u64;
        wait_for("every fire-and-forget", || {
            total.load(Ordering::SeqCst) == want
        });
        let seen = seen.lock().unwrap();
        for r in &routes {
            assert_eq!(
                seen[r],
                (0..EACH).collect::<Vec<_>>(),
                "route {r} with {n} lanes"
            );
        }
        assert_eq!(server.stats()[0].lanes, n);
    }
}

#[test]
fn streams_and_channels_keep_their_frames_in_order_across_lanes() {
    let n = 4;
    let streams: Vec<String> = (0..6).map(|i| format!("stream-{i}")).collect();
    let channels: Vec<String> = (0..3).map(|i| format!("channel-{i}")).collect();
    assert!(lanes_of(&streams, n).len() >= 2);
    assert!(lanes_of(&channels, n).len() >= 2);
    let endless = Counting::default();
    let e = endless.clone();
    let mut router = Router::new().request_stream("endless", move |_| e.clone());
    for r in &streams {
        let name = r.clone();
        router = router.request_stream(r, move |_| {
            let name = name.clone();
            source::from_iter((0..200u32).map(move |i| Payload::from(format!("{name}:{i}"))))
        });
    }
    for r in &channels {
        router = router.request_channel(r, |_, inbound| inbound);
    }
    let (rt, server) = serve(router, lanes(n, 8));
    let c = rt
        .block_on(Client::connect(
            server.local_addr(),
            ClientConfig::default(),
        ))
        .unwrap();
    // Every stream at once, each asking 3 at a time: REQUEST_N frames follow their lanes.
    let mut results = Vec::new();
    for r in &streams {
        let (s, h) = collect(RequestStrategy::Prefetch(3));
        c.request_stream(r.as_str(), Payload::from("go"))
            .subscribe(Box::new(s));
        results.push((r.clone(), h));
    }
    // Channels: the requester's PAYLOADs follow their lane, echoed back in order.
    for r in &channels {
        let input = source::from_iter((0..200u32).map(|i| Payload::from(i.to_string())));
        let (s, h) = collect(RequestStrategy::Prefetch(4));
        c.request_channel(r.as_str(), Payload::from("first"), input)
            .subscribe(Box::new(s));
        let got: Vec<String> = h
            .wait()
            .unwrap()
            .iter()
            .map(|p| p.data_utf8().unwrap().to_owned())
            .collect();
        assert_eq!(
            got,
            (0..200).map(|i| i.to_string()).collect::<Vec<_>>(),
            "{r}"
        );
    }
    for (r, h) in results {
        let got: Vec<String> = h
            .wait()
            .unwrap()
            .iter()
            .map(|p| p.data_utf8().unwrap().to_owned())
            .collect();
        assert_eq!(
            got,
            (0..200).map(|i| format!("{r}:{i}")).collect::<Vec<_>>()
        );
    }
    // CANCEL follows its lane to the publisher.
    let (s, h) = probe();
    c.request_stream("endless", Payload::from("go"))
        .subscribe(Box::new(s));
    h.request(5);
    assert_eq!(h.take(5).len(), 5);
    h.cancel();
    wait_for("the cancel", || endless.cancelled.load(Ordering::SeqCst));
    wait_for("every stream leaves the table", || {
        server.stats()[0].streams == 0
    });
    assert_eq!(c.open_streams(), 0);
}

/// A server whose fire-and-forget on `slow` waits at `gate` (counting calls), with a
/// request_response `ping` on the other lane, and a METADATA_PUSH counter.
fn stalled_server(
    gate: &Gate,
    entered: &Arc<AtomicU64>,
    pushes: &Arc<AtomicU64>,
    slow: &str,
    fast: &str,
    config: ServerConfig,
) -> (tokio::runtime::Runtime, rs_impl::rsocket::ServerHandle) {
    let (g, e, p) = (gate.clone(), entered.clone(), pushes.clone());
    let router = Router::new()
        .fire_and_forget(slow, move |_| {
            e.fetch_add(1, Ordering::SeqCst);
            tokio::task::block_in_place(|| g.wait());
        })
        .request_response(fast, |p: Payload| async move { Ok(p) })
        .metadata_push(move |_| {
            p.fetch_add(1, Ordering::SeqCst);
        });
    serve(router, config)
}

#[test]
fn control_frames_are_answered_while_a_lane_is_full() {
    let (n, capacity) = (2, 4);
    let slow = route_on("slow-", 0, n);
    let fast = route_on("fast-", 1, n);
    let (gate, entered, pushes) = (Gate::default(), Arc::default(), Arc::default());
    let (rt, server) = stalled_server(&gate, &entered, &pushes, &slow, &fast, lanes(n, capacity));
    let _release = OpenOnDrop(gate.clone());
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&setup_frame(60_000, 60_000, MIME));
    let mut id = 1u32;
    raw.send(&request(FNF, id, None, &slow, b"0"));
    wait_for("the slow handler", || entered.load(Ordering::SeqCst) == 1);

    // The other lane still serves while the slow lane's handler is stalled.
    let c = rt
        .block_on(Client::connect(
            server.local_addr(),
            ClientConfig::default(),
        ))
        .unwrap();
    let r = rt.block_on(c.request_response(fast.as_str(), Payload::from("x")));
    assert_eq!(r.unwrap().data_utf8(), Some("x"));

    // Fill the slow lane, one fire-and-forget at a time, each followed by a KEEPALIVE(R) and a
    // METADATA_PUSH. Once the lane and what feeds it are full, the reader holds the next
    // fire-and-forget and goes on reading control frames: that round's KEEPALIVE is answered
    // and its METADATA_PUSH delivered while the lane is full. The round after, the reader reads
    // the next fire-and-forget and stops: its KEEPALIVE stays unanswered. (The reader stopping
    // is seen as a KEEPALIVE left unanswered this long: long enough for a loaded CI machine to
    // answer one that was read.)
    raw.0
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let (mut sent, mut answered) = (1u64, 0u64);
    loop {
        id += 2;
        raw.send(&request(FNF, id, None, &slow, b"x"));
        sent += 1;
        raw.send(&frame(0, KEEPALIVE, 0x80, &[0u8; 8]));
        raw.send(&frame(0, METADATA_PUSH, 0x100, b"md"));
        match raw.recv() {
            Some((0, KEEPALIVE, flags, _)) => assert_eq!(flags & 0x80, 0, "an answer"),
            Some(other) => panic!("unexpected frame {other:?}"),
            None => break, // the reader stopped reading
        }
        answered += 1;
        assert!(sent < 10_000, "the reader never stopped");
    }
    assert!(answered >= 1, "no KEEPALIVE was answered");
    // Every METADATA_PUSH sent before an answered KEEPALIVE's successor reached the router,
    // the last of them while the reader held a fire-and-forget for the full lane.
    wait_for("the metadata pushes", || {
        pushes.load(Ordering::SeqCst) == answered
    });
    // The reader stopped right after the round whose control frames were its last: it read
    // the SETUP, the first fire-and-forget, three frames a round answered, and the next round's
    // fire-and-forget, which it holds (it can stop only while holding one for a full lane).
    // Two connections are open (the client's and this raw one; `stats` lists them in no fixed
    // order): the raw one is the one that read the most.
    let read = server.stats().iter().map(|c| c.frames_in).max().unwrap();
    let through = 2 + 3 * answered;
    assert!(
        read == through || read == through + 1,
        "the reader read {read} frames; {through} frames up to the last answered round"
    );
    // What the lanes and the reader hold is bounded: the stalled frame, the lane's ring, its
    // handler's credit, the input buffer, the one waiting in the reader and the one read.
    let bound = 1 + capacity + LANE_CREDIT + LANE_INPUT_BUFFER + 2;
    assert!(
        sent as usize <= bound,
        "{sent} fire-and-forgets taken (bound {bound})"
    );
    assert_eq!(entered.load(Ordering::SeqCst), 1);

    // Released: every request is handled, and the last KEEPALIVE is answered.
    gate.open();
    wait_for("every fire-and-forget", || {
        entered.load(Ordering::SeqCst) == sent
    });
    raw.0.set_read_timeout(Some(PATIENCE)).unwrap();
    assert!(matches!(raw.recv(), Some((0, KEEPALIVE, 0, _))));
}

#[test]
fn a_full_lane_stops_reading_the_socket() {
    let (n, capacity) = (2, 4);
    let slow = route_on("slow-", 1, n);
    let fast = route_on("fast-", 0, n);
    let (gate, entered, pushes) = (Gate::default(), Arc::default(), Arc::default());
    let (_rt, server) = stalled_server(&gate, &entered, &pushes, &slow, &fast, lanes(n, capacity));
    let _release = OpenOnDrop(gate.clone());
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&setup_frame(60_000, 60_000, MIME));
    raw.0
        .set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    // Fire-and-forgets of 1 KiB to the stalled lane until the socket takes no more.
    let pad = vec![b'x'; 1024];
    let (mut id, mut written) = (1u32, 0u64);
    while raw
        .0
        .write_all(&request(FNF, id, None, &slow, &pad))
        .is_ok()
    {
        written += 1;
        id += 2;
        assert!(written < 1_000_000, "the server kept reading without bound");
    }
    let stats = server.stats()[0];
    let bound = 1 + capacity + LANE_CREDIT + LANE_INPUT_BUFFER + 2;
    assert!(
        stats.frames_in <= 1 + bound as u64,
        "{} frames read with the lane stalled (bound {bound})",
        stats.frames_in
    );
    assert!(written > stats.frames_in, "TCP holds the rest");
    assert!(stats.lane_depth <= capacity);
    // Nothing is lost: released, every whole frame written is handled.
    gate.open();
    wait_for("every fire-and-forget", || {
        entered.load(Ordering::SeqCst) == written
    });
}

#[test]
fn with_lanes_a_frame_for_a_stream_never_opened_is_still_a_connection_error() {
    let (_rt, server) = serve(Router::new().fire_and_forget("log", |_| {}), lanes(2, 16));
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&setup_frame(60_000, 60_000, MIME));
    raw.send(&request(FNF, 1, None, "log", b""));
    // REQUEST_N on stream 7, which the peer never opened.
    raw.send(&frame(7, 0x08, 0, &5u32.to_be_bytes()));
    assert_eq!(raw.expect_error_then_close(), (0, CONNECTION_ERROR));
}
