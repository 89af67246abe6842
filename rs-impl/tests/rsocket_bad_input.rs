//! Bad input to an RSocket server: each malformed frame gets the spec's ERROR frame and ends
//! only its own connection; a seeded random-frame run never panics, hangs or lets a
//! connection's buffers grow; a peer that stops reading cannot make the server buffer
//! without bound.
#![cfg(feature = "rsocket")]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[path = "support/rsocket.rs"]
mod support;

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::time::Duration;

use rs_impl::rsocket::{Client, ClientConfig, Payload, Router, ServerConfig, ServerHandle};
use support::{frame, request, serve, setup_frame, setup_with, Counting, Raw};

const MIME: &[u8] = b"message/x.rsocket.composite-metadata.v0";
const CONNECTION_ERROR: u32 = 0x101;
const INVALID_SETUP: u32 = 0x001;

fn router(count: &Counting) -> Router {
    let c = count.clone();
    Router::new()
        .request_response("ping", |p: Payload| async move { Ok(p) })
        .request_stream("count", move |_| c.clone())
        .request_channel("chan", |_, inbound| inbound)
        .fire_and_forget("log", |_| {})
}

fn config() -> ServerConfig {
    let mut c = ServerConfig::default();
    c.connection.max_frame = 4096;
    c.connection.stream_window = 8;
    c.connection.control_queue = 16;
    c
}

/// A connection past its SETUP.
fn ready(server: &ServerHandle) -> Raw {
    let mut raw = Raw::connect(server.local_addr());
    raw.send(&setup_frame(60_000, 60_000, MIME));
    raw
}

/// The good client still gets answers.
fn still_served(rt: &tokio::runtime::Runtime, good: &Client) {
    let r = rt.block_on(good.request_response("ping", Payload::from("ok")));
    assert_eq!(r.unwrap().data_utf8(), Some("ok"));
}

#[test]
fn each_malformed_frame_gets_its_error_and_ends_only_its_connection() {
    let count = Counting::default();
    let (rt, server) = serve(router(&count), config());
    let good = rt
        .block_on(Client::connect(
            server.local_addr(),
            ClientConfig::default(),
        ))
        .unwrap();
    let setup_ok = setup_frame(60_000, 60_000, MIME);
    let cases: Vec<(&str, Vec<Vec<u8>>, u32)> = vec![
        (
            "a frame shorter than its header",
            vec![vec![0, 0, 3, 0, 0, 0]],
            CONNECTION_ERROR,
        ),
        (
            "a truncated REQUEST_N",
            vec![frame(1, 0x08, 0, &[0, 0])],
            CONNECTION_ERROR,
        ),
        (
            "an unknown frame type without IGNORE",
            vec![frame(0, 0x20, 0, b"??")],
            CONNECTION_ERROR,
        ),
        (
            "a REQUEST_N of 0",
            vec![
                request(0x06, 1, Some(1), "count", b""),
                frame(1, 0x08, 0, &0u32.to_be_bytes()),
            ],
            CONNECTION_ERROR,
        ),
        (
            "a REQUEST_N on a stream never opened",
            vec![frame(99, 0x08, 0, &5u32.to_be_bytes())],
            CONNECTION_ERROR,
        ),
        (
            "a PAYLOAD on a stream never opened",
            vec![frame(7, 0x0A, 0x20, b"x")],
            CONNECTION_ERROR,
        ),
        (
            "a length prefix above max_frame",
            vec![vec![0x01, 0, 0, 0, 0, 0, 0]],
            CONNECTION_ERROR,
        ),
        (
            "a metadata length beyond the frame",
            vec![frame(1, 0x04, 0x100, &[0, 0, 200, 1, 2])],
            CONNECTION_ERROR,
        ),
        (
            "a RESUME after SETUP",
            vec![frame(0, 0x0D, 0, &[0; 20])],
            CONNECTION_ERROR,
        ),
    ];
    for (what, frames, code) in cases {
        let mut raw = Raw::connect(server.local_addr());
        raw.send(&setup_ok);
        for f in &frames {
            raw.send(f);
        }
        eprintln!("case: {what}");
        assert_eq!(raw.expect_error_then_close(), (0, code), "{what}");
        still_served(&rt, &good);
    }
    let setups: Vec<(&str, Vec<u8>, u32)> = vec![
        (
            "a MIME type that is not UTF-8",
            setup_frame(1000, 1000, b"\xff\xfe"),
            INVALID_SETUP,
        ),
        (
            "a first frame that is not SETUP",
            request(0x04, 1, None, "ping", b"x"),
            INVALID_SETUP,
        ),
        (
            "a zero keepalive interval",
            setup_frame(0, 1000, MIME),
            INVALID_SETUP,
        ),
        (
            "protocol version 2",
            setup_with(2, 1000, 1000, 0, MIME),
            0x002,
        ),
        (
            "a SETUP asking for resumption",
            setup_with(1, 1000, 1000, 0x80, MIME),
            0x003,
        ),
    ];
    for (what, setup, code) in setups {
        let mut raw = Raw::connect(server.local_addr());
        raw.send(&setup);
        eprintln!("case: {what}");
        assert_eq!(raw.expect_error_then_close(), (0, code), "{what}");
        still_served(&rt, &good);
    }
}

