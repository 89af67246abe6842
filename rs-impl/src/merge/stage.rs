//! The fan-in stage of a flow's `flat_map`: [`MergeStage`], an interpreter stage that pulls
//! outer elements from its in-port, runs their inners, and drives the flow's exit after it
//! (the operators after `flat_map` are fused into that exit), on the island's thread.
//!
//! Known values and iterators are served directly by the stage. A subscribed inner signals
//! from wherever its publisher runs: it queues its elements in its own queue (made on its
//! first element), keeps its end outside the queue, and posts to the stage's mailbox (once
//! per batch of signals: the shared `mail` flag). The stage serves the inners round-robin, at
//! most a batch per handler call (then it posts to itself, so the island still yields), and
//! asks the outer for one more element per inner that ended, up to `max_concurrency` at once.

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{Error, Subscriber, SubscriptionRef};

use super::inner::{Inner, InnerSource};
use super::shared::InnerShared;
use super::{MergeConfig, MergeError};
use crate::flow::{Closing, Exit, Step};
use crate::handoff::{SpscConsumer, SpscProducer};
use crate::island::{panic_error, Ctx, Inlet, Notifier, PortId, Ports, RunEnd, Stage};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;

/// Elements one handler call moves at most before the stage posts to itself.
const BATCH: usize = 1024;

/// What the subscribed inners share with the stage: the flag that batches their posts, the
/// errors they ended with.
struct Mail {
    /// Set by an inner when it posts; cleared by the stage before it looks.
    flag: AtomicBool,
    notifier: Notifier,
    errors: Mutex<Vec<Error>>,
    /// An error waits (eager mode).
    failed: AtomicBool,
    delay_errors: bool,
}

impl Mail {
    /// Tells the stage to look, unless an earlier post is still unread.
    #[inline]
    fn post(&self) {
        if !self.flag.swap(true, Ordering::AcqRel) {
            self.notifier.notify();
        }
    }

    fn error(&self, e: Error) {
        self.errors.lock().push(e);
        if !self.delay_errors {
            self.failed.store(true, Ordering::Release);
        }
    }
}

/// An inner the stage serves.
enum Slot<U> {
    Iter {
        iter: Box<dyn Iterator<Item = U> + Send>,
        ahead: Option<U>,
    },
    Sub {
        inner: StdArc<InnerShared<U>>,
        queue: Option<SpscConsumer<U>>,
        subscription: Option<SubscriptionRef>,
        consumed: usize,
    },
}

/// The fan-in stage of `Flow::flat_map` (see the module docs).
pub(crate) struct MergeStage<T, U, F, X> {
    inlet: Inlet<T>,
    exit: X,
    f: StdArc<F>,
    config: MergeConfig,
    mail: Option<StdArc<Mail>>,
    scalars: VecDeque<U>,
    inners: Vec<Slot<U>>,
    next: usize,
    outer_done: bool,
    /// The exit completed or failed: it delivers what it holds, then the stage finishes.
    ending: bool,
    done: bool,
    me: Option<Notifier>,
    _t: PhantomData<fn(T)>,
}

impl<T, U, F, X> fmt::Debug for MergeStage<T, U, F, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergeStage")
            .field("inners", &self.inners.len())
            .field("outer_done", &self.outer_done)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<T, U, I, F, X> MergeStage<T, U, F, X>
