//! Keyed lanes: one stream processed in parallel by `n` lanes, each element going to the lane
//! its key selects, each key's elements kept in order, every lane behind a bounded queue
//! (seed 004: Akka.NET Artery's inbound lanes, #8356; Pekko's `FixedSizePartitionHub`).
//!
//! [`Flow::lanes`](crate::flow::Flow::lanes) merges the lanes back into one stream;
//! [`Flow::subscribe_lanes`](crate::flow::Flow::subscribe_lanes) ends each lane in a
//! subscriber of its own.
//!
//! # Contract
//!
//! * **Lanes are fixed.** The lane count is set when the flow is built and holds for the
//!   stream's life. The flow of each lane is built once per lane (the function given to
//!   `lanes` runs `n` times). Each materialisation runs each lane on an island of its own, and
//!   every lane is attached before the first element moves. So no lane can be missing while
//!   elements wait for it: the `groupBy` deadlock (RxJava #6284, Reactor #596/#2138) cannot
//!   happen.
//! * **Lane selection is stable:** an element goes to lane
//!   `lane_of(key(x).lane_hash(), n)` = `toPositive(murmur2(key bytes)) % n`. These are
//!   Kafka's `Utils.murmur2` and default partitioner, with golden values from Kafka's own
//!   tests pinned in this crate's unit tests. The key's bytes have a fixed encoding
//!   ([`LaneKey`]: UTF-8 for strings, big-endian for integers). The same key reaches the same
//!   lane in every run, process, platform and version. No `Hash` encoding and no seeded hasher
//!   is used. murmur2 rather than xxh3: it is four lines and specified by the most widely
//!   deployed keyed partitioner, so a key routed here lands on the lane a Kafka producer would
//!   choose with the same count, and hashing is a small part of a lane's cost.
//! * **Order:** each key's elements reach its lane, and leave it, in upstream order.
//!   Elements of different keys (different lanes) have no order between them. The merged
//!   output takes elements in the order they arrive from the lanes.
//! * **Bounded queues, head-of-line blocking:** each lane reads from one bounded
//!   single-producer single-consumer ring of the crate's hand-off layer
//!   ([`DEFAULT_LANE_CAPACITY`] elements by default, [`LanesConfig::capacity`]).
//!   - The dispatcher at the upstream island's exit writes within the credit the lane
//!     granted and publishes a batch per run of its island (or at half the ring). A lane is
//!     woken only when it parked on an empty ring, as with the async boundary
//!     ([`crate::boundary`]).
//!   - **An element whose lane is full waits, and so does everything behind it:** upstream
//!     demand stops until that lane has room. This is head-of-line blocking, as in Pekko's
//!     partition hub. Nothing is dropped, and no queue grows beyond its capacity.
//!   - [`LaneDepths`] shows each lane's depth.
//!   - The merged output reads each lane through a ring of [`LanesConfig::output`]
//!     elements.
//! * **Broadcast:** elements matching [`LanesConfig::broadcast`]'s predicate go to every
//!   lane, a clone per lane (the last lane takes the element itself). Each lane receives the
//!   element at its place in that lane's order, like Artery's handshake copies. Only the
//!   broadcast variant needs `T: Clone`.
//! * **Failure:** when a lane fails (an operator's error or panic, a failing subscriber is
//!   not one: it is cancelled), the stream fails with [`LanesError::LaneFailed`], which names
//!   the lane. The upstream is cancelled, and the other lanes are cancelled (merged) or failed
//!   with the same error (per-lane subscribers). An upstream error reaches every lane as it
//!   is.
//! * **Cancel:** a cancel of the merged output reaches every lane and then the upstream.
//!   With per-lane subscribers, a lane whose subscriber cancels is dropped from the stream
//!   (elements keyed to it are dropped), and the upstream is cancelled once every lane has
//!   cancelled. On every path, what the rings hold is dropped: nothing leaks.
//! * **One lane costs nothing:** with `n = 1` the lane flow runs inline on the upstream's
//!   island. There is no ring, no island and no allocation: the flow is exactly the one you
//!   would write without `lanes`.
//! * **Threads:** every island runs on a worker of the flow's runtime, so lanes run in
//!   parallel as far as the runtime has threads.
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::{flow::Flow, Runtime};
//! use rs_impl::lanes::{KeyHash, LanesConfig};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! #[derive(Clone, Debug)]
//! struct Msg { to: String, n: u32 }
//!
//! let runtime = Runtime::with_threads(2).unwrap();
//! let msgs: Vec<Msg> = (0..200).map(|n| Msg { to: format!("actor-{}", n % 5), n }).collect();
//! let p = Flow::from_iter(msgs)
//!     .lanes_with(LanesConfig::new(4).capacity(128), |m: &Msg| KeyHash::of(m.to.as_str()), |lane| {
//!         lane.map(|m: Msg| (m.to, m.n * 10)) // "deserialise and dispatch", in parallel
//!     })
//!     .into_publisher(&runtime);
//! let (s, h) = collect(RequestStrategy::Prefetch(32));
//! p.subscribe(Box::new(s));
//! let got = h.wait().unwrap();
//! assert_eq!(got.len(), 200);
//! let to_actor_2: Vec<u32> = got.iter().filter(|(to, _)| to == "actor-2").map(|(_, n)| *n).collect();
//! assert!(to_actor_2.windows(2).all(|w| w[0] < w[1])); // one recipient's messages in order
//! ```

