//! The publisher checks of our own that need situations the JVM TCK never builds: a subscriber
//! that panics (rule 2.13's publisher half), several subscribers while the buffer grows
//! (1.11), the multicast declaration itself, and bounded buffering on an upstream. The
//! [module table](super) says what each checks.

use rs_api::BoxPublisher;

use super::checks::{active, require_elements};
use super::{BufferBound, PublisherVerification, SupportedSubscribers};
use crate::env::TestEnvironment;
use crate::hints;
use crate::instruments::tally::{guard_call, wait_while_progressing, PanicAt, Tally, TallyHandle};
use crate::instruments::{subscribe_guarded, ManualSubscriber, UpstreamTap};
use crate::outcome::{ensure, fail, Stop, TestResult};

/// The elements of the buffer-growth check: well past any initial buffer capacity (the
/// fanout's default initial buffer is 16, its default maximum 256).
pub const GROWTH_ELEMENTS: u64 = 1000;

/// The largest declared buffer the bounded-buffering checks take on (they send about twice
/// the bound); a larger declaration is skipped with the reason.
pub const MAX_CHECKED_BUFFER: u64 = 1 << 16;

/// The names of the checks that run only when the verification declares several
/// subscribers (and are skipped, naming this list once, when it declares nothing).
pub(super) const MULTICAST_ONLY: [&str; 2] = [
    "required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows",
    "required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics",
];

/// The reason of every multicast-only check when nothing is declared.
const UNDECLARED: &str = "skipped: the verification does not declare max_supported_subscribers, \
     so this multicast check does not apply (see declaration_max_supported_subscribers)";

/// A multicast-only check: runs `body` when `subscribers` at once are declared.
fn multicast_only<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    subscribers: u64,
    body: impl FnOnce() -> TestResult,
) -> TestResult {
    match v.max_supported_subscribers() {
        SupportedSubscribers::Undeclared => Err(Stop::skipped(UNDECLARED)),
        SupportedSubscribers::AtMost(n) if n < subscribers => Err(Stop::skipped(format!(
            "this test needs {subscribers} subscribers at once, and the verification declares \
             at most {n} (max_supported_subscribers)"
        ))),
        SupportedSubscribers::AtMost(_) => {
            body().and_then(|()| env.verify_no_async_errors_no_delay())
        }
    }
}

/// Subscribes `tally` to `p` (a panic escaping `subscribe` is a failure) and waits for its
/// `on_subscribe`.
fn join<T: Send + std::fmt::Debug + 'static>(
    p: &BoxPublisher<T>,
    tally: Tally<T>,
    handle: &TallyHandle<T>,
) -> TestResult {
    guard_call(&format!("subscribe({})", handle.label()), || {
        p.subscribe(Box::new(tally))
    })?;
    handle.expect_subscribed()
}

// ---------------------------------------------------------------------------------------

pub(super) fn declaration_max_supported_subscribers<V: PublisherVerification>(
    v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    match v.max_supported_subscribers() {
        SupportedSubscribers::Undeclared => Err(Stop::skipped(format!(
            "max_supported_subscribers is not declared: the 1.11 checks ran as optional ones \
             (a failure is reported as an unmet optional requirement), and these multicast \
             checks were skipped: {}. Declare SupportedSubscribers::MANY (or AtMost(n)) if the \
             publisher serves several subscribers at once — multicast, or cold with a run per \
             subscriber — or AtMost(1) if it is unicast",
            MULTICAST_ONLY.join(", ")
        ))),
        SupportedSubscribers::AtMost(_) => Ok(()),
    }
}