#[test]
fn frames_the_spec_says_to_ignore_are_ignored() {
    let count = Counting::default();
    let (_rt, server) = serve(router(&count), config());
    let mut raw = ready(&server);
    // An unknown type with IGNORE, a CANCEL on stream 0, a PAYLOAD on stream 0, a second
    // SETUP, METADATA_PUSH with no handler: all ignored; an initial request n of 0 is
    // INVALID on its stream only.
    raw.send(&frame(0, 0x20, 0x200, b"??"));
    raw.send(&frame(0, 0x09, 0, b""));
    raw.send(&frame(0, 0x0A, 0x20, b"x"));
    raw.send(&setup_frame(60_000, 60_000, MIME));
    raw.send(&request(0x06, 1, Some(0), "count", b""));
    raw.send(&request(0x04, 3, None, "ping", b"pong"));
    let (id, ty, _, body) = raw.recv().unwrap();
    assert_eq!((id, ty), (1, 0x0B));
    assert_eq!(
        u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
        0x204
    );
    let (id, ty, _, body) = raw.recv().unwrap();
    assert_eq!((id, ty), (3, 0x0A));
    assert!(body.ends_with(b"pong"));
}

/// A small seeded generator (xorshift64*), so that the run is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One random frame: mostly well formed (requests on growing ids, REQUEST_N, CANCEL,
/// PAYLOAD, ERROR on ids opened or not, KEEPALIVE, LEASE, METADATA_PUSH), sometimes mangled
/// (random bytes, cut short, bits flipped).
fn random_frame(rng: &mut Rng, next_id: &mut u32) -> Vec<u8> {
    let routes = ["ping", "count", "chan", "log", "nowhere"];
    let open = (*next_id).max(3);
    let known = 1 + 2 * rng.below((open / 2) as u64) as u32;
    let body: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
    let mut f = match rng.below(12) {
        0..=2 => {
            let ty = [0x04, 0x05, 0x06, 0x07][rng.below(4) as usize];
            let n = (ty == 0x06 || ty == 0x07).then(|| 1 + rng.below(50) as u32);
            let id = *next_id;
            *next_id += 2;
            request(ty, id, n, routes[rng.below(5) as usize], &body)
        }
        3 => frame(known, 0x08, 0, &(1 + rng.below(20) as u32).to_be_bytes()),
        4 => frame(known, 0x09, 0, b""),
        5 => frame(
            known,
            0x0A,
            [0x20, 0x40, 0x60, 0xA0][rng.below(4) as usize],
            &body,
        ),
        6 => frame(known, 0x0B, 0, &[0, 0, 2, 1]),
        7 => {
            let mut b = vec![0u8; 8];
            b.extend_from_slice(&body);
            frame(0, 0x03, if rng.below(2) == 0 { 0x80 } else { 0 }, &b)
        }
        8 => frame(0, 0x02, 0, &[0, 0, 0, 10, 0, 0, 0, 5]),
        9 => frame(0, 0x0C, 0x100, &body),
        10 => frame(
            rng.below(8) as u32,
            rng.below(64) as u8,
            rng.below(1024) as u16,
            &body,
        ),
        _ => frame(known, 0x08, 0, &(1 + rng.below(5) as u32).to_be_bytes()),
    };
    // About one frame in 40 is mangled.
    match rng.below(120) {
        0 => f.truncate(3 + rng.below(f.len() as u64 - 2) as usize),
        1 => {
            let i = rng.below(f.len() as u64) as usize;
            f[i] ^= 1 << rng.below(8);
        }
        2 => f = (0..rng.below(16)).map(|_| rng.next() as u8).collect(),
        _ => {}
    }
    f
}