mod dispatch;
mod join;
mod key;
mod shape;

use std::fmt;
use std::sync::Arc as StdArc;

use rs_api::Error;

use crate::handoff::Ring;
use crate::island::Notifier;
use crate::loom::sync::{Arc, Mutex};

pub use key::{lane_of, murmur2, KeyHash, LaneKey};
pub use shape::{LaneIn, LanesShape};

/// Each lane's queue by default, in elements (akka.net's `inbound-lane-buffer-size`).
pub const DEFAULT_LANE_CAPACITY: usize = 4096;

/// The ring from each lane into the merging island by default, in elements.
pub const DEFAULT_LANE_OUTPUT: usize = 1024;

/// Why keyed lanes failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LanesError {
    /// A lane failed: the stream fails with its error, naming it.
    #[error("lane {lane} of {lanes} failed: {error}")]
    LaneFailed {
        /// The lane that failed (0-based).
        lane: usize,
        /// The lane count.
        lanes: usize,
        /// The lane's own error.
        #[source]
        error: Error,
    },
    /// No lane: [`Flow::subscribe_lanes`](crate::flow::Flow::subscribe_lanes) was given no
    /// subscriber.
    #[error("keyed lanes need at least one lane (no subscriber was given)")]
    NoLanes,
}

/// Elements every lane must see: the predicate and the copy.
pub(crate) struct Broadcast<T> {
    pub(crate) predicate: StdArc<dyn Fn(&T) -> bool + Send + Sync>,
    pub(crate) copy: fn(&T) -> T,
}

impl<T> Clone for Broadcast<T> {
    fn clone(&self) -> Self {
        Broadcast {
            predicate: self.predicate.clone(),
            copy: self.copy,
        }
    }
}

/// How keyed lanes are set up: the lane count, each lane's capacity, the ring into the
/// merging island, elements every lane sees, a depth handle.
///
/// # Examples
///
/// ```
/// use rs_impl::lanes::{LaneDepths, LanesConfig};
/// let depths = LaneDepths::new();
/// let c = LanesConfig::new(8).capacity(1024).output(256).broadcast(|x: &u32| *x == 0).depths(&depths);
/// assert_eq!((c.lane_count(), c.lane_capacity()), (8, 1024));
/// ```
pub struct LanesConfig<T> {
    lanes: usize,
    capacity: usize,
    output: usize,
    broadcast: Option<Broadcast<T>>,
    depths: Option<LaneDepths>,
}

impl<T> Clone for LanesConfig<T> {
    fn clone(&self) -> Self {
        LanesConfig {
            lanes: self.lanes,
            capacity: self.capacity,
            output: self.output,
            broadcast: self.broadcast.clone(),
            depths: self.depths.clone(),
        }
    }
}

impl<T> fmt::Debug for LanesConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LanesConfig")
            .field("lanes", &self.lanes)
            .field("capacity", &self.capacity)
            .field("output", &self.output)
            .field("broadcast", &self.broadcast.is_some())
            .finish()
    }
}

impl<T> LanesConfig<T> {
    /// `lanes` lanes of [`DEFAULT_LANE_CAPACITY`], merged through rings of
    /// [`DEFAULT_LANE_OUTPUT`], no broadcast.
    ///
    /// # Panics
    ///
    /// If `lanes` is 0.
    ///
    /// # Examples
    ///
    /// See [`LanesConfig`].
    #[track_caller]
    pub fn new(lanes: usize) -> Self {
        assert!(
            lanes > 0,
            "LanesConfig::new(0): keyed lanes need at least one lane"
        );
        LanesConfig {
            lanes,
            capacity: DEFAULT_LANE_CAPACITY,
            output: DEFAULT_LANE_OUTPUT,
            broadcast: None,
            depths: None,
        }
    }

