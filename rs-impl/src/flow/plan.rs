//! [`Plan`]: a blueprint with the budget of its islands, materialised for a subscriber or
//! into a boundary of ours.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::Error;

use super::blueprint::{Blueprint, SubscriberSlot};
use super::edge::{RingExit, SubscriberExit};
use super::exit::Exit;
use super::ring_out::RingOut;
use super::shape::{Build, Shape};
use crate::boundary::Shared;
use crate::island::{Island, IslandError};
use crate::loom::sync::Arc;
use crate::panics as report;

/// A blueprint and the budget of its islands.
pub(crate) struct Plan<S> {
    pub(crate) shape: S,
    pub(crate) budget: u64,
}

impl<S: Shape> Plan<S> {
    fn build<X: Exit<S::Out> + 'static>(&self, exit: X) -> Result<Vec<Island>, Error> {
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut b = Build::default();
            self.shape.place(&mut b, exit)?;
            b.finish()
        }));
        let interpreters = match r {
            Ok(Ok(i)) => i,
            Ok(Err(e)) => return Err(Error::new(e)),
            Err(p) => {
                return Err(Error::new(IslandError::StagePanicked {
                    stage: "a stage factory",
                    message: report::panic_message(&*p),
                }))
            }
        };
        Ok(interpreters
            .into_iter()
            .map(|(i, spawn_on)| {
                Island::new(i)
                    .with_budget(self.budget)
                    .with_spawn_on(spawn_on)
            })
            .collect())
    }
}

impl<S: Shape> Blueprint<S::Out> for Plan<S> {
    fn for_subscriber(&self, slot: &SubscriberSlot<S::Out>) -> Result<Vec<Island>, Error> {
        self.build(SubscriberExit::deferred(slot.clone()))
    }

    fn for_ring(&self, ring: &Arc<Shared<S::Out>>) -> Result<Vec<Island>, Error> {
        let cap = (ring.size() / 2).max(1);
        self.build(RingExit(RingOut::new(ring.clone(), cap)))
    }

    fn islands(&self) -> usize {
        self.shape.islands()
    }
}
