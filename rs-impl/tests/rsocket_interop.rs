//! Interoperability with an RSocket implementation nobody here wrote: rsocket-py 0.4.20 from
//! PyPI, in a virtual environment made by `scripts/rsocket-py.sh` (run here when
//! `RSOCKET_PY` does not name an interpreter). Both directions: our client against the Python
//! server, and the Python client against our server. The Python side is
//! `scripts/rsocket_interop.py`.
#![cfg(feature = "rsocket")]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[path = "support/rsocket.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;

use bytes::Bytes;
use rs_api::Publisher;
use rs_impl::rsocket::{
    Client, ClientConfig, ErrorCode, Payload, RSocketError, Router, ServerConfig,
};
use rs_impl::source;
use support::{probe, serve, Counting, Ev};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv's interpreter: `RSOCKET_PY`, or made by the script (installing rsocket 0.4.20).
fn python() -> String {
    if let Ok(p) = std::env::var("RSOCKET_PY") {
        return p;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts/rsocket-py.sh"))
        .output()
        .expect("run scripts/rsocket-py.sh");
    assert!(
        out.status.success(),
        "scripts/rsocket-py.sh failed (python3 with venv and pip, and PyPI, are needed):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn script() -> std::path::PathBuf {
    root().join("scripts/rsocket_interop.py")
}

/// The Python server, killed on drop.
struct PyServer(Child, u16);

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn py_server() -> PyServer {
    let mut child = Command::new(python())
        .arg(script())
        .arg("server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the Python server");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .strip_prefix("PORT ")
        .unwrap_or_else(|| panic!("the Python server said {line:?}"))
        .trim()
        .parse()
        .unwrap();
    PyServer(child, port)
}

fn stats(rt: &tokio::runtime::Runtime, c: &Client) -> serde_like::Value {
    let p = rt
        .block_on(c.request_response("stats", Payload::default()))
        .unwrap();
    serde_like::parse(p.data_utf8().unwrap())
}

#[test]
fn our_client_against_the_python_server() {
    let server = py_server();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut config = ClientConfig::default();
    config.connection.mtu = 1024;
    let c = rt
        .block_on(Client::connect(("127.0.0.1", server.1), config))
        .unwrap();

    // request_response, with the Python server's own metadata.
    let r = rt
        .block_on(c.request_response("echo", Payload::from("hello")))
        .unwrap();
    assert_eq!(r.data_utf8(), Some("hello"));
    assert_eq!(r.metadata.as_deref(), Some(&b"echo-meta"[..]));

    // A 100 KB payload, fragmented both ways (our MTU 1024, the Python server's 1024).
    let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let r = rt
        .block_on(c.request_response("echo", Payload::from(big.clone())))
        .unwrap();
    assert_eq!(&r.data[..], &big[..]);

    // request_stream: exactly the elements requested; a REQUEST_N of k yields exactly k more.
    let (s, h) = probe();
    c.request_stream("stream", Payload::default())
        .subscribe(Box::new(s));
    h.request(3);
    assert_eq!(h.take(3), ["0", "1", "2"]);
    assert_eq!(stats(&rt, &c).num("produced"), 3);
    assert!(h.pending().is_empty());
    h.request(2);
    assert_eq!(h.take(2), ["3", "4"]);
    assert_eq!(stats(&rt, &c).num("produced"), 5);
    assert!(h.pending().is_empty());
    // cancel stops the Python generator.
    h.cancel();
    let mut st = stats(&rt, &c);
    for _ in 0..100 {
        if st.bool("cancelled") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        st = stats(&rt, &c);
    }
    assert!(
        st.bool("cancelled"),
        "the Python generator was not cancelled"
    );
    assert_eq!(st.num("produced"), 5);

    // fire_and_forget.
    rt.block_on(c.fire_and_forget("log", Payload::from("fnf-1")))
        .unwrap();
    let mut seen = false;
    for _ in 0..100 {
        if stats(&rt, &c).text().contains("fnf-1") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(seen, "the fire-and-forget did not reach the Python server");

    // request_channel: the first payload and three more; the server echoes the three.
    let input = source::from_iter((0..3u32).map(|i| Payload::from(format!("c{i}"))));
    let (s, h) = probe();
    c.request_channel("channel", Payload::from("first"), input)
        .subscribe(Box::new(s));
    h.request(10);
    assert_eq!(h.take(3), ["echo:c0", "echo:c1", "echo:c2"]);
    assert!(matches!(h.next(), Ev::Complete));
    let st = stats(&rt, &c).text().to_owned();
    assert!(
        st.contains(r#""channel_in": ["first", "c0", "c1", "c2"]"#),
        "{st}"
    );

    // An application error.
    let e = rt
        .block_on(c.request_response("fail", Payload::default()))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ApplicationError), "{e}");
    assert!(e.message().contains("python says no"), "{e}");
}

#[test]
fn the_python_client_against_our_server() {
    let count = Counting::default();
    let finite = Counting {
        limit: Some(50),
        ..Counting::default()
    };
    let (c1, c2) = (count.clone(), finite.clone());
    let fnf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let fnf2 = fnf.clone();
    let router = Router::new()
        .request_response("echo", |p: Payload| async move {
            Ok(Payload::new(p.data, None))
        })
        .request_response("fail", |_| async move {
            Err(RSocketError::application("rust says no").into())
        })
        .fire_and_forget("log", move |p| {
            fnf2.lock()
                .unwrap()
                .push(p.data_utf8().unwrap_or("").to_owned())
        })
        .request_stream("count", move |_| c1.clone())
        .request_stream("finite", move |_| c2.clone())
        .request_channel("channel", |_first, inbound| inbound);
    let mut config = ServerConfig::default();
    config.connection.mtu = 1024;
    let (rt, server) = serve(router, config);
    let out = Command::new(python())
        .arg(script())
        .arg("client")
        .arg(server.local_addr().port().to_string())
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = serde_like::parse(stdout.lines().last().unwrap());
    assert_eq!(r.str("echo"), "hello");
    assert!(r.bool("big_ok"), "the 100 KB payload came back different");
    // The REQUEST_N frames the Python client sent are honoured exactly: 5, then 3 more.
    assert_eq!(r.num("after_5"), 5);
    assert_eq!(r.num("after_8"), 8);
    support::wait_for("the cancel reaches our publisher", || {
        count.cancelled.load(Ordering::SeqCst)
    });
    assert_eq!(count.produced.load(Ordering::SeqCst), 8);
    // limit_rate(7) over a finite stream of 50: everything, in order, and nothing more.
    let expected: Vec<String> = (0..50).map(|i| i.to_string()).collect();
    assert_eq!(r.strs("limit_rate_values"), expected);
    assert_eq!(finite.produced.load(Ordering::SeqCst), 50);
    assert_eq!(r.strs("channel"), ["c0", "c1", "c2"]);
    assert!(r.str("fail").contains("rust says no"), "{}", r.str("fail"));
    drop(rt);
    assert_eq!(*fnf.lock().unwrap(), ["fnf-1"]);
    let _ = Bytes::new();
}

/// Just enough JSON for the Python side's flat reports.
mod serde_like {
    pub(crate) struct Value(String);

    pub(crate) fn parse(s: &str) -> Value {
        Value(s.to_owned())
    }

    impl Value {
        pub(crate) fn text(&self) -> &str {
            &self.0
        }
        fn raw(&self, key: &str) -> &str {
            let pat = format!("\"{key}\": ");
            let at = self
                .0
                .find(&pat)
                .unwrap_or_else(|| panic!("no {key} in {}", self.0))
                + pat.len();
            let rest = &self.0[at..];
            let end = if rest.starts_with('[') {
                rest.find(']').unwrap() + 1
            } else if let Some(quoted) = rest.strip_prefix('"') {
                quoted.find('"').unwrap() + 2
            } else {
                rest.find([',', '}']).unwrap()
            };
            &rest[..end]
        }
        pub(crate) fn num(&self, key: &str) -> u64 {
            self.raw(key).parse().unwrap()
        }
        pub(crate) fn bool(&self, key: &str) -> bool {
            self.raw(key) == "true"
        }
        pub(crate) fn str(&self, key: &str) -> String {
            self.raw(key).trim_matches('"').to_owned()
        }
        pub(crate) fn strs(&self, key: &str) -> Vec<String> {
            let raw = self.raw(key);
            raw.trim_start_matches('[')
                .trim_end_matches(']')
                .split(", ")
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_matches('"').to_owned())
                .collect()
        }
    }
}
