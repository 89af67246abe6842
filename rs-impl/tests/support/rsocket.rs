//! Shared by the RSocket test targets: a subscriber driven by hand through a channel, a
//! counting server publisher, raw frames for tests that speak to a server byte by byte, and
//! a runtime with a loopback server.
#![allow(dead_code, clippy::disallowed_types)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rs_api::{Error, Publisher, Subscriber, Subscription, SubscriptionRef};
use rs_impl::rsocket::{Payload, Router, Server, ServerConfig, ServerHandle};

/// How long a test waits for something that must happen (a bound against hangs, not a
/// measurement).
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// What a [`Probe`] saw.
#[derive(Debug)]
pub(crate) enum Ev {
    Next(Payload),
    Complete,
    Error(Error),
}

/// A subscriber driven by hand.
pub(crate) struct Probe {
    tx: Sender<Ev>,
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    dropped: Arc<AtomicBool>,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

/// The test's side of a [`Probe`].
pub(crate) struct ProbeHandle {
    rx: Receiver<Ev>,
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    pub(crate) dropped: Arc<AtomicBool>,
}

pub(crate) fn probe() -> (Probe, ProbeHandle) {
    let (tx, rx) = channel();
    let sub = Arc::new(Mutex::new(None));
    let dropped = Arc::new(AtomicBool::new(false));
    (
        Probe {
            tx,
            sub: sub.clone(),
            dropped: dropped.clone(),
        },
        ProbeHandle { rx, sub, dropped },
    )
}

impl Subscriber<Payload> for Probe {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        *self.sub.lock().unwrap() = Some(s);
    }
    fn on_next(&mut self, item: Payload) {
        let _ = self.tx.send(Ev::Next(item));
    }
    fn on_error(&mut self, e: Error) {
        let _ = self.tx.send(Ev::Error(e));
    }
    fn on_complete(&mut self) {
        let _ = self.tx.send(Ev::Complete);
    }
}

impl ProbeHandle {
    pub(crate) fn request(&self, n: u64) {
        let s = self.sub.lock().unwrap().clone().expect("subscribed");
        s.request(n);
    }
    pub(crate) fn cancel(&self) {
        let s = self.sub.lock().unwrap().clone().expect("subscribed");
        s.cancel();
    }
    /// The next event.
    pub(crate) fn next(&self) -> Ev {
        match self.rx.recv_timeout(PATIENCE) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => panic!("no signal within {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the subscriber was dropped"),
        }
    }
    /// The next `n` elements, as text.
    pub(crate) fn take(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| match self.next() {
                Ev::Next(p) => p.data_utf8().unwrap().to_owned(),
                other => panic!("expected an element, got {other:?}"),
            })
            .collect()
    }
    /// Events already received, without waiting.
    pub(crate) fn pending(&self) -> Vec<Ev> {
        self.rx.try_iter().collect()
    }
}

/// A publisher of `"0"`, `"1"`, … (`limit` elements, or endless) that counts what it
/// emitted, what it was asked for, and whether it was cancelled.
#[derive(Clone, Default)]
pub(crate) struct Counting {
    pub(crate) produced: Arc<AtomicU64>,
    pub(crate) requested: Arc<AtomicU64>,
    pub(crate) cancelled: Arc<AtomicBool>,
    pub(crate) limit: Option<u64>,
}

struct CountOnNext {
    c: Counting,
    inner: Box<dyn Subscriber<Payload>>,
}

struct CountRequests {
    c: Counting,
    inner: SubscriptionRef,
}

impl Subscription for CountRequests {
    fn request(&self, n: u64) {
        self.c.requested.fetch_add(n, Ordering::SeqCst);
        self.inner.request(n);
    }
    fn cancel(&self) {
        self.c.cancelled.store(true, Ordering::SeqCst);
        self.inner.cancel();
    }
}

impl Subscriber<Payload> for CountOnNext {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.inner.on_subscribe(Arc::new(CountRequests {
            c: self.c.clone(),
            inner: s,
        }));
    }
    fn on_next(&mut self, item: Payload) {
        self.c.produced.fetch_add(1, Ordering::SeqCst);
        self.inner.on_next(item);
    }
    fn on_error(&mut self, e: Error) {
        self.inner.on_error(e);
    }
    fn on_complete(&mut self) {
        self.inner.on_complete();
    }
}