pub(super) fn required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let n = v.max_elements_from_publisher().min(3);
    let p = active(v, n, false)?;
    let (tally, h) =
        Tally::<V::Item>::new(env, "the subscriber", PanicAt::OnSubscribe { request: 1 });
    let ctx = "rule 2.13: on_subscribe requested 1 and then panicked";
    guard_call("subscribe", || p.subscribe(Box::new(tally)))?;
    if !env.poll_until(env.default_timeout(), || h.has_panicked()) {
        return Err(
            Stop::failed(format!("{ctx}: the publisher did not call on_subscribe"))
                .with_hint(hints::ON_SUBSCRIBE),
        );
    }
    env.verify_no_async_errors()
        .map_err(|s| s.context(ctx).with_hint(hints::PANICKING_SUBSCRIBER))?;
    h.expect_dropped(
        env.timeouts().reference_drop + env.default_timeout(),
        &format!("{ctx}: the subscription counts as cancelled (3.13)"),
    )
    .map_err(|s| s.with_hint(hints::PANICKING_SUBSCRIBER))
}

pub(super) fn required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const ELEMENTS: u64 = 5;
    const PANIC_AT: u64 = 2;
    let p = active(v, ELEMENTS, false)?;
    let (tally, h) = Tally::<V::Item>::new(env, "the subscriber", PanicAt::OnNext(PANIC_AT));
    let ctx = format!("rule 2.13: request({ELEMENTS}), and on_next #{PANIC_AT} panicked");
    join(&p, tally, &h)?;
    h.request(ELEMENTS)?;
    if !env.poll_until(env.default_timeout(), || h.has_panicked()) {
        return Err(Stop::failed(format!(
            "{ctx}: only {} of the elements requested came",
            h.count()
        ))
        .with_hint(hints::NO_DELIVERY));
    }
    env.verify_no_async_errors()
        .map_err(|s| s.context(&ctx).with_hint(hints::PANICKING_SUBSCRIBER))?;
    h.expect_dropped(
        env.timeouts().reference_drop + env.default_timeout(),
        &format!("{ctx}: the subscription counts as cancelled (3.13)"),
    )
    .map_err(|s| s.with_hint(hints::PANICKING_SUBSCRIBER))?;
    // Requests and cancels after the panic reach a cancelled subscription: no-ops (3.6, 3.7).
    h.request(1)?;
    h.cancel()?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(&ctx).with_hint(hints::PANICKING_SUBSCRIBER))
}

pub(super) fn required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const ELEMENTS: u64 = 10;
    const PANIC_AT: u64 = 3;
    require_elements(v, ELEMENTS, true)?;
    multicast_only(v, env, 3, || {
        let p = active(v, ELEMENTS, true)?;
        let ctx = format!(
            "rule 2.13: 3 subscribers request {ELEMENTS} each; subscriber 2 panics in on_next \
             #{PANIC_AT}"
        );
        let mut handles = Vec::new();
        for (i, at) in [PanicAt::Never, PanicAt::OnNext(PANIC_AT), PanicAt::Never]
            .into_iter()
            .enumerate()
        {
            let (tally, h) = Tally::<V::Item>::new(env, format!("subscriber {}", i + 1), at);
            join(&p, tally, &h)?;
            handles.push(h);
        }
        for h in &handles {
            h.request(ELEMENTS)?;
        }
        let others = [&handles[0], &handles[2]];
        wait_while_progressing(
            env,
            &format!("{ctx}: subscribers 1 and 3 must get every element and on_complete"),
            || others.iter().map(|h| h.count()).sum::<u64>(),
            || others.iter().all(|h| h.is_terminated()),
        )
        .map_err(|s| s.with_hint(hints::PANICKING_SUBSCRIBER))?;
        env.verify_no_async_errors_no_delay()
            .map_err(|s| s.context(&ctx).with_hint(hints::PANICKING_SUBSCRIBER))?;
        for h in others {
            ensure!(
                h.count() == ELEMENTS && h.completes() == 1,
                "{ctx}: {} got {} elements, {} on_complete and errors {:?}; expected all {ELEMENTS} \
                 and on_complete — hint: {}",
                h.label(),
                h.count(),
                h.completes(),
                h.errors(),
                hints::PANICKING_SUBSCRIBER
            );
        }
        handles[0].with_elements(|a| {
            handles[2].with_elements(|b| {
                ensure!(
                    a == b,
                    "rule 1.11: subscribers 1 and 3 received different sequences: {a:?} and \
                     {b:?}"
                );
                Ok(())
            })
        })?;
        handles[1]
            .expect_dropped(
                env.timeouts().reference_drop + env.default_timeout(),
                &format!("{ctx}: subscriber 2's subscription counts as cancelled (3.13)"),
            )
            .map_err(|s| s.with_hint(hints::PANICKING_SUBSCRIBER))
    })
}

