//! Ports: the typed ends of a connection ([`Inlet`], [`Outlet`]), their identity
//! ([`PortId`]), where a stage declares them ([`Ports`]), and how an island's run ends
//! ([`RunEnd`]). See [`Stage`](super::Stage) for how a stage uses them.

use std::fmt;
use std::marker::PhantomData;

/// The identity of one port (the index of its connection), as handed to a handler.
///
/// Compare it with [`Inlet::id`] or [`Outlet::id`] in a stage with several ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId(pub(crate) u32);

impl PortId {
    /// The connection index.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (out, inlet) = g.connection::<u8>();
    /// assert_eq!(out.id(), inlet.id());
    /// assert_eq!(out.id().index(), 0);
    /// ```
    pub fn index(self) -> u32 {
        self.0
    }
}

/// The receiving end of one connection, typed by its elements. Held by the stage that owns
/// it; cheap to copy.
pub struct Inlet<T> {
    pub(crate) id: u32,
    pub(crate) _t: PhantomData<fn() -> T>,
}

/// The sending end of one connection, typed by its elements. Held by the stage that owns it;
/// cheap to copy.
pub struct Outlet<T> {
    pub(crate) id: u32,
    pub(crate) _t: PhantomData<fn() -> T>,
}

macro_rules! port_impls {
    ($name:ident) => {
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
        impl<T> PartialEq for $name<T> {
            fn eq(&self, other: &Self) -> bool {
                self.id == other.id
            }
        }
        impl<T> Eq for $name<T> {}
        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.id)
            }
        }
        impl<T> $name<T> {
            /// The port's identity, as handlers receive it.
            ///
            /// # Examples
            ///
            /// ```
            /// let mut g = rs_impl::island::GraphBuilder::new();
            /// let (out, inlet) = g.connection::<u8>();
            /// assert_eq!(out.id(), inlet.id());
            /// ```
            pub fn id(&self) -> PortId {
                PortId(self.id)
            }
        }
    };
}
port_impls!(Inlet);
port_impls!(Outlet);

/// How an island's run ends (see [`Stage::on_park`](crate::island::Stage::on_park)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Nothing is left to do: the island parks until something posts to it.
    Park,
    /// Its budget is spent with work left: it yields and runs again soon.
    Yield,
}

/// Where a stage declares its ports (see [`Stage::ports`](crate::island::Stage::ports)).
#[derive(Debug, Default)]
pub struct Ports {
    pub(crate) inlets: Vec<u32>,
    pub(crate) outlets: Vec<u32>,
}

impl Ports {
    /// Declares `inlet` as one of this stage's in-ports.
    ///
    /// # Examples
    ///
    /// See the example of [`Stage`](crate::island::Stage).
    pub fn inlet<T>(&mut self, inlet: Inlet<T>) -> &mut Self {
        self.inlets.push(inlet.id);
        self
    }

    /// Declares `outlet` as one of this stage's out-ports.
    ///
    /// # Examples
    ///
    /// See the example of [`Stage`](crate::island::Stage).
    pub fn outlet<T>(&mut self, outlet: Outlet<T>) -> &mut Self {
        self.outlets.push(outlet.id);
        self
    }

    /// Declares the out-port of connection `id` (for stages that keep their out-port erased).
    pub(crate) fn outlet_id(&mut self, id: u32) -> &mut Self {
        self.outlets.push(id);
        self
    }
}
