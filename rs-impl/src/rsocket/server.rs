//! The server: accept TCP connections, check each client's SETUP, and serve its requests
//! from a [`Router`].

use std::collections::HashMap;
use std::net::SocketAddr;

use bytes::BytesMut;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio_util::codec::{Encoder, FramedRead};

use super::codec::{CodecError, FrameCodec};
use super::config::ServerConfig;
use super::conn::keepalive::{self, Keepalive};
use super::conn::{reader, writer, Conn};
use super::error::{ErrorCode, RSocketError};
use super::frame::{Frame, Setup, VERSION};
use super::router::Router;
use super::table::Role;
use crate::loom::sync::{Arc, Mutex};

/// Live connections, by number.
type Registry = Arc<Mutex<HashMap<u64, Arc<Conn>>>>;

/// A bound RSocket server, not yet serving: [`Server::spawn`] or [`Server::serve`] starts it.
///
/// **SETUP checks.** The first frame of a connection must be SETUP on stream 0 (otherwise
/// `ERROR[INVALID_SETUP]`); a major version other than 1 is `ERROR[UNSUPPORTED_SETUP]`; a
/// SETUP asking for resumption is `ERROR[REJECTED_SETUP]` (resumption is not supported); a
/// malformed SETUP (zero keepalive times, MIME types that are not UTF-8, truncated) is
/// `ERROR[INVALID_SETUP]`. Each rejection closes that connection only. A client that asks
/// for leases (the L flag) is granted [`ServerConfig::lease`], renewed every half of its time
/// to live. A client silent for `min(its max lifetime, ServerConfig::max_lifetime)` is
/// disconnected with `ERROR[CONNECTION_ERROR]`, as is one that sends no SETUP in that
/// time.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::{Router, Server, ServerConfig};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let server = Server::bind("127.0.0.1:0", Router::new(), ServerConfig::default()).await?;
/// let handle = server.spawn();
/// assert_eq!(handle.connections(), 0);
/// handle.shutdown();
/// # Ok::<(), rs_impl::rsocket::RSocketError>(())
/// # }).unwrap();
/// ```
pub struct Server {
    listener: TcpListener,
    router: std::sync::Arc<Router>,
    config: ServerConfig,
    registry: Registry,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds to `addr` (port 0: any free port, see [`Server::local_addr`]).
    ///
    /// # Errors
    ///
    /// An invalid `config`, or the bind failed.
    pub async fn bind(
        addr: impl ToSocketAddrs,
        router: Router,
        config: ServerConfig,
    ) -> Result<Server, RSocketError> {
        config.validate()?;
        let listener = TcpListener::bind(addr).await?;
        Ok(Server {
            listener,
            router: std::sync::Arc::new(router),
            config,
            registry: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// The address the server listens on.
    ///
    /// # Panics
    ///
    /// If the socket has no local address (it always has once bound).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener")
    }

    /// Serves on the current task until an accept fails; each connection runs on tasks of
    /// its own.
    ///
    /// # Errors
    ///
    /// The accept error.
    pub async fn serve(self) -> std::io::Result<()> {
        let mut n = 0u64;
        loop {
            let (stream, _) = self.listener.accept().await?;
            n += 1;
            tokio::spawn(connection(
                n,
                stream,
                self.router.clone(),
                self.config.clone(),
                self.registry.clone(),
            ));
        }
    }

    /// Serves on a task of its own; the handle stops it.
    pub fn spawn(self) -> ServerHandle {
        let addr = self.local_addr();
        let registry = self.registry.clone();
        let task = tokio::spawn(async move {
            let _ = self.serve().await;
        });
        ServerHandle {
            addr,
            registry,
            accept: task.abort_handle(),
        }
    }
}

/// A running server. Dropping it (or [`ServerHandle::shutdown`]) stops accepting and closes
/// every connection.
#[must_use = "dropping the handle stops the server"]
pub struct ServerHandle {
    addr: SocketAddr,
    registry: Registry,
    accept: tokio::task::AbortHandle,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
            .field("connections", &self.connections())
            .finish()
    }
}

/// One connection's state, as [`ServerHandle::stats`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Streams open now.
    pub streams: usize,
    /// Items waiting for the writer now.
    pub queued: usize,
    /// The most items that ever waited for the writer at once.
    pub queued_max: usize,
    /// Frames read from the socket so far.
    pub frames_in: u64,
    /// Inbound lanes built for this connection: 0 with [`ServerConfig::lanes`] = 1 (frames
    /// are handled on the reader task, nothing is built), `lanes` otherwise.
    pub lanes: usize,
    /// Frames waiting in the fullest inbound lane now (its ring; 0 without lanes). At most
    /// the lane's capacity ([`ServerConfig::lane_capacity`] rounded up to a power of two).
    pub lane_depth: usize,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections past their SETUP and not yet closed.
    pub fn connections(&self) -> usize {
        self.registry.lock().len()
    }

