//! The fanout's subscribers, stored densely by what the drain pass does with them.
//!
//! Three sets, each a `Vec` of the subscribers themselves (not of ids), so that the hot loop
//! over the group walks contiguous memory as a loop over a `Vec` of closures would:
//!
//! | set | who | what the pass does |
//! |---|---|---|
//! | group | caught up (position = the ring's write position), demand not known to be exhausted | each new element goes to all of them in one loop; they move in the ring as one |
//! | lagging | behind the write position, with demand | each is visited: delivered everything it may have, its cursor moved once |
//! | parked | out of demand (or starting) | nothing, until its own `request` un-parks it |
//!
//! A subscriber is known to the outside (its subscription's inbox entries) by an **id**: its
//! slot index and the slot's generation, which changes when the subscriber leaves, so that a
//! late entry for a subscriber that left never reaches a newer one in the same slot.

use std::sync::Arc;

use rs_api::BoxSubscriber;

use super::handle::Handle;

/// One of the three sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Set {
    Group,
    Lagging,
    Parked,
}

/// One subscriber, as the drainer keeps it. The hot fields come first.
pub(super) struct Sub<T> {
    pub(super) subscriber: BoxSubscriber<T>,
    /// In the group: the position of the element it has no demand for, as far as `limit`
    /// says (so that a delivery stores nothing per subscriber; the group's checked loop
    /// compares it with the element's position, and [`Roster::group_stop`] is the nearest of
    /// the members' `stop`s, before which nothing is compared). Stale elsewhere.
    pub(super) stop: u64,
    /// The demand total last read; re-read only when `emitted` reaches it (in the group:
    /// when the element's position reaches `stop`).
    pub(super) limit: u64,
    /// Elements delivered (the drainer's local count; never an atomic per element). Stale
    /// while in the group: see [`enter_group`](Self::enter_group).
    pub(super) emitted: u64,
    pub(super) handle: Arc<Handle>,
    /// The position of the next element it reads. Stale while in the group, whose position is
    /// the ring's write position.
    pub(super) cursor: u64,
    /// Its slot.
    slot: u32,
}

impl<T> Sub<T> {
    /// It joins the group at position `pos` (the ring's write position): from now on its
    /// count of elements delivered is kept as the position where its demand runs out.
    #[inline]
    fn enter_group(&mut self, pos: u64) {
        self.stop = pos.wrapping_add(self.limit.wrapping_sub(self.emitted));
    }

    /// It leaves the group with `pos` as the position of the next element it reads: its
    /// cursor and its count of elements delivered are brought up to date.
    #[inline]
    pub(super) fn leave_group(&mut self, pos: u64) {
        self.cursor = pos;
        self.emitted = self.limit.wrapping_sub(self.stop.wrapping_sub(pos));
    }
}

/// Where a slot's subscriber is.
#[derive(Clone, Copy)]
struct Place {
    generation: u32,
    /// `Some((set, index in that set's Vec))` while a subscriber holds the slot.
    at: Option<(Set, u32)>,
}

/// The subscribers. See the [module docs](self).
pub(super) struct Roster<T> {
    places: Vec<Place>,
    free: Vec<u32>,
    pub(super) group: Vec<Sub<T>>,
    /// A position no later than any group member's `stop`, and no earlier than the group's
    /// position (the ring's write position) while the group has members: until an element's
    /// position reaches it, every member has demand for the element, and the group's loop
    /// compares nothing per member (see `deliver.rs`). Set when a member joins (lowered to
    /// its `stop` if that comes first, or set to it if the group was empty) and when the
    /// group's checked loop has re-read the members' demand; a member leaving leaves it as
    /// it is (then it may come early: a checked loop that finds everyone ready, and moves
    /// it on). Stale while the group is empty.
    pub(super) group_stop: u64,
    pub(super) lagging: Vec<Sub<T>>,
    parked: Vec<Sub<T>>,
}

impl<T> Roster<T> {
    pub(super) fn new() -> Self {
        Roster {
            places: Vec::new(),
            free: Vec::new(),
            group: Vec::new(),
            group_stop: 0,
            lagging: Vec::new(),
            parked: Vec::new(),
        }
    }

    /// Subscribers in all.
    pub(super) fn len(&self) -> usize {
        self.group.len() + self.lagging.len() + self.parked.len()
    }

