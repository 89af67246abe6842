//! The synchronisation facade: every atomic, cell, mutex, condition variable, `Arc` and thread
//! spawn in `rs-impl` comes from here.
//!
//! In a normal build these are the standard library's types (with loom's API shape: a
//! [`sync::Mutex::lock`] that returns the guard directly, a [`cell::UnsafeCell`] with
//! `with`/`with_mut`). Built with `RUSTFLAGS="--cfg rs_loom"`, they are
//! [loom](https://docs.rs/loom)'s types, so the same code runs inside `loom::model` and every
//! interleaving of its threads is explored.
//!
//! The facade is public so that code built on `rs-impl` — the `rs-tck` loom harness, or a
//! user's publisher — can use the very same types and be model-checked alongside it.
//! `.clippy.toml` bans the direct std types elsewhere in the workspace's implementation crate.
//!
//! | item | normal build | `--cfg rs_loom` |
//! |---|---|---|
//! | [`sync::Arc`] | `std::sync::Arc` | `loom::sync::Arc` |
//! | [`sync::Mutex`], [`sync::Condvar`] | std, poison ignored | loom, poison ignored |
//! | [`sync::atomic`] | `std::sync::atomic` | `loom::sync::atomic` |
//! | [`cell::UnsafeCell`] | `core::cell::UnsafeCell` behind `with`/`with_mut` | `loom::cell::UnsafeCell` |
//! | [`thread`] | `std::thread` | `loom::thread` |
//! | [`hint::spin_loop`] | `std::hint::spin_loop` | `loom::hint::spin_loop` (yields to loom) |
//! | [`model`] | runs the closure once | `loom::model` with the `LOOM_*` environment |
//! | `assert_rejected` | — | asserts that a model fails (run in a child process), to prove a model or scenario can fail |
//!
//! # Examples
//!
//! ```
//! use rs_impl::loom::sync::{atomic::{AtomicUsize, Ordering}, Arc};
//! use rs_impl::loom::thread;
//!
//! // The same test body runs once in a normal build and under every interleaving with loom.
//! rs_impl::loom::model(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let n2 = n.clone();
//!     let t = thread::spawn(move || { n2.fetch_add(1, Ordering::AcqRel); });
//!     n.fetch_add(1, Ordering::AcqRel);
//!     t.join().unwrap();
//!     assert_eq!(n.load(Ordering::Acquire), 2);
//! });
//! ```
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[cfg(not(rs_loom))]
mod std_impl;
#[cfg(not(rs_loom))]
use std_impl as imp;

#[cfg(rs_loom)]
mod loom_impl;
#[cfg(rs_loom)]
use loom_impl as imp;

pub use imp::{cell, hint, model, sync, thread};

#[cfg(rs_loom)]
pub use imp::assert_rejected;

/// Whether this build uses loom's types (`--cfg rs_loom`).
pub const IS_LOOM: bool = cfg!(rs_loom);