#[test]
fn a_seeded_random_frame_run_never_panics_hangs_or_grows() {
    const FRAMES: u64 = 100_000;
    let count = Counting::default();
    let cfg = config();
    let bound = cfg.connection.control_queue + cfg.connection.max_streams * 2;
    let (rt, server) = serve(router(&count), cfg.clone());
    let mut rng = Rng(0x5EED_2025_0425);
    let (mut sent, mut connections) = (0u64, 0u64);
    while sent < FRAMES {
        connections += 1;
        let mut raw = Raw::connect(server.local_addr());
        raw.0.set_write_timeout(Some(support::PATIENCE)).unwrap();
        raw.send(&setup_frame(60_000, 60_000, MIME));
        // Drain what the server sends, on a thread, until it closes.
        let mut reader = raw.0.try_clone().unwrap();
        let drain = std::thread::spawn(move || {
            let mut buf = [0u8; 16 << 10];
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
        });
        let mut next_id = 1u32;
        let mut batch = Vec::new();
        let mut open = true;
        while open && sent < FRAMES {
            batch.clear();
            for _ in 0..64 {
                batch.extend_from_slice(&random_frame(&mut rng, &mut next_id));
                sent += 1;
            }
            open = raw.0.write_all(&batch).is_ok() && next_id < 4000;
        }
        let _ = raw.0.shutdown(std::net::Shutdown::Write);
        drain.join().unwrap();
        for s in server.stats() {
            assert!(s.queued_max <= bound, "{s:?} beyond {bound}");
            assert!(s.streams <= cfg.connection.max_streams * 2, "{s:?}");
        }
    }
    let start = std::time::Instant::now();
    while server.connections() != 0 {
        assert!(
            start.elapsed() < support::PATIENCE,
            "fuzzed connections stay open: {:?}",
            server.stats()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(connections > 1, "the mangled frames ended some connections");
    let good = rt
        .block_on(Client::connect(
            server.local_addr(),
            ClientConfig::default(),
        ))
        .unwrap();
    still_served(&rt, &good);
}

#[test]
fn a_peer_that_stops_reading_cannot_make_the_server_buffer() {
    let count = Counting::default();
    let cfg = config();
    let (_rt, server) = serve(router(&count), cfg.clone());
    let mut raw = ready(&server);
    // An unbounded stream that the peer never reads.
    raw.send(&request(0x06, 1, Some(0x7FFF_FFFF), "count", b""));
    // The server fills the socket, then stops producing: wait until production stands still.
    let mut last = u64::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = count.produced.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    let stats = server.stats();
    assert_eq!(stats.len(), 1);
    let window = cfg.connection.stream_window;
    assert!(
        stats[0].queued_max <= window + 2,
        "the outbox held {} items (window {window})",
        stats[0].queued_max
    );
    // What was produced is what the socket took plus at most the window.
    assert!(count.requested.load(Ordering::SeqCst) <= last + window as u64);

    // A flood of KEEPALIVE(R) that is never read: the server stops reading (our writes
    // block) instead of queueing answers.
    let mut flood = Raw::connect(server.local_addr());
    flood.send(&setup_frame(60_000, 60_000, MIME));
    flood
        .0
        .set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let ka = frame(0, 0x03, 0x80, &[0u8; 1024]);
    let mut frames = 0u64;
    while flood.0.write_all(&ka).is_ok() {
        frames += 1;
        assert!(frames < 10_000_000, "the server kept reading without bound");
    }
    for s in server.stats() {
        assert!(
            s.queued_max <= cfg.connection.control_queue + window + 2,
            "{s:?} (control_queue {})",
            cfg.connection.control_queue
        );
    }
}