    /// Each lane's queue, in elements (rounded up to a power of two, at least 2).
    ///
    /// # Panics
    ///
    /// If `capacity` is 0.
    ///
    /// # Examples
    ///
    /// See [`LanesConfig`].
    #[track_caller]
    pub fn capacity(mut self, capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "LanesConfig::capacity(0): a lane must hold at least one element"
        );
        self.capacity = capacity;
        self
    }

    /// The ring from each lane into the merging island (rounded up to a power of two, at
    /// least 2).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    ///
    /// # Examples
    ///
    /// See [`LanesConfig`].
    #[track_caller]
    pub fn output(mut self, size: usize) -> Self {
        assert!(
            size > 0,
            "LanesConfig::output(0): a ring must hold at least one element"
        );
        self.output = size;
        self
    }

    /// Shows each lane's depth through `depths` (the latest materialisation's lanes).
    ///
    /// # Examples
    ///
    /// See [`LaneDepths`].
    pub fn depths(mut self, depths: &LaneDepths) -> Self {
        self.depths = Some(depths.clone());
        self
    }

    /// The lane count.
    ///
    /// # Examples
    ///
    /// See [`LanesConfig`].
    pub fn lane_count(&self) -> usize {
        self.lanes
    }

    /// Each lane's capacity as asked (the ring is this rounded up to a power of two).
    ///
    /// # Examples
    ///
    /// See [`LanesConfig`].
    pub fn lane_capacity(&self) -> usize {
        self.capacity
    }

    /// The same, with `lanes` lanes.
    pub(crate) fn with_lanes(mut self, lanes: usize) -> Self {
        self.lanes = lanes;
        self
    }
}

impl<T: Clone + 'static> LanesConfig<T> {
    /// Elements for which `predicate` holds go to every lane (a clone each), in each lane's
    /// order. The only setting that needs `T: Clone`.
    ///
    /// # Examples
    ///
    /// See [`Flow::lanes_with`](crate::flow::Flow::lanes_with).
    pub fn broadcast<P>(mut self, predicate: P) -> Self
    where
        P: Fn(&T) -> bool + Send + Sync + 'static,
    {
        self.broadcast = Some(Broadcast {
            predicate: StdArc::new(predicate),
            copy: T::clone,
        });
        self
    }
}

/// A ring whose depth can be read.
pub(crate) trait Depth: Send + Sync {
    fn depth(&self) -> usize;
}

/// One lane's ring, for [`LaneDepths`].
pub(crate) struct RingDepth<T>(pub(crate) Arc<Ring<T, Notifier>>);

impl<T: Send> Depth for RingDepth<T> {
    fn depth(&self) -> usize {
        self.0.depth()
    }
}

/// Each lane's depth, for the latest materialisation set up with
/// [`LanesConfig::depths`]. A lane's depth is what the dispatcher published into its ring
/// and the lane has not handed back yet (slots are handed back half a ring at a time). It
/// never exceeds the lane's capacity.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::{flow::Flow, lanes::{LaneDepths, LanesConfig}, Runtime};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = Runtime::with_threads(2).unwrap();
/// let depths = LaneDepths::new();
/// let p = Flow::from_iter(0u32..1000)
///     .lanes_with(LanesConfig::new(2).capacity(16).depths(&depths), |x| *x, |l| l)
///     .into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap().len(), 1000);
/// let now = depths.depths();
/// assert_eq!(now.len(), 2);
/// assert!(now.iter().all(|d| *d <= 16));
/// ```
#[derive(Clone, Default)]
pub struct LaneDepths {
    rings: Arc<Mutex<Vec<StdArc<dyn Depth>>>>,
}

impl fmt::Debug for LaneDepths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaneDepths")
            .field("depths", &self.depths())
            .finish()
    }
}

impl LaneDepths {
    /// A handle that shows nothing until a materialisation attaches its lanes.
    ///
    /// # Examples
    ///
    /// See [`LaneDepths`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Each lane's depth now (empty before the first materialisation).
    ///
    /// # Examples
    ///
    /// See [`LaneDepths`].
    pub fn depths(&self) -> Vec<usize> {
        self.rings.lock().iter().map(|r| r.depth()).collect()
    }

    pub(crate) fn attach(&self, rings: Vec<StdArc<dyn Depth>>) {
        *self.rings.lock() = rings;
    }
}
