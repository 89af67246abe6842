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
//! **One API in both builds:** the same items, with the same methods, whichever build; code
//! that compiles in one compiles in the other (`tests/facade.rs` uses every item and method
//! below and is compiled and run in both builds). Which `std` items it covers:
//!
//! | item | normal build | `--cfg rs_loom` | methods (both builds) |
//! |---|---|---|---|
//! | [`sync::Arc`] | `std::sync::Arc` | `loom::sync::Arc` | `Arc`'s (no `Weak`: loom has none; loom's `Arc` does not unsize) |
//! | [`sync::Mutex`] (`T: ?Sized`), [`sync::MutexGuard`] | std, poison ignored | loom, poison ignored | `new`, `lock`, `try_lock`, `into_inner`, `Default`, `Debug` |
//! | [`sync::Condvar`] | std, poison ignored | loom, poison ignored | `new`, `wait`, `wait_timeout` (under loom: waits for a notification, never times out), `notify_one`, `notify_all`, `Default` |
//! | [`sync::atomic`]: `AtomicBool`, `AtomicUsize`, `AtomicU64`, `AtomicU32`, `AtomicI64`, `Ordering`, `fence` | std's, wrapped (the workspace's clippy ban on direct std atomics flags every use elsewhere) | loom's | `new`, `load`, `store`, `swap`, `compare_exchange`, `fetch_or`, `into_inner`, `Default`, `Debug`; the integers also `fetch_add`, `fetch_sub`, `fetch_and`, `fetch_max`, `fetch_update` |
//! | [`cell::UnsafeCell`] (`T: ?Sized`) | `core::cell::UnsafeCell` behind `with`/`with_mut` | `loom::cell::UnsafeCell` | `new`, `with`, `with_mut`, `into_inner`, `Default` |
//! | [`thread`] | `std::thread` | `loom::thread` | `spawn`, `current`, `panicking`, `yield_now`, `JoinHandle`, `ThreadId` |
//! | [`hint::spin_loop`] | `std::hint::spin_loop` | `loom::hint::spin_loop` (yields to loom) | |
//! | [`future::block_on`] | `futures::executor::block_on` | `loom::future::block_on` (the thread sleeps on loom's notification) | |
//! | [`model`] | runs the closure once | `loom::model` with the `LOOM_*` environment (no preemption bound unless `LOOM_MAX_PREEMPTIONS` sets one) | |
//! | [`model_with_preemption_bound`] | runs the closure once | as `model`, with the given preemption bound when `LOOM_MAX_PREEMPTIONS` is unset | |
//! | [`assert_rejected`] | asserts that a body fails, in a child process | the same | |
//! | [`IS_LOOM`] | `false` | `true` | |
//!
//! Nothing is `const fn` (loom's constructors are not), so none of these can be a `static`:
//! under loom every one must be created inside the model.
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

pub use imp::{cell, future, hint, model, model_with_preemption_bound, sync, thread};

pub(crate) mod fault;
#[cfg(rs_loom)]
#[doc(hidden)]
pub use fault::{inject, Fault};

/// Set in the child process of [`assert_rejected`].
const REJECT_CHILD: &str = "RS_LOOM_EXPECT_REJECTED_CHILD";

/// Asserts that `body` is **rejected** — fails (a panic, or an abort) with `expected` in its
/// output — for proving that a model (or a TCK scenario) can fail against a deliberately
/// broken implementation. `body` usually runs a [`model`].
///
/// Call it from a libtest test named `test` (its full path without the crate name, as
/// `--exact` expects it). `body` runs in a child process (this test binary, filtered to that
/// one test): a failure that loom finds while other model threads are suspended unwinds their
/// stacks outside the model and aborts the process, which `catch_unwind` cannot contain. In the
/// child, this function just runs `body`.
///
/// In a normal build a model runs once, with std types: use it there only for bodies that fail
/// in every run.
///
/// # Panics
///
/// In the parent, when the child succeeded (the broken variant was accepted) or failed without
/// `expected` in its output.
pub fn assert_rejected<F: FnOnce()>(test: &str, expected: &str, body: F) {
    if std::env::var_os(REJECT_CHILD).is_some() {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(REJECT_CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the broken variant in a child process");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the broken variant was accepted (expected a failure naming {expected:?}):\n{text}"
    );
    assert!(
        text.contains(expected),
        "the broken variant was rejected, but not with a failure naming {expected:?}:\n{text}"
    );
}

/// Whether this build uses loom's types (`--cfg rs_loom`).
pub const IS_LOOM: bool = cfg!(rs_loom);

/// A relaxed counter that only steers [`spin_until`]'s callers (whether to spin at all):
/// std's atomic in both builds, so that the loom build, where the spin never happens, does not
/// model its loads and stores as schedule points. Never use it for anything that orders
/// memory.
#[derive(Debug, Default)]
pub(crate) struct SpinHint(std::sync::atomic::AtomicU32);

impl SpinHint {
    /// The value (relaxed).
    #[inline]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Stores `v` (relaxed).
    #[inline]
    pub(crate) fn set(&self, v: u32) {
        self.0.store(v, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Rounds of [`spin_until`] (round `r` spins `2^r` pause hints: 127 in all).
const SPIN_ROUNDS: u32 = 7;

/// Watches for `done` for a short, bounded while before the caller sleeps or parks: `true`
/// as soon as `done()` says so, `false` when the spin ends first. Crossbeam's `Backoff::spin`
/// for [`SPIN_ROUNDS`] rounds (127 pause hints in all, about 3 µs on the machine measured,
/// never a yield), `done` asked after each round. The one spin of the crate: the push and
/// fanout senders' wait for a permit (`producer::Room::spin`) and the hand-off reader's wait
/// for a run (`handoff::Reader::spin`) use it.
///
/// Always `false` in the loom build, without calling `done`: a spin only watches, the caller
/// then takes or parks with its real synchronisation, so the spin adds interleavings without
/// adding behaviour.
#[inline]
pub(crate) fn spin_until(mut done: impl FnMut() -> bool) -> bool {
    if IS_LOOM {
        return false;
    }
    let backoff = crossbeam_utils::Backoff::new();
    for _ in 0..SPIN_ROUNDS {
        backoff.spin();
        if done() {
            return true;
        }
    }
    false
}
