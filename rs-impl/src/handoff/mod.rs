//! The hand-off layer: how elements and signals cross from one thread to another, under
//! everything that moves them — the batching boundary between islands
//! ([`crate::boundary`]), the publisher → `Stream` bridges ([`crate::compat`]) and the
//! external subscriber ([`crate::subscriber::external`]). It imports nothing from those
//! modules (nor from the islands): they build on it.
//!
//! # Contract
//!
//! * **One producer, one consumer, one bounded ring** of a power-of-two size, allocated once:
//!   no lock and no allocation per element or per batch. Per element the producer writes one
//!   slot and the consumer reads one; the producer publishes a **batch** with one
//!   read-modify-write (a flush: at its cap, at the end of its run, before any terminal
//!   signal, or after each element for a foreign publisher), the consumer hands slots back a
//!   batch at a time.
//! * **Bounds:** the producer writes only within the ring's free space (a foreign publisher,
//!   whose demand the consumer controls by its requests), or within the credit the consumer
//!   granted (an island, which writes nothing before the first grant). An element beyond the
//!   bound is never written: it is an **overrun**, reported to the consumer.
//! * **Order:** completion, failure, overrun and a producer that vanished reach the consumer
//!   after every element published before them, as through one FIFO. The consumer's cancel
//!   reaches the producer; the elements it had not taken are dropped by the consumer, those
//!   published later by the ring (its last owner).
//! * **Waking:** the consumer parks with a read-modify-write on the word the producer
//!   publishes through, so a publication wakes it only when it is parked, and never misses
//!   it; signals always wake it. The wake target is a [`Wake`]: a task's `Waker`, or an
//!   island's `Notifier`.
//! * **Rule 2.4:** a subscription handed over by the producer is taken and called only by the
//!   consumer, serially; no request starts after the producer's terminal signal, and a
//!   terminal signal waits for a request in flight on another thread ([`InFlight`]).
//!
//! # Layout
//!
//! | file | what it holds |
//! |---|---|
//! | `ring.rs` | [`Ring`]: the slots, the state word, the released head and credit, the rare state behind locks; [`Failure`] and the ring's statistics; the ownership argument every `unsafe` block relies on |
//! | `writer.rs` | [`Writer`]: the producer's end (push, flush, bounds, terminal signals, the subscription handed over) and its [`Bound`] |
//! | `reader.rs` | [`Reader`]: the consumer's end (poll, release, grant, requests, park, leave) and [`Polled`] |
//! | `wake.rs` | [`Wake`]: what each side registers to be woken by the other |
//! | `spsc.rs` | [`Spsc`](spsc::Spsc): the lean sibling of the ring for lazily created queues drained by a drain loop (merge's per-inner queues): no signals, no waking, freed with its last half |
//! | `guard.rs` | [`InFlight`]: the one rule-2.4 guard of the consumer's requests |
//! | `error.rs` | [`CompatError`]: the bridges' own failures (re-exported by `compat`), which the stream bridges and the external subscriber map a [`Failure`] to; [`into_error`] |

mod error;
mod guard;
mod reader;
mod ring;
mod spsc;
mod wake;
mod writer;

pub(crate) use error::into_error;
pub use error::CompatError;
pub(crate) use guard::InFlight;
pub(crate) use reader::{Polled, Reader};
pub(crate) use ring::{Failure, Ring};
pub(crate) use spsc::{spsc, SpscConsumer, SpscProducer};
pub(crate) use wake::Wake;
pub(crate) use writer::{Bound, Writer};
