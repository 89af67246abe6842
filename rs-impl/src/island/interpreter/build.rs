//! Wiring a graph: [`GraphBuilder`] and [`BuildError`].

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::super::mailbox::Mailbox;
use super::super::port::{Inlet, Outlet, PortId, Ports};
use super::super::stage::Stage;
use super::core::{
    clear_slot, free_slot, Conn, Core, Dispatch, DropSlot, SlotOps, Stats, IN_READY, NO_EVENT,
    NO_STAGE, OUTLET_BIT,
};
use super::run::Interpreter;
use super::table::Stages;
use crate::loom::sync::Arc;
use crate::panics as report;

/// Why a graph could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A connection's in-port or out-port is declared by no stage.
    #[error("connection {connection}: its {side} is declared by no stage")]
    Unconnected {
        /// The connection index.
        connection: u32,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
    },
    /// A port is declared by two stages, or twice by one.
    #[error("connection {connection}: its {side} is declared twice")]
    DeclaredTwice {
        /// The connection index.
        connection: u32,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
    },
    /// A stage declared a port that this builder did not make.
    #[error("connection {connection} does not exist in this graph")]
    UnknownPort {
        /// The connection index.
        connection: u32,
    },
    /// A flow with async boundaries runs on several islands (use `Flow::into_islands`).
    #[error("the flow runs on {islands} islands (it has async boundaries): use into_islands")]
    SeveralIslands {
        /// How many.
        islands: usize,
    },
    /// A boundary's input side was materialised already (a boundary has one consumer).
    #[error("the boundary input was materialised already (a boundary has one consumer)")]
    AlreadyMaterialised,
    /// A lane flow of keyed lanes (`Flow::lanes`) does not read the input it was given.
    #[error("lane {lane}: the lane flow does not start from the lane's input")]
    LaneInputUnused {
        /// The lane.
        lane: usize,
    },
    /// An erased port was re-typed with another element type.
    #[error("connection {connection} carries {expected}, not {asked}")]
    WrongType {
        /// The connection index.
        connection: u32,
        /// The connection's element type.
        expected: &'static str,
        /// The type asked for.
        asked: &'static str,
    },
}

/// Builds a graph of stages for an [`Interpreter`]: make connections, hand their ends to
/// stages, add the stages.
///
/// # Examples
///
/// ```
/// use rs_impl::island::{stages, GraphBuilder};
///
/// let mut g = GraphBuilder::new();
/// let (src_out, map_in) = g.connection::<u32>();
/// let (map_out, sink_in) = g.connection::<u32>();
/// let (sink, seen) = stages::CollectSink::new(sink_in);
/// g.add_stage(rs_impl::flow::IterSource::new(src_out, 1..=3u32));
/// g.add_stage(rs_impl::flow::OperatorStage::new(map_in, map_out, rs_impl::flow::ops::Map::new(|x: u32| x * 10)));
/// g.add_stage(sink);
/// let mut interpreter = g.build().unwrap();
/// interpreter.init();
/// interpreter.execute(u64::MAX);
/// assert!(interpreter.is_completed());
/// assert_eq!(seen.take().unwrap().unwrap(), vec![10, 20, 30]);
/// ```
pub struct GraphBuilder {
    pub(super) conns: Vec<Conn>,
    pub(super) slot_ops: Vec<SlotOps>,
    /// Stage `i`.
    pub(super) stages: Vec<Box<dyn Stage>>,
    pub(super) port_start: Vec<u32>,
    pub(super) port_list: Vec<u32>,
    pub(super) error: Option<BuildError>,
}

impl fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("connections", &self.conns.len())
            .field("stages", &self.stages.len())
            .finish()
    }
}

impl Drop for GraphBuilder {
    fn drop(&mut self) {
        // Slots not handed to an interpreter are freed here.
        for (conn, ops) in self.conns.drain(..).zip(self.slot_ops.drain(..)) {
            report::drop_guarded(DropSlot(ops.free, conn.slot));
        }
    }
}

