//! The loom facade is one API in both builds: this target compiles in the normal build and
//! under `--cfg rs_loom` (`scripts/loom.sh` runs it there), and uses every item the facade
//! exports with every method of it, so an item or method that exists in one build only fails
//! to compile in the other. The bodies run inside `rs_impl::loom::model` (once normally, under
//! every interleaving with loom).
// The facade's own types are used on purpose; std is used only for what the facade does not
// cover (a result cell outside the model).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_impl::loom::cell::UnsafeCell;
use rs_impl::loom::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use rs_impl::loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use rs_impl::loom::{future, hint, thread};

/// Every method of the integer atomics, on each of them.
macro_rules! exercise_int {
    ($($t:ty),*) => {$({
        let a = <$t>::new(1);
        let d = <$t>::default();
        assert_eq!(d.load(Ordering::Acquire), 0);
        a.store(2, Ordering::Release);
        assert_eq!(a.swap(3, Ordering::AcqRel), 2);
        assert_eq!(a.fetch_add(2, Ordering::AcqRel), 3);
        assert_eq!(a.fetch_sub(1, Ordering::AcqRel), 5);
        assert_eq!(a.fetch_or(8, Ordering::AcqRel), 4);
        assert_eq!(a.fetch_and(12, Ordering::AcqRel), 12);
        assert_eq!(a.fetch_max(20, Ordering::AcqRel), 12);
        assert_eq!(a.compare_exchange(20, 21, Ordering::AcqRel, Ordering::Acquire), Ok(20));
        assert_eq!(a.compare_exchange(20, 22, Ordering::AcqRel, Ordering::Acquire), Err(21));
        assert_eq!(a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v + 1)), Ok(21));
        assert_eq!(a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |_| None), Err(22));
        assert!(!format!("{a:?}").is_empty()); // Debug exists (its text differs by build)
        assert_eq!(a.into_inner(), 22);
    })*};
}

#[test]
fn every_atomic_and_its_methods() {
    rs_impl::loom::model(|| {
        exercise_int!(AtomicUsize, AtomicU64, AtomicU32, AtomicI64);
        let b = AtomicBool::new(false);
        assert!(!AtomicBool::default().load(Ordering::Acquire));
        b.store(true, Ordering::Release);
        assert!(b.swap(false, Ordering::AcqRel));
        assert!(!b.fetch_or(true, Ordering::AcqRel));
        assert_eq!(
            b.compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire),
            Ok(true)
        );
        fence(Ordering::SeqCst);
        assert!(!format!("{b:?}").is_empty());
        assert!(!b.into_inner());
    });
}

#[test]
fn mutex_condvar_arc_and_threads() {
    rs_impl::loom::model(|| {
        let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
        let other = {
            let pair = pair.clone();
            thread::spawn(move || {
                let (m, c) = &*pair;
                *m.lock() += 1;
                c.notify_all();
                *m.lock() += 1;
                c.notify_one();
                thread::yield_now();
                hint::spin_loop();
                assert!(!thread::panicking());
                thread::current().id()
            })
        };
        let (m, c) = &*pair;
        let mut g: MutexGuard<'_, u32> = m.lock();
        while *g == 0 {
            g = c.wait(g);
        }
        while *g < 2 {
            // Normally this may time out and loop; under loom it waits for the notify_one.
            g = c.wait_timeout(g, std::time::Duration::from_millis(1)).0;
        }
        drop(g);
        let handle: thread::JoinHandle<thread::ThreadId> = other;
        assert_ne!(handle.join().unwrap(), thread::current().id());
        assert!(m.try_lock().is_some());
        let d: Mutex<u32> = Mutex::default();
        assert_eq!(d.into_inner(), 0);
        let _ = Condvar::default();
        assert!(format!("{:?}", Mutex::new(1)).contains("Mutex"));
        // Unsized contents, behind a reference or a `Box` (loom's `Arc` does not unsize).
        let sized = Mutex::new([1u32, 2, 3]);
        let unsized_mutex: &Mutex<[u32]> = &sized;
        assert_eq!(unsized_mutex.lock().len(), 3);
        let boxed: Box<Mutex<[u32]>> = Box::new(Mutex::new([4, 5]));
        assert_eq!(boxed.lock()[1], 5);
    });
}

