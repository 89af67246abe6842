//! What a flow's publisher holds of its blueprint: [`Blueprint`], the blueprint erased at the
//! island's edge, whose two methods are each compiled for the blueprint's exact type (one for
//! a subscriber, one for a boundary of ours), so the fused chain inside stays static.

use rs_api::{BoxSubscriber, Error};

use super::ring_out::RingOut;
use crate::boundary::Shared;
use crate::island::{Island, Runtime};
use crate::loom::sync::{Arc, Mutex};

/// Where a subscriber waits until its island starts (so that a failed build can give it
/// back).
pub(crate) type SubscriberSlot<T> = Arc<Mutex<Option<BoxSubscriber<T>>>>;

/// A blueprint with its island budget, erased at the island's edge.
pub(crate) trait Blueprint<T>: Send + Sync {
    /// The islands of one materialisation serving the subscriber in `slot`.
    fn for_subscriber(&self, slot: &SubscriberSlot<T>) -> Result<Vec<Island>, Error>;
    /// The islands of one materialisation whose last one writes into `ring` (claimed).
    fn for_ring(&self, ring: &Arc<Shared<T>>) -> Result<Vec<Island>, Error>;
    /// The islands one materialisation runs on.
    fn islands(&self) -> usize;
}

/// Starts `islands` here (`on_subscribe` before `subscribe` returns) and spawns them.
pub(crate) fn start_and_spawn(islands: Vec<Island>, runtime: &Runtime) {
    let mut islands = islands;
    for island in &mut islands {
        island.start();
    }
    for mut island in islands {
        match island.take_spawn_on() {
            Some(spawn) => spawn(island),
            None => runtime.spawn(island),
        }
    }
}

/// Materialises `plan` into `ring` (a boundary of ours, whose producer side the caller
/// claimed) and spawns it on `runtime`; a failed build fails the ring.
pub(crate) fn spawn_into<T: Send + 'static>(
    plan: &dyn Blueprint<T>,
    runtime: &Runtime,
    ring: Arc<Shared<T>>,
) {
    match plan.for_ring(&ring) {
        Ok(islands) => start_and_spawn(islands, runtime),
        Err(e) => RingOut::new(ring, 1).fail(e),
    }
}
