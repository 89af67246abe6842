//! Fanout: one stream, many subscribers, each at its own pace inside one bounded buffer.
//!
//! # Contract
//!
//! * **What a subscriber sees.** Every element from the one it joined at, in order, each
//!   exactly once, by [`Clone`] (for large payloads use `Arc<T>`: a delivery is then a
//!   reference-count increment, and the buffer drops its own `Arc` as soon as the slowest
//!   subscriber has passed the slot). Nothing is ever dropped to make room.
//! * **Backpressure.** No subscriber gets more `on_next` than it requested (1.1). All
//!   subscribers share one buffer of at most [`FanoutConfig::capacity`] elements, so the
//!   fastest subscriber leads the slowest by at most that many elements: a slow subscriber
//!   holds the producer back, never the other subscribers' elements. The producer's room
//!   ([`FanoutSender::try_send`] fails with
//!   [`TrySendError::Full`](crate::producer::TrySendError::Full)) and the demand the processor
//!   signals upstream are exactly the free space: `capacity - buffered` (the processor asks
//!   its upstream for that space in batches of a quarter of the capacity, and at once when
//!   subscribed).
//! * **Late subscribers** start at the oldest element still retained, i.e. the oldest one some
//!   current subscriber has not read yet, or, while nobody is subscribed, everything sent since
//!   the buffer last had a reader (as Pekko's fanout does: Pekko PR #2874). A subscriber whose
//!   `subscribe` returned before a send (or an upstream `on_next`) started gets that element,
//!   also when another thread is draining and both wait for its pass (joins are taken before
//!   elements). After the end of the stream a new subscriber gets `on_subscribe` and then:
//!   after completion, the retained backlog (if any) and `on_complete`; after a failure,
//!   `on_error` with that failure; after a fanout error (shutdown, timeout, no publisher
//!   left), `on_error` with that [`FanoutError`].
//! * **Cancel** is idempotent and frees the subscriber's hold on the buffer at once: elements
//!   only it still needed are dropped, and the producer may use the space. The subscriber is
//!   dropped (3.13).
//! * **The last subscriber leaving** (cancel, `request(0)`, panic) before the end is not the
//!   end of a **channel**: its producer is still sending, so it keeps buffering (up to the
//!   capacity, then its sends wait) for the next subscriber, whatever the order in which
//!   subscribers came and went. A **processor** cancels its upstream (what the TCK's
//!   identity-processor verification expects, rule 3.14, and what Pekko does). Either can be
//!   changed with [`LastSubscriberPolicy`]; a fanout that shuts down this way answers later
//!   subscribers with [`FanoutError::ShutDown`], which says why.
//! * **Nobody left to receive.** When every [`FanoutPublisher`] handle of a channel is dropped
//!   and no subscriber is left, nobody can ever receive: the channel closes, its sends fail
//!   instead of waiting ([`FanoutSender::is_closed`] is `true`), and the buffer is dropped
//!   ([`FanoutError::PublishersDropped`]).
//! * **Termination.** Completion reaches each subscriber after its own backlog (at once for a
//!   subscriber that has read everything, with or without demand). A failure reaches every
//!   subscriber at once, dropping backlogs (rule 4.2 for the processor). A channel's producer
//!   that vanishes (the last [`FanoutSender`] dropped without `complete`) or panics fails the
//!   stream with [`ProducerError`](crate::producer::ProducerError): never a silent truncation.
//! * **Bad input and panics.** `request(0)` fails that subscriber alone with
//!   [`SpecViolation::NonPositiveRequest`](rs_api::SpecViolation) (3.9); demand saturates
//!   (3.17). A subscriber that panics (in any signal, or in the element's `clone`) is cancelled
//!   and reported through [`panics`](crate::panics) (2.13); the others lose nothing. No panic of
//!   a subscriber or of an element's `Drop` reaches the producer or a requester. A capacity of
//!   0 panics at construction (`# Panics`), as tokio's `mpsc::channel(0)` does.
//!
//! # Two faces of one engine
//!
//! | item | what it is |
//! |---|---|
//! | [`channel`], [`channel_with`] | a producer handle ([`FanoutSender`]: the producer API (shared with the [fanout](crate::fanout) and the [push source](crate::source::push): errors [`TrySendError`](crate::TrySendError), [`SendError`](crate::SendError))) and a [`FanoutPublisher`] |
//! | [`FanoutProcessor`] | a `Processor<T, T>`: subscribe it to any upstream publisher, subscribe any number of subscribers to it |
//! | [`FanoutConfig`] | the capacity, optional growth, the [`LastSubscriberPolicy`], an optional subscription timeout ([`TimeoutMode`]) |
//! | [`FanoutError`] | why the fanout ended a subscriber that did nothing wrong |
//! | [`FanoutStats`] | subscribers, buffered elements, deliveries, and the work counters (cursor reads, demand reads) |
//!
//! For a multicast processor in which every subscriber sees each element at the same time
//! (coordinated emission), see [`IdentityProcessor`](crate::processor::IdentityProcessor);
//! the [`processor`](crate::processor) module says when to use which.
//!
//! # Threads
//!
//! There is no thread of its own. Delivery happens on **whichever thread drives** the
//! [serial drain loop](crate::serial): a sender's send (or the upstream's `on_next`), a
//! subscriber's `request` or `cancel`, `subscribe`. All signals, to all subscribers, are
//! serial: one drainer at a time, so each subscriber's signals never overlap (1.3), and a
//! `request` made from inside `on_next` only records demand (3.3). `request` and `cancel` may
//! be called from any thread at any time; a caller that finds another thread draining returns
//! at once (3.4), leaving the work to it. In the usual setup a send delivers each element to
//! every subscriber before it returns, so a subscriber that is slow **in `on_next`** slows the
//! producer by its processing time (a subscriber that is slow to *request* only holds the
//! buffer, up to its capacity).
//!
//! **A slow subscriber behind an async boundary.** To keep a slow consumer off the producer's
//! thread, subscribe it through an island:
//! `Flow::from_shared_publisher(Arc::new(fanout_publisher), 1024)` (any stages)
//! `.into_publisher(&runtime)`, then subscribe the slow subscriber to that
//! [`FlowPublisher`](crate::flow::FlowPublisher). The island's input side requests its
//! buffer's size up front and half of it again each time half was taken, queues what it
//! receives, and the island runs the subscriber's `on_next` on a worker of the
//! [`Runtime`](crate::island::Runtime). Give it a buffer of hundreds of elements (the
//! boundary's default is [`DEFAULT_BOUNDARY_SIZE`](crate::boundary::DEFAULT_BOUNDARY_SIZE)):
//! with a small one each crossing wakes the island for a few elements, and the wake-ups cost
//! more than the work moved off the producer's thread (the `fanout-slow` benchmark in
//! `docs/benchmarks.md` measures both arrangements and both buffer sizes). A
//! [`BoundarySubscriber`](crate::boundary::BoundarySubscriber) with
//! [`Flow::from_boundary`](crate::flow::Flow::from_boundary) does the same with a ring of a
//! chosen size. The fanout needs nothing special for it: each visit hands such a subscriber
//! every element its demand allows in one run, and its cursor moves once. The fast
//! subscribers then pay only the slow one's hold on the buffer (it may lag by the fanout's
//! capacity plus the island's buffer), not its processing time.
//!
//! # Cost
//!
//! Per element, the work is the deliveries themselves: a pass visits only the subscribers that
//! have demand, each visit delivers everything that subscriber may have and then moves its
//! cursor in the ring once; a subscriber out of demand is parked and costs nothing until it
//! requests. No cursor scan per read, no subscription scan per element or per request, no
//! atomic read-modify-write per delivery, no allocation per element. A channel's permits
//! cost a send that drains its own element no read-modify-write either (the drainer keeps the
//! space it frees; see `core.rs`). [`FanoutStats::cursor_reads`] and
//! [`FanoutStats::demand_reads`] count that work.
//!
//! **What an element costs at each edge** (issue 24, measured on the 2-core benchmark
//! machine; ratios from one run each):
//!
//! * **Entering: a send.** [`FanoutSender::blocking_send`] enters and leaves the drain loop
//!   per element: two atomic read-modify-writes (`wip` up, `wip` down) around the pass,
//!   which at one subscriber is most of the send (about 30 ns, 0.7× multiqueue2 on one
//!   thread). [`FanoutSender::blocking_send_all`] (the burst entry) enters once per burst and
//!   takes every element it has a permit for in the same pass (the space a delivered element
//!   frees becomes the next one's permit without an atomic). In the steady state (no
//!   subscriber lagging, nothing posted, a permit in the drainer's credit) the burst's
//!   elements never leave the write's loop (`State::write_run` in `deliver.rs`): per element,
//!   the iterator's `next`, the checks for the pass, the permit from the credit, the element
//!   through the empty buffer to the group, and the counts. Counted under callgrind (issue
//!   24; `fanout_prof 1 N 1 burst-ours`, `blocking_send_all(0..N)` into a capacity-64
//!   channel, one subscriber with unbounded demand on the calling thread, the difference
//!   between N = 1.2 M and 200 k over 1 M): 90 instructions per element, where the pass's
//!   own burst loop, calling the write once per element, took 120, and multiqueue2 on one
//!   thread (`fanout_prof 1 N 1 mq2`) takes 135.7. From 32 subscribers on the deliveries
//!   dominate, and a burst costs about what per-element sends cost.
//!
//!   Where a per-element send goes (issue 24; `fanout_prof 1 N 1 ours` under callgrind, the
//!   difference between N = 40 k and 20 k over 20 k; `fanout_prof 128 N 1 ours`, N = 4 k and
//!   2 k): **210 instructions per element at one subscriber** (send and delivery together;
//!   2245 at 128, 17.54 per delivery). Self counts per element at one subscriber: the drain
//!   loop with the pass inlined into it 84 (of which the `wip` increment and decrement, the
//!   `passes` loop and the out-of-line `drain_as_drainer`'s register saves and restores 20,
//!   the pass's steady-state checks — `pending`, lagging readers, `lost_last`/`unreachable`,
//!   upstream, the credit and `Room::wanted`, the stats' three stores — about 40); the write
//!   (`State::write`: the end check, the ring's counts, the group's loop at one member, the
//!   unwinding guard, the counters) 65, 16 of them its prologue and epilogue; the entry
//!   (`Inlet::blocking_send`, the room's shut check, the slot) 29, 17 of them the prologue
//!   and epilogue that the spin and sleep paths required; the benchmark's loop and subscriber
//!   about 10. Cut, without touching an atomic: the full-buffer part of `blocking_send` out of
//!   line and `#[cold]` (210 → 201; 2245 → 2236 at 128), and the write's second look at the
//!   end, which a channel's send has just made before taking its permit (`State::write` no
//!   longer checks, `State::write_checked` does for the upstream's and the inbox's elements;
//!   201 → 197; 2236 → 2233 at 128, 17.45 per delivery; `ours-1024` at 128: 2757 → 2745 per
//!   element, 21.54 → 21.45 per delivery; the burst entry unchanged at 88). Timed
//!   (`fanout_prof 128 20000 15 bulk-1024`, 3 alternations while a CI run loaded the
//!   machine): shares 0.63, 0.53, 0.74 before and 0.78, 0.74, 0.79 after, a spread that
//!   0.5% fewer instructions does not explain: noise, not a result. At 128 subscribers the deliveries
//!   are the cost, and these cuts are 0.5% of it: the 0.8× of issue 24 is not reached by the
//!   send's entry. What is left is the two `wip` read-modify-writes and the pass's checks,
//!   which the contract needs per entry (a post between two sends must be seen by the next
//!   pass); the burst entry is the way around them. (The "about 330 per element" recorded
//!   in the next bullet before was not reproduced by this method.)
//! * **Leaving: a delivery** is one `dyn` call; `request(1)` from inside it is one
//!   compare-and-swap on the handle's word that holds the demand and the parked bit (no pass,
//!   no scan of the group; see `handle.rs`). Counted with callgrind (issue 24; `fanout_prof
//!   32 N 1 r1-ours`: capacity 64, 32 subscribers each calling `request(1)` from inside every
//!   `on_next`, the difference between N = 120 k and 20 k over 3.2 M deliveries), per
//!   delivery: 86.9 instructions and 2 locked read-modify-writes before, 82.9 and 1 now
//!   (81.9 with `group_stop`, next bullet);
//!   multiqueue2 on one thread (`fanout_prof 32 N 1 mq2`) takes 84.3. Of ours: the group's
//!   loop about 27 (the position compared with the member's `stop`, which with demand 1
//!   is reached at every element, so the demand is re-read per delivery: that read was an
//!   out-of-line cross-crate call of `Demand::total` until it was marked `#[inline]`, 5
//!   instructions per delivery), the benchmark's subscriber 20 (its sum and its `dyn` call
//!   to `request`, with the `Arc<dyn>` data pointer's alignment arithmetic), the handle's
//!   `request` 24 (the cancelled check, the saturating add and the compare-and-swap loop).
//!   Demand and the parked bit in one word replaced the demand's compare-and-swap plus a
//!   `fetch_and` of the parked bit: one locked instruction per request less, at about the
//!   same count. The drainer still reads each member's demand when it reaches its `stop`;
//!   a member with demand 1 reaches it at every element, which is the price of not
//!   scanning the group per request.
//! * **Many subscribers on the producer's thread** (issue 24; capacity 64, 128 subscribers
//!   with unbounded demand, each adding to a checksum; `fanout_prof 128 N 1 ours` and `ceil`
//!   under callgrind, the difference between N = 12 k and 2 k over 1.28 M deliveries): **17.5
//!   instructions per delivery** against the closure loop's 14.05 (the ceiling); 27.0 before
//!   the roster kept `group_stop` (ab5202d, same method; the 21.3 recorded here before was not
//!   reproduced). Of the ceiling's 14: its loop 7 (the fat pointer's two loads, the call, the
//!   step, compare, branch) and the closure 7; our subscriber's `on_next` is the same 7
//!   instructions. The group's loop took 17 per delivery: its index went through memory (it
//!   lives outside the unwinding guard, whose handler needs it: loaded, incremented and stored
//!   around each call), the element's position and the `pending` flag were loaded again after
//!   each call (a closure captures them by reference), and each member's `stop` was compared
//!   and the flag tested. Before `group_stop` the loop now compares nothing
//!   (`hand_to_each!` in `deliver.rs`) and is 8 instructions per delivery: the closure loop's
//!   7 and a load of the element for its `clone` (the callee could reach the element's
//!   memory, so it is read again for each call); with the guard inlined as a landing pad the
//!   index stays in a register. The rest, about 330 instructions per element (2.6 per
//!   delivery at 128), is the send: entering and leaving the drain loop, the pass's checks,
//!   the ring's counts. The burst entry (`burst-ours`): 25.9 → 16.6. At capacity 1024 (the
//!   `fanout-1024` rows, `ours-1024` and `burst-ours-1024`): 31.0 → 21.5 and 29.8 → 20.6, of
//!   which that scenario's subscriber's `on_next` is 11 (it tests its one-by-one flag per
//!   element). The element at `group_stop` takes the checked loop, which also computes the
//!   next `group_stop` (4 instructions per member); with demand 1 per `request` that is every
//!   element, and two copies of the checked loop mostly pay for it (the flags' look compiled
//!   out of the one taken while `pending` is clear, the position in a register): `fanout_prof
//!   K N 1 r1-ours` (the previous bullet's count) 82.9 → 81.9 per delivery at 32 subscribers,
//!   77.0 → 75.2 at 128, but 106.5 → 108.75 at 8 (+2%: about 18 instructions more per element
//!   in the choice of loop and the checked loop's set-up, shared by only 8 members).
//!
//!   **Timed** (`fanout_prof K N 21 MODE` under the bench lock, main's binary and this one
//!   alternately, 11 runs each, 5.12 M deliveries per round; medians of ours' share of the
//!   reference, which runs alternately in the same process, and of ours' ns per delivery;
//!   2026-12-03, load 2–3 from another helper's builds): per-element sends against the
//!   closure loop 0.73 → 0.77 at 128 subscribers (2.70 → 2.46 ns), 0.62 → 0.73 at 32 (3.31 →
//!   2.68), 0.36 → 0.50 at 8 (5.30 → 3.54); the burst entry at 128 against multiqueue2 on one
//!   thread 2.24 → 2.79 (2.72 → 2.03 ns); `request(1)` per element at 8, 0.59 → 0.60 (10.26 →
//!   9.11 ns; 7 runs each at 128 and 32: 0.83 → 0.89 and 0.85 → 0.89). The `fanout-1024`
//!   rows against their closure loop (`bulk-1024`, `burst-1024`, 7 runs, 2.56 M deliveries):
//!   per-element sends 0.75 at 128 subscribers, 0.65 at 32, 0.45 at 8; the burst entry 0.80,
//!   0.78, 0.69. So at 128 the time did not fall with the instructions (27.0 → 17.5 per
//!   delivery, −35%, for −9% of the time): the loop's extra instructions were independent of
//!   its chain of dependent loads and the indirect call, and mostly ran beside it (no
//!   hardware counters on this virtual machine to say more). What still separates ours from
//!   the closure loop at 128 is mostly the send, about 330 instructions and two locked
//!   read-modify-writes per element (the medians' difference, 0.57 ns per delivery, is 73 ns
//!   per element), which the burst entry cuts to about 200 instructions and one entry per
//!   run; at 8 and 32 subscribers the send weighs more per delivery and the loop's
//!   instructions count for more of the time. Issue 24's 0.8× at 128 subscribers and
//!   capacity 1024 is reached by the burst entry (0.80) and not by per-element sends (0.75)
//!   in these runs; what is left is the send's cost, not the group's loop.
//!
//!   **A hot/cold split of the roster** (the group's `subscriber` and `stop` in a `Vec` of
//!   their own, the rest beside it) was not built: under callgrind's cache simulation
//!   (`--cache-sim=yes`, the runs above) neither ours nor the closure loop has a first-level
//!   data-cache miss per delivery at 128 subscribers (the counts of misses are the same at
//!   both N: 2659 and 2389), and the loop before `group_stop` reads only the member's
//!   `subscriber`, 16 of its 64 bytes; 128 members are 8 KiB. The loop's excess was
//!   instructions, and what the timed runs leave is the send (above), not memory.
//! * **Subscribers on islands** (`Flow::from_shared_publisher(fanout, n)`: the broadcast
//!   channel with receivers off the producer's thread) pay the island's input side per
//!   element: one read-modify-write on the ring word the island polls (a cache-line transfer
//!   between cores per element and island) and a wake-up whenever the island had parked.
//!   Measured at 0.31/0.36/0.51× the best thread-per-receiver peer (multiqueue2) at
//!   1/8/32 subscribers and 1.9× (bus) at 128; with the burst entry 0.36/0.39/0.53/2.0×
//!   (the `fanout-islands` scenario, quick report of 2026-12-02 17:03Z, load 13 at start).
//!   Where the time goes (issue 24, `perf record` of one island, 2 M elements, 2026-12-02):
//!   the producer's thread has 43% of the samples, the island's two worker threads 57%
//!   together, and only 0.73 of the 2 cores are busy, with one context switch per about 220
//!   elements: neither side is saturated, they wait on each other (the producer for permits
//!   once it leads by the fanout's capacity plus the island's ring, the island on its empty
//!   ring). The per-element publication is about 5% of the samples. A fifth of the island's
//!   samples are the **fanout's own work done on the island's thread**: when the island's
//!   subscriber ran out of demand here (its ring was full), the island's `request(n)`
//!   un-parks it, and the requester drains (rule 3.4: whoever posts drains if nobody does),
//!   so the island itself delivers the buffered elements into its own ring while the
//!   producer's sends meanwhile queue in the inbox. Another 5% of the island's samples wait
//!   on the executor's shared queue. Two remedies were measured and not kept:
//!   publishing once per drain pass instead of per element (with one send per element a pass
//!   carries one element: slower), and a foreign producer's linger (the island spinning
//!   63–1023 pause hints before it parks when the producer published since its last park:
//!   medians of six alternating runs 9.6 → 9.8 M el/s at one island, 2.8 → 2.5 at 8, 0.57 →
//!   0.60 at 32, all within the machine's noise). So the fanout writing into each island's
//!   ring against credit (as an island's output side does) would save the publication, a
//!   small share; to pay it must also hand the un-parked subscriber's delivery to the blocked
//!   sender instead of the requesting island (left for a later issue).
//!
//!   **Counted on 2026-12-03** (issue 24; `fanout_prof K 1000000 3 isl` and its `isl-burst`,
//!   `isl-bus`, `isl-mq2` modes: the scenario's rows, 3 M elements, under `perf stat -e
//!   task-clock,context-switches` at load 1–5, one run each). CPU time per input element, all
//!   threads, ours (per-element send / burst) against bus and multiqueue2 with a thread per
//!   receiver: 76/72 ns against 55/61 at 1 subscriber, 145/264 against 170/260 at 8, 998/525
//!   against 346/377 at 32. So at 1 and 8 subscribers an element costs about what it costs the
//!   peers; the lower throughput there is waiting, not work. At 32, ours does 1.4–2.9× their
//!   work. Where it goes (`perf record -e cpu-clock`):
//!   - **Sleeping and waking is a quarter to two fifths of all samples** (kernel scheduling,
//!     futex, the wake-up's inter-processor interrupt; 38% at 1 subscriber, 23% at 32). At 1
//!     subscriber the producer's thread spends a fifth of its own samples in the futex wake of
//!     the default runtime's queue (std's `mpmc` channel inside futures' `ThreadPool`), each
//!     time a publication finds the island parked; and the pool's idle workers hand its
//!     `Mutex<Receiver>` to each other on every wake-up (`lock_contended` 4%, the pool's futex
//!     3.5%).
//!   - **Wake-ups are what allocates.** The allocation the report shows on these rows is
//!     exactly 1496 B per allocation (0.59 B / 0.000395 at 8 subscribers, 25.3 B / 0.0169 at
//!     128, quick report of 2026-12-03 11:37Z): one block of that `mpmc` channel (31 slots of
//!     futures' 40-byte `Message::Run(Task)` plus its link), one per 31 tasks sent to the pool
//!     (island wake-ups). So the figures count wake-ups: one per about 258 input elements at 1
//!     subscriber, 650 deliveries per wake-up at 8, 470 at 32, 245 at 128; they vary from run
//!     to run with the scheduling, and only fewer wake-ups or another executor (this crate has
//!     no executor of its own: `rs-impl/Cargo.toml`) remove them.
//!   - **From 8 subscribers on, the islands deliver for the producer.** The publication into
//!     the island's ring (`BoundarySubscriber::on_next`) has 13.5% of the samples on the
//!     islands' threads and 4.7% on the producer's at 8 subscribers, 17.2% and 9.3% at 32 (with
//!     the fanout's pass, `write_buffered` and `deliver`, on the islands' threads too): two
//!     thirds to three quarters of that work is done by an island whose request un-parked
//!     its subscriber (above), into every subscriber's ring, so the rings' words move between
//!     the cores with the drainer.
//!
//!   Two more remedies were counted and not kept. The foreign producer's linger again
//!   (`RingIn::linger` spinning up to 1023 pause hints whenever the island took something
//!   since its last linger): context switches −22–26%, −59–62% and −80–84% at 1/8/32
//!   subscribers, but CPU time +44–149%, +50–116% and +23–75%, and the wall time longer in all
//!   six alternating pairs: on 2 cores the spinning island takes the producer's core. An
//!   island input side replenishing three quarters of its ring at a time instead of half: 15%
//!   less wall time at 32 subscribers with the scenario's sink, 20% more at 8 with a
//!   `black_box` sink (medians of seven alternating runs each): no effect beyond the noise.
//!
//!   What the per-element publication costs, as an upper bound: the same rows with the
//!   island's `BoundarySubscriber` publishing every 64 elements instead of each one (an
//!   experiment only, not a possible fix: without a signal at the end of the fanout's pass an
//!   element could wait for the next send indefinitely), medians of six alternating runs of
//!   1.5 M elements: wall time −33%, −26% and −2% at 1/8/32 subscribers per-element (CPU time
//!   −32%, −24%, −2%; context switches −32%, −9%, −24%), −12%, −9% and +2% with the burst
//!   entry (CPU −24%, −25%, +2%). So at 1 and 8 subscribers the per-element read-modify-write
//!   on the island's ring word and the wake-ups it triggers are a quarter to a third of the
//!   work, not the 5% the samples of 2026-12-02 suggested (they attribute the cache-line
//!   transfer to whichever access pays it); at 32 other costs dominate (the islands draining
//!   for the producer, above). The named remedy stands: a reader on the island's own thread
//!   pulling from the fanout's buffer (as bus and multiqueue2 receivers do), which removes the
//!   second ring, its per-element read-modify-write and the requester's drain together.
//!
//!   The cheaper step, publishing into each island's ring **once per run**, was built and
//!   measured (issue 24, 2026-12-03; branch `fisl2-wip`) and is not kept. A crate-private
//!   end-of-run hook that the island's input side offers when it subscribes; in a run (a
//!   burst's pass, a lagging subscriber's visit) the input side writes each element
//!   unpublished and the fanout publishes the run at the end of the visit or the pass (one
//!   read-modify-write and at most one wake-up per run); a pass with one element (per-element
//!   sends) publishes it at once, there being nothing to batch. Medians of 7–14 alternating
//!   runs of `fanout_prof K N 1 isl` / `isl-burst` (wall time against main): bursts −24%,
//!   −10%, +42% at 1/8/32 subscribers; per-element sends +5%, +15%, +57% (a control, main's
//!   binary against itself, differed by 6% at 32; the hook's runs had about twice the
//!   context switches there). Under callgrind it adds instructions (4442 against 3886 per
//!   element at 32 subscribers, per-element sends: the hook's calls, and the writer's
//!   publication no longer inlined into `on_next`) and saves only the cache-line transfers
//!   of the per-element read-modify-writes, which callgrind does not see. So the per-element
//!   publication is not what costs most from 8 subscribers on; the requesters' drains and the
//!   wake-ups are (above), and a pull reader on the island's thread removes both.
//!
//! # Memory
//!
//! At most [`FanoutConfig::capacity`] elements are retained (the buffer is allocated at the
//! capacity, or starts at [`FanoutConfig::initial_capacity`] and doubles while a write finds
//! it full, never shrinking), plus, briefly, the elements a producer hands over while another
//! thread is draining (within the same bound for a channel; a processor's upstream that
//! ignores demand fails the fanout with [`FanoutError::UpstreamOverflow`]). Per subscriber:
//! one slot with its cursor and counters.
//!
//! # Layout
//!
//! Each file imports only from the ones above it in this table:
//!
//! | file | what it holds |
//! |---|---|
//! | `config.rs`, `error.rs`, `stats.rs` | [`FanoutConfig`] and its policies; [`FanoutError`]; [`FanoutStats`] |
//! | `ring.rs` | the resizable multi-reader ring buffer, with a reader count per slot (Pekko PR #3730) |
//! | `handle.rs` | the subscription handed to each subscriber: demand, flags, posting to the drainer |
//! | `roster.rs` | the subscribers, stored densely by set (group, lagging, parked) |
//! | `inbox.rs` | what callers hand to the drainer |
//! | `state.rs` | the drainer-only state; a subscriber's life (join, park, attach, leave, end) |
//! | `deliver.rs` | the hot path: writing an element, the group's loop, visiting the lagging |
//! | `core.rs` | the shared core: the pass, the inbox, the channel's permits, the upstream, the timeout |
//! | `channel.rs`, `processor.rs` | the two faces |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::fanout;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let (tx, publisher) = fanout::channel::<u64>(8);
//! let (fast, fast_result) = collect(RequestStrategy::Unbounded);
//! let (slow, slow_result) = collect(RequestStrategy::OneByOne);
//! publisher.subscribe(Box::new(fast));
//! publisher.subscribe(Box::new(slow));
//! for i in 0..100 {
//!     tx.blocking_send(i).unwrap(); // delivers to both on this thread
//! }
//! tx.complete();
//! assert_eq!(fast_result.wait().unwrap(), (0..100).collect::<Vec<_>>());
//! assert_eq!(slow_result.wait().unwrap(), (0..100).collect::<Vec<_>>());
//! ```
//!
//! The processor over any publisher:
//!
//! ```
//! use rs_api::{Publisher, PublisherExt};
//! use rs_impl::fanout::FanoutProcessor;
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let fanout = FanoutProcessor::<u32>::new(256);
//! let (a, ra) = collect(RequestStrategy::Prefetch(4));
//! let (b, rb) = collect(RequestStrategy::Unbounded);
//! fanout.subscribe(Box::new(a));
//! fanout.subscribe(Box::new(b));
//! source::range(0u32..1000).subscribe_with(fanout.clone());
//! assert_eq!(ra.wait().unwrap(), (0..1000).collect::<Vec<_>>());
//! assert_eq!(rb.wait().unwrap().len(), 1000);
//! ```

mod channel;
mod config;
mod core;
mod deliver;
mod error;
mod handle;
mod inbox;
mod processor;
mod ring;
mod roster;
mod state;
mod stats;
#[cfg(all(test, not(rs_loom)))]
mod tests;

pub use channel::{channel, channel_with, FanoutPublisher, FanoutSender};
pub use config::{
    FanoutConfig, LastSubscriberPolicy, SubscriptionTimeout, TimeoutMode, MAX_CAPACITY,
};
pub use error::FanoutError;
pub use processor::FanoutProcessor;
pub use stats::FanoutStats;