pub(super) fn required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const N: u64 = GROWTH_ELEMENTS;
    require_elements(v, N, true)?;
    multicast_only(v, env, 3, || {
        let p = active(v, N, true)?;
        let ctx = format!(
            "rule 1.11: subscribers 1 and 3 request {N} elements, 16 at a time, and \
             subscriber 2 after them 11 at a time"
        );
        let mut handles = Vec::new();
        for i in 1..=3 {
            let (tally, h) = Tally::<V::Item>::new(env, format!("subscriber {i}"), PanicAt::Never);
            join(&p, tally, &h)?;
            handles.push(h);
        }
        let (fast, lagging) = ([&handles[0], &handles[2]], &handles[1]);
        let total = || handles.iter().map(|h| h.count()).sum::<u64>();
        // Rounds: the fast ones ask for FAST more each, the lagging one, after them, for LAG
        // more: it falls behind by FAST - LAG a round, so the live part of the buffer moves
        // (wraps) and widens (grows) while the readers sit at different positions. Each round
        // waits for the lagging subscriber's elements (always deliverable: the others asked
        // for more), bounded by progress, not time.
        const FAST: u64 = 16;
        const LAG: u64 = 11;
        let (mut fast_requested, mut lag_requested) = (0u64, 0u64);
        while lag_requested < N {
            if fast_requested < N {
                let n = FAST.min(N - fast_requested);
                for h in fast {
                    h.request(n)?;
                }
                fast_requested += n;
            }
            let n = LAG.min(N - lag_requested);
            lagging.request(n)?;
            lag_requested += n;
            wait_while_progressing(
                env,
                &format!(
                    "{ctx}: {} must get the {lag_requested} elements it requested (the others \
                     requested {fast_requested})",
                    lagging.label()
                ),
                total,
                || lagging.count() >= lag_requested || lagging.is_terminated(),
            )
            .map_err(|s| s.with_hint(hints::GROWING_BUFFER))?;
        }
        wait_while_progressing(
            env,
            &format!("{ctx}: every subscriber must get all {N} elements and on_complete"),
            total,
            || handles.iter().all(|h| h.is_terminated()),
        )
        .map_err(|s| {
            s.append(&format!(
                ": received {}",
                handles
                    .iter()
                    .map(|h| format!("{} by {}", h.count(), h.label()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .with_hint(hints::GROWING_BUFFER)
        })?;
        env.verify_no_async_errors_no_delay()
            .map_err(|s| s.context(&ctx).with_hint(hints::GROWING_BUFFER))?;
        for (k, h) in handles.iter().enumerate() {
            let (count, completes) = (h.count(), h.completes());
            ensure!(
                count == N && completes == 1,
                "{ctx}: {} received {count} elements, {completes} on_complete and errors {:?}; \
                 expected all {N} and on_complete — hint: {}",
                h.label(),
                h.errors(),
                hints::GROWING_BUFFER
            );
            if k == 0 {
                continue;
            }
            handles[0].with_elements(|first| {
                h.with_elements(|got| {
                    if let Some(i) = (0..got.len()).find(|&i| got[i] != first[i]) {
                        fail!(
                            "{ctx}: {} received element #{} = {:?}, subscriber 1 received {:?} \
                             there: every subscriber must get every element exactly once, in \
                             order — hint: {}",
                            h.label(),
                            i + 1,
                            got[i],
                            first[i],
                            hints::GROWING_BUFFER
                        );
                    }
                    Ok(())
                })
            })?;
        }
        Ok(())
    })
}

pub(super) fn required_must_not_request_more_from_upstream_than_the_declared_buffer_holds<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let bound = match v.max_buffered_from_upstream() {
        BufferBound::Undeclared => {
            let built = v
                .create_publisher_on_upstream(0, &UpstreamTap::new())
                .is_some();
            return Err(Stop::skipped(if built {
                "the verification declares no buffer bound (max_buffered_from_upstream, a \
                 processor's max_buffered_elements, is BufferBound::Undeclared): nothing to hold \
                 the implementation to"
            } else {
                "the publisher is not built on an upstream the TCK can tap \
                 (create_publisher_on_upstream returns None, and no buffer bound is declared)"
            }));
        }
        BufferBound::AtMost(b) if b > MAX_CHECKED_BUFFER => {
            return Err(Stop::skipped(format!(
                "the declared buffer bound {b} is above {MAX_CHECKED_BUFFER}, the largest this \
                 check sends elements for"
            )))
        }
        BufferBound::AtMost(b) => b,
    };
    let elements = bound * 2 + 8;
    require_elements(v, elements, false)?;
    let tap = UpstreamTap::new();
    let Some(p) = v.create_publisher_on_upstream(elements, &tap) else {
        return Err(Stop::skipped(
            "the publisher is not built on an upstream the TCK can tap \
             (create_publisher_on_upstream returned None)",
        ));
    };
    let p: BoxPublisher<V::Item> = Box::new(p);
    let (sub, probe) = ManualSubscriber::with_recursion_bound(
        env,
        v.bounded_depth_of_on_next_and_request_recursion(),
    );
    let probe = probe.blackhole();
    subscribe_guarded(&*p, Box::new(probe))?;
    sub.expect_subscribed()?;
    // Watches taken - delivered over a no-signals window; `what` says how far downstream got.
    let watch = |what: &str| -> TestResult {
        let mut worst = (0u64, 0u64);
        let over = env.poll_until(env.no_signals_timeout(), || {
            let (taken, delivered) = (tap.taken(), sub.delivered());
            worst = (taken, delivered);
            taken.saturating_sub(delivered) > bound
        });
        if over {
            let (taken, delivered) = worst;
            fail!(
                "bounded buffering: {what}, the implementation had taken {} from its upstream \
                 and delivered {delivered} downstream: {} requested and not passed on, above the \
                 declared buffer of {bound} — hint: {}",
                if taken == u64::MAX {
                    "unbounded demand".to_owned()
                } else {
                    taken.to_string()
                },
                taken.saturating_sub(delivered),
                hints::BOUNDED_BUFFER
            );
        }
        Ok(())
    };
    let result = (|| {
        watch("subscribed, with no downstream demand")?;
        for k in 1..=2u64 {
            sub.request(1)?;
            if !env.poll_until(env.default_timeout(), || sub.delivered() >= k) {
                return Err(Stop::failed(format!(
                    "bounded buffering: downstream requested {k} and received {}",
                    sub.delivered()
                ))
                .with_hint(hints::NO_DELIVERY));
            }
            watch(&format!(
                "with downstream requesting 1 at a time, after {k}"
            ))?;
        }
        let rest = elements - 2;
        sub.request(rest)?;
        wait_while_progressing(
            env,
            &format!("bounded buffering: downstream requested the other {rest} elements"),
            || sub.delivered(),
            || sub.delivered() >= elements,
        )
        .map_err(|s| s.with_hint(hints::NO_DELIVERY))?;
        env.verify_no_async_errors_no_delay()
    })();
    let _ = sub.cancel();
    result
}
