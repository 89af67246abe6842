//! The keepalive timer of a connection, both roles (spec, "KEEPALIVE Frame"): the client
//! sends `KEEPALIVE(R)` every interval; either side closes the connection with
//! `ERROR[CONNECTION_ERROR]` when the peer has sent no frame for the max lifetime. The
//! server also renews the LEASE it grants, when the client asked for leases.

use std::time::Duration;

use bytes::Bytes;

use super::Conn;
use crate::loom::sync::Arc;
use crate::rsocket::config::LeaseGrant;
use crate::rsocket::error::ErrorCode;
use crate::rsocket::frame::Frame;

/// What the timer does.
pub(crate) struct Keepalive {
    /// Send `KEEPALIVE(R)` at this interval (the client).
    pub(crate) send_every: Option<Duration>,
    /// Close after this long without a frame from the peer.
    pub(crate) lifetime: Duration,
    /// Renew this LEASE every half of its time to live (the server, for a client that asked).
    pub(crate) lease: Option<LeaseGrant>,
}

/// Runs the timer until the connection closes.
pub(crate) async fn run(conn: Arc<Conn>, k: Keepalive) {
    // Check the peer's silence at least four times per lifetime.
    let mut period = k.lifetime / 4;
    if let Some(every) = k.send_every {
        period = period.min(every);
    }
    let lease_every = k.lease.map(|g| g.ttl / 2);
    if let Some(every) = lease_every {
        period = period.min(every);
    }
    let period = period.max(Duration::from_millis(1));
    let start = tokio::time::Instant::now();
    let mut next_keepalive = k.send_every.map(|d| start + d);
    let mut next_lease = lease_every.map(|d| start + d);
    let mut tick = tokio::time::interval_at(start + period, period);
    // The peer's silence: how long the count of frames received has not grown.
    let (mut frames, mut heard) = (conn.frames_in(), start);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let now = tick.tick().await;
        if conn.is_closed() {
            return;
        }
        let now_frames = conn.frames_in();
        if now_frames != frames {
            (frames, heard) = (now_frames, now);
        }
        if now.duration_since(heard) > k.lifetime {
            conn.fail(
                ErrorCode::ConnectionError,
                format!(
                    "no frame from the peer for {} ms (the max lifetime)",
                    k.lifetime.as_millis()
                ),
            );
            return;
        }
        if let (Some(at), Some(every)) = (next_keepalive, k.send_every) {
            if now >= at {
                conn.send(Frame::Keepalive {
                    respond: true,
                    position: 0,
                    data: Bytes::new(),
                });
                next_keepalive = Some(now + every);
            }
        }
        if let (Some(at), Some(every), Some(grant)) = (next_lease, lease_every, k.lease.as_ref()) {
            if now >= at {
                conn.grant_lease(grant);
                next_lease = Some(now + every);
            }
        }
    }
}