    /// Adds a subscriber, parked; returns its slot and its id.
    pub(super) fn insert(
        &mut self,
        subscriber: BoxSubscriber<T>,
        handle: Arc<Handle>,
        cursor: u64,
    ) -> (usize, u64) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.places.push(Place {
                    generation: 0,
                    at: None,
                });
                (self.places.len() - 1) as u32
            }
        };
        let place = &mut self.places[slot as usize];
        place.at = Some((Set::Parked, self.parked.len() as u32));
        self.parked.push(Sub {
            subscriber,
            stop: 0,
            limit: 0,
            emitted: 0,
            handle,
            cursor,
            slot,
        });
        (
            slot as usize,
            u64::from(slot) | (u64::from(place.generation) << 32),
        )
    }

    /// The slot of the subscriber with `id`, if it is still here.
    pub(super) fn live(&self, id: u64) -> Option<usize> {
        let (slot, generation) = ((id & 0xffff_ffff) as usize, (id >> 32) as u32);
        let place = self.places.get(slot)?;
        (place.generation == generation && place.at.is_some()).then_some(slot)
    }

    /// The slots of every subscriber (for the walks at termination).
    pub(super) fn slots(&self) -> Vec<usize> {
        (0..self.places.len())
            .filter(|&s| self.places[s].at.is_some())
            .collect()
    }

    fn at(&self, slot: usize) -> (Set, usize) {
        let (set, i) = self.places[slot].at.expect("a live slot");
        (set, i as usize)
    }

    fn vec(&mut self, set: Set) -> &mut Vec<Sub<T>> {
        match set {
            Set::Group => &mut self.group,
            Set::Lagging => &mut self.lagging,
            Set::Parked => &mut self.parked,
        }
    }

    /// The set of the subscriber in `slot`.
    pub(super) fn set_of(&self, slot: usize) -> Set {
        self.at(slot).0
    }

    pub(super) fn get(&self, slot: usize) -> &Sub<T> {
        let (set, i) = self.at(slot);
        match set {
            Set::Group => &self.group[i],
            Set::Lagging => &self.lagging[i],
            Set::Parked => &self.parked[i],
        }
    }

    pub(super) fn get_mut(&mut self, slot: usize) -> &mut Sub<T> {
        let (set, i) = self.at(slot);
        &mut self.vec(set)[i]
    }

    /// Takes the subscriber at `index` of `set` out of that set's `Vec`.
    fn unlink(&mut self, set: Set, index: usize) -> Sub<T> {
        let v = self.vec(set);
        let sub = v.swap_remove(index);
        if let Some(moved) = v.get(index) {
            let s = moved.slot as usize;
            self.places[s].at = Some((set, index as u32));
        }
        sub
    }

    /// Moves the subscriber in `slot` to `to`.
    pub(super) fn move_to(&mut self, slot: usize, to: Set) {
        let (set, i) = self.at(slot);
        if set == to {
            return;
        }
        let sub = self.unlink(set, i);
        let v = self.vec(to);
        v.push(sub);
        let index = (v.len() - 1) as u32;
        self.places[slot].at = Some((to, index));
    }

    /// Moves the subscriber in `slot`, which is at `pos`, the ring's write position, into the
    /// group (see [`Sub::enter_group`]), and brings [`group_stop`](Self::group_stop) forward to
    /// its `stop` if that comes first.
    pub(super) fn join_group(&mut self, slot: usize, pos: u64) {
        let was_empty = self.group.is_empty();
        let sub = self.get_mut(slot);
        sub.enter_group(pos);
        let stop = sub.stop;
        if was_empty || stop.wrapping_sub(pos) < self.group_stop.wrapping_sub(pos) {
            self.group_stop = stop;
        }
        self.move_to(slot, Set::Group);
    }

    /// Moves the group member at `index` to the parked set (during the broadcast loop, which
    /// addresses the group by index); returns its slot.
    pub(super) fn park_group_member(&mut self, index: usize) -> usize {
        let slot = self.group[index].slot as usize;
        self.move_to(slot, Set::Parked);
        slot
    }

    /// The slot of the lagging subscriber at `index`.
    pub(super) fn slot_of_lagging(&self, index: usize) -> usize {
        self.lagging[index].slot as usize
    }

    /// Removes the subscriber in `slot`; the slot's generation changes.
    pub(super) fn take(&mut self, slot: usize) -> Sub<T> {
        let (set, i) = self.at(slot);
        let sub = self.unlink(set, i);
        let place = &mut self.places[slot];
        place.at = None;
        place.generation = place.generation.wrapping_add(1);
        self.free.push(slot as u32);
        sub
    }
}