impl GraphBuilder {
    /// An empty graph.
    ///
    /// # Examples
    ///
    /// ```
    /// let g = rs_impl::island::GraphBuilder::new();
    /// assert_eq!(g.stage_count(), 0);
    /// ```
    pub fn new() -> Self {
        GraphBuilder {
            conns: Vec::new(),
            slot_ops: Vec::new(),
            stages: Vec::new(),
            port_start: vec![0],
            port_list: Vec::new(),
            error: None,
        }
    }

    /// Makes a connection for elements of type `T`: its out-port and its in-port, to hand to
    /// two stages.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (out, inlet) = g.connection::<String>();
    /// assert_eq!(out.id(), inlet.id());
    /// ```
    pub fn connection<T: Send + 'static>(&mut self) -> (Outlet<T>, Inlet<T>) {
        let id = u32::try_from(self.conns.len()).expect("fewer than 2^31 connections");
        assert!(id < OUTLET_BIT && id != NO_EVENT, "too many connections");
        let slot = NonNull::from(Box::leak(Box::new(None::<T>))).cast::<()>();
        self.conns.push(Conn {
            state: IN_READY,
            in_owner: NO_STAGE,
            out_owner: NO_STAGE,
            type_id: TypeId::of::<T>(),
            slot,
            dispatch: Dispatch::UNSET,
        });
        self.slot_ops.push(SlotOps {
            clear: clear_slot::<T>,
            free: free_slot::<T>,
            type_name: std::any::type_name::<T>(),
        });
        (
            Outlet {
                id,
                _t: PhantomData,
            },
            Inlet {
                id,
                _t: PhantomData,
            },
        )
    }

    /// Re-types the in-port of connection `id` (for builders that keep ports erased).
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownPort`] or [`BuildError::WrongType`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (_, inlet) = g.connection::<u8>();
    /// assert_eq!(g.inlet::<u8>(inlet.id()).unwrap(), inlet);
    /// assert!(g.inlet::<u16>(inlet.id()).is_err());
    /// ```
    pub fn inlet<T: 'static>(&self, id: PortId) -> Result<Inlet<T>, BuildError> {
        self.check_type::<T>(id.0)?;
        Ok(Inlet {
            id: id.0,
            _t: PhantomData,
        })
    }

    /// Re-types the out-port of connection `id`.
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownPort`] or [`BuildError::WrongType`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (out, _) = g.connection::<u8>();
    /// assert_eq!(g.outlet::<u8>(out.id()).unwrap(), out);
    /// ```
    pub fn outlet<T: 'static>(&self, id: PortId) -> Result<Outlet<T>, BuildError> {
        self.check_type::<T>(id.0)?;
        Ok(Outlet {
            id: id.0,
            _t: PhantomData,
        })
    }

    pub(super) fn check_type<T: 'static>(&self, c: u32) -> Result<(), BuildError> {
        let conn = self
            .conns
            .get(c as usize)
            .ok_or(BuildError::UnknownPort { connection: c })?;
        if conn.type_id != TypeId::of::<T>() {
            return Err(BuildError::WrongType {
                connection: c,
                expected: self.slot_ops[c as usize].type_name,
                asked: std::any::type_name::<T>(),
            });
        }
        Ok(())
    }

    /// Adds a stage, which declares its ports through [`Stage::ports`]; returns its index.
    /// A declaration error is kept and returned by [`build`](Self::build).
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`].
    pub fn add_stage<S: Stage + 'static>(&mut self, stage: S) -> u32 {
        self.add_boxed(Box::new(stage))
    }

    /// Adds a boxed stage (see [`add_stage`](Self::add_stage)).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::{stages, GraphBuilder, Stage};
    /// let mut g = GraphBuilder::new();
    /// let (out, inlet) = g.connection::<u8>();
    /// let boxed: Box<dyn Stage> = Box::new(rs_impl::flow::OperatorStage::new(inlet, out, rs_impl::flow::ops::Identity::new()));
    /// assert_eq!(g.add_boxed(boxed), 0);
    /// ```
    pub fn add_boxed(&mut self, stage: Box<dyn Stage>) -> u32 {
        let mut ports = Ports::default();
        stage.ports(&mut ports);
        let index = self.next_index();
        self.declare(index, &ports.inlets, &ports.outlets);
        self.stages.push(stage);
        index
    }

    pub(super) fn next_index(&self) -> u32 {
        u32::try_from(self.stages.len()).expect("fewer than 2^32 stages")
    }

    /// Declares the ports of stage `index`, the next one in the port list.
    pub(super) fn declare(&mut self, index: u32, inlets: &[u32], outlets: &[u32]) {
        for &c in inlets {
            self.own(c, index, false);
            self.port_list.push(c);
        }
        for &c in outlets {
            self.own(c, index, true);
            self.port_list.push(c | OUTLET_BIT);
        }
        self.port_start
            .push(u32::try_from(self.port_list.len()).expect("fewer than 2^32 ports"));
    }

    pub(super) fn own(&mut self, c: u32, stage: u32, outlet: bool) {
        let side = if outlet { "outlet" } else { "inlet" };
        let Some(conn) = self.conns.get_mut(c as usize) else {
            self.error
                .get_or_insert(BuildError::UnknownPort { connection: c });
            return;
        };
        let owner = if outlet {
            &mut conn.out_owner
        } else {
            &mut conn.in_owner
        };
        if *owner != NO_STAGE {
            self.error.get_or_insert(BuildError::DeclaredTwice {
                connection: c,
                side,
            });
        }
        *owner = stage;
    }

    /// The number of stages added so far.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder::new`].
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Builds the interpreter (not started: call [`Interpreter::init`]).
    ///
    /// # Errors
    ///
    /// The first declaration error, or [`BuildError::Unconnected`] for a port no stage owns.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let _ = g.connection::<u8>();
    /// assert!(g.build().is_err()); // nobody owns either end
    /// ```
    pub fn build(mut self) -> Result<Interpreter, BuildError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (i, conn) in self.conns.iter().enumerate() {
            let connection = i as u32;
            if conn.in_owner == NO_STAGE {
                return Err(BuildError::Unconnected {
                    connection,
                    side: "inlet",
                });
            }
            if conn.out_owner == NO_STAGE {
                return Err(BuildError::Unconnected {
                    connection,
                    side: "outlet",
                });
            }
        }
        let logics = std::mem::take(&mut self.stages);
        let stages = logics.len();
        let capacity = self.conns.len().max(1).next_power_of_two();
        let mut shutdown = Vec::with_capacity(stages);
        let finalised = vec![false; stages];
        let mut pending = 0;
        for (s, &done) in finalised.iter().enumerate() {
            let ports = self.port_start[s + 1] - self.port_start[s];
            if ports == 0 && !done {
                pending += 1; // a zero-port stage starts completed
            }
            shutdown.push(ports);
        }
        let names = logics.iter().map(|s| s.name()).collect();
        let mut conns = std::mem::take(&mut self.conns);
        let logics = Stages::new(logics, &mut conns);
        let core = Core {
            conns,
            slot_ops: std::mem::take(&mut self.slot_ops),
            failures: Vec::new(),
            shutdown,
            finalised,
            port_start: std::mem::take(&mut self.port_start),
            port_list: std::mem::take(&mut self.port_list),
            queue: vec![NO_EVENT; capacity].into_boxed_slice(),
            mask: (capacity - 1) as u32,
            head: 0,
            tail: 0,
            chased_push: NO_EVENT,
            chased_pull: NO_EVENT,
            chase_counter: 0,
            active: NO_STAGE,
            pending_finalizations: pending,
            running: stages as u32,
            gate: true,
            fuzz: None,
            mailbox: Arc::new(Mailbox::new(stages)),
            stats: Stats::default(),
            names,
            park_hooks: Vec::new(),
            hooked: vec![false; stages],
        };
        Ok(Interpreter {
            logics,
            core,
            started: false,
        })
    }
}

impl Default for GraphBuilder {
    fn default() -> Self {
        GraphBuilder::new()
    }
}