where
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
    X: Exit<U>,
{
    pub(crate) fn new(inlet: Inlet<T>, exit: X, f: StdArc<F>, config: MergeConfig) -> Self {
        MergeStage {
            inlet,
            exit,
            f,
            config,
            mail: None,
            scalars: VecDeque::new(),
            inners: Vec::new(),
            next: 0,
            outer_done: false,
            ending: false,
            done: false,
            me: None,
            _t: PhantomData,
        }
    }

    /// Inners and values held (each takes one of `max_concurrency`'s places).
    fn active(&self) -> usize {
        self.inners.len() + self.scalars.len()
    }

    /// Asks the outer for its next element while there is a free place.
    fn pull_outer(&mut self, ctx: &mut Ctx<'_>) {
        if !self.outer_done
            && !self.ending
            && self.active() < self.config.max_concurrency
            && !ctx.has_been_pulled(self.inlet)
            && !ctx.is_inlet_closed(self.inlet)
        {
            ctx.pull(self.inlet);
        }
    }

    /// Starts the inner of one outer element.
    fn start_inner(&mut self, t: T, ctx: &mut Ctx<'_>) {
        let f = &self.f;
        let source = match catch_unwind(AssertUnwindSafe(|| f(t).into_source())) {
            Ok(s) => s,
            Err(p) => {
                let e = Error::msg(format!(
                    "the merge's function panicked: {}",
                    panics::panic_message(&*p)
                ));
                self.fail_now(e, ctx);
                return;
            }
        };
        match source {
            InnerSource::Empty => {}
            InnerSource::Just(u) => self.scalars.push_back(u),
            InnerSource::Iter(iter) => self.inners.push(Slot::Iter { iter, ahead: None }),
            InnerSource::Publisher(p) => {
                let mail = self.mail.clone().expect("started");
                let inner = StdArc::new(InnerShared::new());
                self.inners.push(Slot::Sub {
                    inner: inner.clone(),
                    queue: None,
                    subscription: None,
                    consumed: 0,
                });
                let sub = IslandInner {
                    inner: inner.clone(),
                    mail: mail.clone(),
                    producer: None,
                    subscription: None,
                    prefetch: self.config.prefetch,
                    ended: false,
                };
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| p.subscribe(Box::new(sub)))) {
                    inner.set_done();
                    mail.error(Error::msg(format!(
                        "an inner publisher panicked in subscribe: {}",
                        panics::panic_message(&*p)
                    )));
                }
            }
        }
    }

    /// Moves what the inners hold into the exit while it has room (a batch at most), removes
    /// the inners that ended, asks the outer for more, and ends the stream when nothing is
    /// left.
    fn drive(&mut self, ctx: &mut Ctx<'_>) {
        if self.done {
            return;
        }
        if let Some(m) = &self.mail {
            // A read-modify-write: it reads the post of the last inner that set the flag,
            // whose queued elements are then visible to this look.
            m.flag.swap(false, Ordering::AcqRel);
        }
        if self.ending {
            self.drain_exit(ctx);
            return;
        }
        if let Some(c) = self.exit.closed() {
            self.exit_closed(c, ctx);
            return;
        }
        if let Some(m) = &self.mail {
            if m.failed.load(Ordering::Acquire) {
                let e = take_first(&m.errors);
                self.fail_now(e, ctx);
                return;
            }
        }
        if self.exit.has_pending() && self.exit.resume(ctx) == Step::Stop {
            self.input_over(ctx);
            return;
        }
        let mut budget = BATCH;
        // Values first.
        while !self.scalars.is_empty() && budget > 0 && self.exit.room(ctx) > 0 {
            let u = self.scalars.pop_front().expect("not empty");
            budget -= 1;
            if self.exit.push(ctx, u) == Step::Stop {
                self.input_over(ctx);
                return;
            }
        }
        // The inners, round-robin from where the last call stopped.
        let mut n = self.inners.len();
        let mut i = if self.next < n { self.next } else { 0 };
        let mut visits = n;
        let limit = self.config.replenish();
        while visits > 0 && n > 0 {
            visits -= 1;
            let mut stop = false;
            let ended = match &mut self.inners[i] {
                Slot::Iter { iter, ahead } => {
                    let mut ended = false;
                    loop {
                        let room = self.exit.room(ctx) > 0 && budget > 0;
                        if !room {
                            if ahead.is_none() {
                                match next_guarded(iter, self.mail.as_deref()) {
                                    Some(u) => *ahead = Some(u),
                                    None => ended = true,
                                }
                            }
                            break;
                        }
                        let u = match ahead.take() {
                            Some(u) => u,
                            None => match next_guarded(iter, self.mail.as_deref()) {
                                Some(u) => u,
                                None => {
                                    ended = true;
                                    break;
                                }
                            },
                        };
                        budget -= 1;
                        if self.exit.push(ctx, u) == Step::Stop {
                            stop = true;
                            break;
                        }
                    }
                    ended
                }
                Slot::Sub {
                    inner,
                    queue,
                    subscription,
                    consumed,
                } => {
                    let done = inner.is_done();
                    if queue.is_none() {
                        *queue = inner.take_consumer();
                    }
                    match queue.as_mut() {
                        None => done,
                        Some(q) => {
                            while budget > 0 && self.exit.room(ctx) > 0 {
                                let Some(u) = q.poll() else { break };
                                budget -= 1;
                                *consumed += 1;
                                if *consumed == limit && !done {
                                    *consumed = 0;
                                    if subscription.is_none() {
                                        *subscription = inner.subscription();
                                    }
                                    if let Some(s) = subscription {
                                        s.request(limit as u64);
                                    }
                                }
                                if self.exit.push(ctx, u) == Step::Stop {
                                    stop = true;
                                    break;
                                }
                            }
                            done && q.is_empty()
                        }
                    }
                }
            };
            if stop {
                self.input_over(ctx);
                return;
            }
            if ended {
                let slot = self.inners.swap_remove(i);
                panics::drop_guarded(slot);
                n -= 1;
                if i >= n {
                    i = 0;
                }
            } else if n > 0 {
                i = (i + 1) % n;
            }
        }
        self.next = i;
        if let Some(m) = &self.mail {
            if m.failed.load(Ordering::Acquire) {
                let e = take_first(&m.errors);
                self.fail_now(e, ctx);
                return;
            }
        }
        self.pull_outer(ctx);
        if self.outer_done && self.inners.is_empty() && self.scalars.is_empty() {
            let errors = self
                .mail
                .as_ref()
                .map(|m| std::mem::take(&mut *m.errors.lock()))
                .unwrap_or_default();
            self.ending = true;
            match errors.len() {
                0 => self.exit.complete(ctx),
                1 => {
                    let e = errors.into_iter().next().expect("one");
                    self.exit.fail(ctx, e);
                }
                _ => self
                    .exit
                    .fail(ctx, Error::new(MergeError::Composite { errors })),
            }
            self.drain_exit(ctx);
            return;
        }
        if budget == 0 {
            self.me.get_or_insert_with(|| ctx.notifier()).notify();
        }
    }

    /// Ending: delivers what the exit holds; finishes once nothing is.
    fn drain_exit(&mut self, ctx: &mut Ctx<'_>) {
        if self.exit.has_pending() {
            if let Some(c) = self.exit.closed() {
                self.exit_closed(c, ctx);
                return;
            }
            let _ = self.exit.resume(ctx);
        }
        if !self.exit.has_pending() {
            self.finish(None, ctx);
        }
    }

    /// The exit stopped taking input: every inner and the outer go; the exit ends after
    /// what it holds.
    fn input_over(&mut self, ctx: &mut Ctx<'_>) {
        self.cancel_inners();
        self.ending = true;
        self.drain_exit(ctx);
    }

    /// Fails downstream at once (eager): every inner and the outer are cancelled.
    fn fail_now(&mut self, e: Error, ctx: &mut Ctx<'_>) {
        self.cancel_inners();
        self.ending = true;
        self.exit.fail(ctx, e);
        self.drain_exit(ctx);
    }

    /// Downstream closed.
    fn exit_closed(&mut self, c: Closing, ctx: &mut Ctx<'_>) {
        self.cancel_inners();
        match c {
            Closing::Cancelled => self.exit.stop(),
            Closing::Failed(e) => self.exit.fail(ctx, e),
        }
        self.finish(None, ctx);
    }

    /// Lets every inner go (cancelling the subscribed ones) and drops what is held.
    fn cancel_inners(&mut self) {
        for slot in self.inners.drain(..) {
            if let Slot::Sub { inner, .. } = &slot {
                inner.cancel();
            }
            panics::drop_guarded(slot);
        }
        for u in self.scalars.drain(..) {
            panics::drop_guarded(u);
        }
    }

    /// Closes every port (failing the out-port with `error`) and lets the stage go.
    fn finish(&mut self, error: Option<Error>, ctx: &mut Ctx<'_>) {
        if self.done {
            return;
        }
        self.done = true;
        self.cancel_inners();
        match error {
            Some(e) => ctx.fail_stage(e),
            None => ctx.complete_stage(),
        }
        ctx.set_keep_going(false);
    }

    /// Runs `f`; a panic (of an operator fused after the merge) fails the stage.
    fn guarded(&mut self, ctx: &mut Ctx<'_>, f: impl FnOnce(&mut Self, &mut Ctx<'_>)) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self, ctx))) {
            self.panicked(p, ctx);
        }
    }

    fn panicked(&mut self, payload: Box<dyn Any + Send>, ctx: &mut Ctx<'_>) {
        let error = panic_error("flat_map", payload);
        self.cancel_inners();
        if self.exit.port_id().is_some() {
            self.finish(Some(error), ctx);
            return;
        }
        if catch_unwind(AssertUnwindSafe(|| self.exit.abort(ctx, error))).is_err() {
            self.exit.stop();
        }
        self.finish(None, ctx);
    }
}