    /// The state of each live connection.
    pub fn stats(&self) -> Vec<ConnectionStats> {
        let conns: Vec<_> = self.registry.lock().values().cloned().collect();
        conns
            .iter()
            .map(|c| ConnectionStats {
                streams: c.table.len(),
                queued: c.outbox.len(),
                queued_max: c.outbox.high_water(),
                frames_in: c.frames_in(),
                lanes: c.lanes(),
                lane_depth: c.lane_depth(),
            })
            .collect()
    }

    /// Stops accepting and closes every connection.
    pub fn shutdown(&self) {
        self.accept.abort();
        let conns: Vec<_> = self.registry.lock().drain().map(|(_, c)| c).collect();
        for c in conns {
            c.close(RSocketError::Closed("the server shut down".into()), None);
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Answers a SETUP with `ERROR[code]` and closes.
async fn reject(mut stream: TcpStream, mut codec: FrameCodec, code: ErrorCode, message: String) {
    let mut buf = BytesMut::new();
    let _ = codec.encode(
        Frame::Error {
            id: 0,
            code,
            data: message.into(),
        },
        &mut buf,
    );
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        let _ = stream.write_all(&buf).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

fn check_setup(setup: &Setup) -> Result<(), (ErrorCode, String)> {
    if setup.version.0 != VERSION.0 {
        return Err((
            ErrorCode::UnsupportedSetup,
            format!(
                "protocol version {}.{} is not supported (this server speaks {}.{})",
                setup.version.0, setup.version.1, VERSION.0, VERSION.1
            ),
        ));
    }
    if setup.resume_token.is_some() {
        return Err((
            ErrorCode::RejectedSetup,
            "resumption is not supported".into(),
        ));
    }
    Ok(())
}

async fn connection(
    n: u64,
    stream: TcpStream,
    router: std::sync::Arc<Router>,
    config: ServerConfig,
    registry: Registry,
) {
    let _ = stream.set_nodelay(true);
    let cc = &config.connection;
    let codec = FrameCodec::new(cc.max_frame, cc.mtu);
    // The SETUP, read before the connection's tasks exist; the stream is reunited to answer a
    // rejection.
    let (rd, wr) = stream.into_split();
    let mut frames = FramedRead::with_capacity(rd, codec.clone(), 16 << 10);
    let first = tokio::time::timeout(config.max_lifetime, frames.next()).await;
    let refuse = |frames: FramedRead<_, FrameCodec>, wr, code, message| {
        let rd = frames.into_inner();
        let stream = tokio::net::tcp::OwnedReadHalf::reunite(rd, wr);
        let codec = codec.clone();
        async move {
            if let Ok(stream) = stream {
                reject(stream, codec, code, message).await;
            }
        }
    };
    let setup = match first {
        Ok(Some(Ok(Frame::Setup(setup)))) => setup,
        Ok(Some(Ok(other))) => {
            let msg = format!(
                "the first frame must be SETUP (got a frame on stream {} instead)",
                other.stream_id()
            );
            return refuse(frames, wr, ErrorCode::InvalidSetup, msg).await;
        }
        Ok(Some(Err(CodecError::Frame(e)))) => {
            let code = if e.code == ErrorCode::ConnectionError {
                ErrorCode::InvalidSetup
            } else {
                e.code
            };
            return refuse(frames, wr, code, e.message).await;
        }
        Err(_) => {
            let msg = "no SETUP within the max lifetime".to_string();
            return refuse(frames, wr, ErrorCode::InvalidSetup, msg).await;
        }
        _ => return,
    };
    if let Err((code, msg)) = check_setup(&setup) {
        return refuse(frames, wr, code, msg).await;
    }
    let conn = Arc::new(Conn::new(Role::Server, cc.clone()));
    let lease = setup.lease.then_some(config.lease);
    if let Some(grant) = &lease {
        conn.grant_lease(grant);
    }
    registry.lock().insert(n, conn.clone());
    let out = writer::Writer::shared(wr, codec.clone(), cc.write_buffer);
    tokio::spawn(writer::run(conn.clone(), out.clone()));
    let lifetime =
        std::time::Duration::from_millis(setup.lifetime_ms as u64).min(config.max_lifetime);
    let timer = tokio::spawn(keepalive::run(
        conn.clone(),
        Keepalive {
            send_every: None,
            lifetime,
            lease,
        },
    ));
    let lanes = (config.lanes > 1).then_some((config.lanes, config.lane_capacity));
    let reader = tokio::spawn(reader::run(conn.clone(), frames, Some(router), lanes, out));
    conn.set_reader_task(reader.abort_handle());
    if conn.is_closed() {
        reader.abort();
    }
    let _ = reader.await;
    timer.abort();
    registry.lock().remove(&n);
}