#[test]
fn unsafe_cell() {
    rs_impl::loom::model(|| {
        let c = UnsafeCell::new(1u32);
        // SAFETY: no other reference to the cell's contents exists.
        c.with_mut(|p| unsafe { *p += 1 });
        // SAFETY: as above.
        assert_eq!(c.with(|p| unsafe { *p }), 2);
        assert_eq!(c.into_inner(), 2);
        let d: UnsafeCell<u32> = UnsafeCell::default();
        assert_eq!(d.into_inner(), 0);
    });
}

#[test]
fn block_on_sleeps_until_woken_from_another_thread() {
    rs_impl::loom::model(|| {
        let ready = Arc::new(Mutex::new((false, None::<std::task::Waker>)));
        let other = {
            let ready = ready.clone();
            thread::spawn(move || {
                let waker = {
                    let mut r = ready.lock();
                    r.0 = true;
                    r.1.take()
                };
                if let Some(w) = waker {
                    w.wake();
                }
            })
        };
        let value = future::block_on(std::future::poll_fn(|cx| {
            let mut r = ready.lock();
            if r.0 {
                std::task::Poll::Ready(7)
            } else {
                r.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }));
        assert_eq!(value, 7);
        other.join().unwrap();
    });
}

#[test]
fn is_loom_says_which_build() {
    assert_eq!(rs_impl::loom::IS_LOOM, cfg!(rs_loom));
}

/// How many times `run` runs a small model (three threads, two atomic additions each), with
/// the runs counted outside the model.
fn executions(run: impl FnOnce(Box<dyn Fn() + Send + Sync>)) -> usize {
    use std::sync::atomic::{AtomicUsize as StdCount, Ordering as StdOrdering};
    let count = std::sync::Arc::new(StdCount::new(0));
    let c = count.clone();
    run(Box::new(move || {
        c.fetch_add(1, StdOrdering::Relaxed);
        let n = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let n = n.clone();
                thread::spawn(move || {
                    n.fetch_add(1, Ordering::AcqRel);
                    n.fetch_add(1, Ordering::AcqRel);
                })
            })
            .collect();
        n.fetch_add(1, Ordering::AcqRel);
        n.fetch_add(1, Ordering::AcqRel);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(n.load(Ordering::Acquire), 6);
    }));
    count.load(StdOrdering::Relaxed)
}

/// Issue #9: with `LOOM_MAX_PREEMPTIONS` unset, `model_with_preemption_bound` explores with its
/// own bound (loom's default is none): counted in interleavings, the same as loom with that
/// bound, and fewer than without one. The test reruns itself without the variable when
/// `scripts/loom.sh` has set it.
#[test]
fn model_with_preemption_bound_applies_its_bound_when_the_variable_is_unset() {
    const NAME: &str = "model_with_preemption_bound_applies_its_bound_when_the_variable_is_unset";
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_some() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([NAME, "--exact", "--test-threads=1"])
            .env_remove("LOOM_MAX_PREEMPTIONS")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
        return;
    }
    let bounded =
        |bound: usize| executions(|body| rs_impl::loom::model_with_preemption_bound(bound, body));
    #[cfg(not(rs_loom))]
    assert_eq!((bounded(1), bounded(2)), (1, 1)); // once, in the normal build
    #[cfg(rs_loom)]
    {
        let loom_with = |bound: Option<usize>| {
            executions(|body| {
                let mut builder = loom::model::Builder::new();
                builder.preemption_bound = bound;
                builder.check(body);
            })
        };
        let (one, two) = (bounded(1), bounded(2));
        assert_eq!(one, loom_with(Some(1)));
        assert_eq!(two, loom_with(Some(2)));
        assert!(
            one < two,
            "{one} executions with bound 1, {two} with bound 2"
        );
        let unbounded = loom_with(None);
        assert!(
            two < unbounded,
            "{two} executions with bound 2, {unbounded} without"
        );
    }
}

#[test]
fn assert_rejected_sees_a_failing_model() {
    rs_impl::loom::assert_rejected(
        "assert_rejected_sees_a_failing_model",
        "the model fails on purpose",
        || rs_impl::loom::model(|| panic!("the model fails on purpose")),
    );
}