/// The first error held.
fn take_first(errors: &Mutex<Vec<Error>>) -> Error {
    let mut errors = errors.lock();
    if errors.is_empty() {
        Error::msg("flat_map failed")
    } else {
        errors.remove(0)
    }
}

/// The next item of an inner iterator; a panic in it is that inner's error.
fn next_guarded<U>(
    iter: &mut Box<dyn Iterator<Item = U> + Send>,
    mail: Option<&Mail>,
) -> Option<U> {
    match catch_unwind(AssertUnwindSafe(|| iter.next())) {
        Ok(x) => x,
        Err(p) => {
            if let Some(m) = mail {
                m.error(Error::msg(format!(
                    "an inner iterator panicked: {}",
                    panics::panic_message(&*p)
                )));
            }
            None
        }
    }
}

impl<T, U, I, F, X> Stage for MergeStage<T, U, F, X>
where
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
    X: Exit<U>,
{
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
        if let Some(id) = self.exit.port_id() {
            ports.outlet_id(id);
        }
    }

    fn name(&self) -> &'static str {
        "flat_map"
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.set_keep_going(true);
        ctx.call_on_park();
        self.mail = Some(StdArc::new(Mail {
            flag: AtomicBool::new(false),
            notifier: ctx.notifier(),
            errors: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
            delay_errors: self.config.delay_errors,
        }));
        self.guarded(ctx, |s, ctx| {
            if s.exit.start(ctx) == Step::Stop {
                s.input_over(ctx);
                return;
            }
            s.pull_outer(ctx);
        });
    }

    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let t = ctx.grab(self.inlet);
        if self.done || self.ending {
            return;
        }
        self.start_inner(t, ctx);
        self.guarded(ctx, |s, ctx| s.drive(ctx));
    }

    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.guarded(ctx, |s, ctx| s.drive(ctx));
    }

    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.guarded(ctx, |s, ctx| s.drive(ctx));
    }

    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.outer_done = true;
        self.guarded(ctx, |s, ctx| s.drive(ctx));
    }

    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        self.outer_done = true;
        if self.config.delay_errors {
            if let Some(m) = &self.mail {
                m.errors.lock().push(error);
            }
            self.guarded(ctx, |s, ctx| s.drive(ctx));
        } else if !self.done && !self.ending {
            self.guarded(ctx, |s, ctx| s.fail_now(error, ctx));
        }
    }

    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if !self.done {
            self.cancel_inners();
            self.exit.stop();
            self.finish(None, ctx);
        }
    }

    fn on_park(&mut self, end: RunEnd, _: &mut Ctx<'_>) {
        self.exit.on_park(end);
    }

    fn post_stop(&mut self) {
        if !self.done {
            self.done = true;
            self.exit.stop();
        }
        self.cancel_inners();
    }
}