impl Publisher<Payload> for Counting {
    fn subscribe(&self, s: Box<dyn Subscriber<Payload>>) {
        let limit = self.limit.unwrap_or(u64::MAX);
        let source = rs_impl::source::from_iter((0..limit).map(|i| Payload::from(i.to_string())));
        source.subscribe(Box::new(CountOnNext {
            c: self.clone(),
            inner: s,
        }));
    }
}

/// A multi-thread runtime and a server with `router` on loopback.
pub(crate) fn serve(
    router: Router,
    config: ServerConfig,
) -> (tokio::runtime::Runtime, ServerHandle) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(Server::bind("127.0.0.1:0", router, config))
        .unwrap();
    let handle = rt.block_on(async { server.spawn() });
    (rt, handle)
}

// --- raw frames

/// A frame with its length prefix.
pub(crate) fn frame(id: u32, ty: u8, flags: u16, body: &[u8]) -> Vec<u8> {
    let len = 6 + body.len();
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8];
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&(((ty as u16) << 10) | flags).to_be_bytes());
    f.extend_from_slice(body);
    f
}

/// SETUP 1.0 with the given keepalive interval and max lifetime (ms) and MIME types.
pub(crate) fn setup_frame(keepalive_ms: u32, lifetime_ms: u32, mime: &[u8]) -> Vec<u8> {
    setup_with(1, keepalive_ms, lifetime_ms, 0, mime)
}

pub(crate) fn setup_with(
    major: u16,
    keepalive_ms: u32,
    lifetime_ms: u32,
    flags: u16,
    mime: &[u8],
) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&major.to_be_bytes());
    b.extend_from_slice(&0u16.to_be_bytes());
    b.extend_from_slice(&keepalive_ms.to_be_bytes());
    b.extend_from_slice(&lifetime_ms.to_be_bytes());
    if flags & 0x80 != 0 {
        b.extend_from_slice(&2u16.to_be_bytes());
        b.extend_from_slice(b"tk");
    }
    for _ in 0..2 {
        b.push(mime.len() as u8);
        b.extend_from_slice(mime);
    }
    frame(0, 0x01, flags, &b)
}

/// A request with routing metadata for `route`.
pub(crate) fn request(ty: u8, id: u32, n: Option<u32>, route: &str, data: &[u8]) -> Vec<u8> {
    let md = rs_impl::rsocket::Route::new(route).metadata().clone();
    let mut b = Vec::new();
    if let Some(n) = n {
        b.extend_from_slice(&n.to_be_bytes());
    }
    b.extend_from_slice(&[
        (md.len() >> 16) as u8,
        (md.len() >> 8) as u8,
        md.len() as u8,
    ]);
    b.extend_from_slice(&md);
    b.extend_from_slice(data);
    frame(id, ty, 0x100, &b)
}

/// A blocking raw connection to a server.
pub(crate) struct Raw(pub(crate) TcpStream);

impl Raw {
    pub(crate) fn connect(addr: std::net::SocketAddr) -> Raw {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.set_nodelay(true).unwrap();
        Raw(s)
    }
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let _ = self.0.write_all(bytes);
    }
    /// The next frame: (stream id, type, flags, body); `None` at end of file.
    pub(crate) fn recv(&mut self) -> Option<(u32, u8, u16, Bytes)> {
        let mut len = [0u8; 3];
        if self.0.read_exact(&mut len).is_err() {
            return None;
        }
        let len = ((len[0] as usize) << 16) | ((len[1] as usize) << 8) | len[2] as usize;
        let mut f = vec![0u8; len];
        self.0.read_exact(&mut f).ok()?;
        let id = u32::from_be_bytes([f[0], f[1], f[2], f[3]]);
        let tf = u16::from_be_bytes([f[4], f[5]]);
        Some((
            id,
            (tf >> 10) as u8,
            tf & 0x3FF,
            Bytes::copy_from_slice(&f[6..]),
        ))
    }
    /// Reads frames until an ERROR; returns (stream id, code), then checks end of file.
    pub(crate) fn expect_error_then_close(&mut self) -> (u32, u32) {
        loop {
            match self.recv() {
                Some((id, 0x0B, _, body)) => {
                    let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                    if id == 0 {
                        assert!(
                            self.recv().is_none(),
                            "the connection stays open after ERROR"
                        );
                    }
                    return (id, code);
                }
                Some(_) => continue,
                None => panic!("the connection closed without an ERROR frame"),
            }
        }
    }
}

/// Waits (bounded by [`PATIENCE`]) until `cond` holds.
pub(crate) fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