/// The subscriber to one subscribed inner of a flow's `flat_map`: queues, keeps its end
/// outside the queue, posts to the stage.
struct IslandInner<U> {
    inner: StdArc<InnerShared<U>>,
    mail: StdArc<Mail>,
    producer: Option<SpscProducer<U>>,
    subscription: Option<SubscriptionRef>,
    prefetch: usize,
    ended: bool,
}

impl<U: Send + 'static> Subscriber<U> for IslandInner<U> {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        if self.subscription.is_some() || self.ended {
            s.cancel(); // 2.5
            return;
        }
        if !self.inner.subscribed(&s) {
            self.ended = true;
            return;
        }
        self.subscription = Some(s.clone());
        s.request(self.prefetch as u64);
    }

    fn on_next(&mut self, u: U) {
        if self.ended {
            panics::drop_guarded(u);
            return;
        }
        let producer = match &mut self.producer {
            Some(p) => p,
            None => self.producer.insert(self.inner.make_queue(self.prefetch)),
        };
        if let Err(u) = producer.offer(u) {
            panics::drop_guarded(u);
            self.ended = true;
            if let Some(s) = self.subscription.take() {
                s.cancel();
            }
            self.mail.error(Error::new(MergeError::MissingBackpressure {
                capacity: self.prefetch,
            }));
            self.inner.set_done();
        }
        self.mail.post();
    }

    fn on_error(&mut self, e: Error) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.subscription = None;
        self.mail.error(e);
        self.inner.set_done();
        self.mail.post();
    }

    fn on_complete(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.subscription = None;
        self.inner.set_done();
        self.mail.post();
    }
}
