//! Admission to the request handlers: fair between clients, quiet clients
//! first, and free when nobody waits.
//!
//! Why: handlers run on the threads that read the connections (one per
//! core, `server.rs`), at most [`Gate::new`]'s `permits` at once. When more
//! requests are ready than that, who goes next decides who waits. First
//! come, first served, a few clients that keep many connections busy (the
//! second outside audit: 6 addresses x 8 connections hammering a heavy
//! poll) would be served many times for each other client's once. Here
//! each client group ([`ClientGroup`]: an IPv4 address or an IPv6 /64)
//! waits in a line of its own, and the lines are served in turn:
//! a client with one request waits for at most one request of each other
//! client, however many they sent.
//!
//! Turns are not enough where the CPU is what is short: a client that has
//! the server render big pages takes more of it per turn than one that
//! votes. So each request waits in one of two lanes ([`Lane`]) by the CPU
//! time its client group's requests took of late ([`Permit::done`]): past
//! [`BUSY_FROM`], decaying with a half-life of [`HALF_LIFE`], the group is
//! busy, else quiet. While another group is about, a busy group's requests
//! take permits of a pool apart ([`Pool::Apart`]): the server runs them on
//! threads of their own at a lower priority, so that a heavy page neither
//! holds a thread that reads the other clients' requests (the gate only
//! orders requests already read) nor takes their CPU. Alone, a busy group
//! takes the main pool's permits like anyone, where a permit that comes
//! free goes to a quiet request first. (docs/DECISIONS.md, "The request
//! path": what this replaced, and the figures.)
//!
//! Promises:
//! - free when nobody waits: a request that finds a permit and an empty
//!   queue takes it under one short lock, and wakes nobody;
//! - bounded: at most `capacity` requests wait in all, and one client group
//!   at most `per_group`; past either, [`Gate::enter`] refuses at once (the
//!   caller answers 503), so one client's flood fills its own line;
//! - a quiet request never waits for a busy one's permit, nor a busy one
//!   apart for the main pool's;
//! - within a client group and a lane, first come, first served; a request
//!   whose client gave up while waiting passes its turn on;
//! - the client groups' lines live only while they have requests waiting,
//!   in memory, never written anywhere; their CPU time is kept in memory
//!   under a keyed hash (`keyed::Secret`), never the address, and forgotten
//!   once under a millisecond, within [`FORGOTTEN_WITHIN`] of the group's
//!   last request ([`Gate::sweep`], which the server calls on an idle
//!   server too).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::client::ClientGroup;
use crate::keyed::{Key, Secret};

/// A client group whose requests took more than this CPU time (decayed) is
/// busy: sustained, about 17 ms of CPU a second. A share page takes a
/// millisecond or less to render (the largest, 20 rankings of 12 options,
/// half a millisecond), so a person is far below; a class behind one
/// address opening a big page at once may be busy for a second or two,
/// which only puts them after the others while the CPU is short; a client
/// that keeps the server rendering big pages for it from many connections
/// is busy for as long as it does (bench/results/2026-11-28-issue24-ninth).
pub const BUSY_FROM: Duration = Duration::from_millis(25);

/// A client group's CPU time counts half after this time.
pub const HALF_LIFE: Duration = Duration::from_secs(1);

/// A group's CPU time is dropped once decayed under this.
const FORGET_UNDER: Duration = Duration::from_millis(1);

/// How often the table of CPU times is swept at least.
pub const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// A group is forgotten within this time of its last request: enough half
/// lives to fall from a minute of CPU under `FORGET_UNDER`, and a sweep.
pub const FORGOTTEN_WITHIN: Duration = Duration::from_secs(16 + 5);

/// Which line a request waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Requests of client groups under [`BUSY_FROM`]: served first.
    Quiet,
    /// Requests of busy client groups: served when no quiet one waits.
    Busy,
}

/// Why a request was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue, or this client's line, is full.
    Full,
    /// The gate is closed: the server is stopping.
    Closed,
}

/// One lane: a line per client group, served in turn.
struct Lines<T> {
    lines: HashMap<ClientGroup, VecDeque<T>>,
    /// The client groups with requests waiting, in the order they are served.
    turns: VecDeque<ClientGroup>,
}

impl<T> Lines<T> {
    fn new() -> Lines<T> {
        Lines { lines: HashMap::new(), turns: VecDeque::new() }
    }

    fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    fn len_of(&self, group: &ClientGroup) -> usize {
        self.lines.get(group).map_or(0, VecDeque::len)
    }

    fn push(&mut self, group: ClientGroup, item: T) {
        let line = self.lines.entry(group).or_default();
        line.push_back(item);
        if line.len() == 1 {
            self.turns.push_back(group);
        }
    }

    /// The first request of the next group in turn.
    fn pop(&mut self) -> Option<T> {
        while let Some(group) = self.turns.pop_front() {
            let (item, more) = match self.lines.get_mut(&group) {
                Some(line) => (line.pop_front(), !line.is_empty()),
                None => (None, false),
            };
            if more {
                // Back to the end of the round.
                self.turns.push_back(group);
            } else {
                self.lines.remove(&group);
            }
            if item.is_some() {
                return item;
            }
        }
        None
    }
}

/// Each client group's CPU time (seconds, decayed), under a keyed hash.
struct Spent {
    groups: HashMap<Key, (f64, Instant)>,
    /// The table's size after its last sweep of decayed entries, and when.
    swept: (usize, Instant),
}

impl Spent {
    fn lane(&self, key: &Key, now: Instant) -> Lane {
        let spent = self.groups.get(key).map_or(0.0, |(s, at)| decayed(*s, *at, now));
        if spent > BUSY_FROM.as_secs_f64() { Lane::Busy } else { Lane::Quiet }
    }

    fn charge(&mut self, key: Key, cpu: Duration, now: Instant) {
        let (spent, at) = self.groups.entry(key).or_insert((0.0, now));
        *spent = decayed(*spent, *at, now) + cpu.as_secs_f64();
        *at = now;
        self.sweep_if_due(now);
    }

    /// Forgets the groups gone quiet, every [`SWEEP_EVERY`] and whenever the
    /// table doubled since the last sweep (so a sweep costs O(1) a request).
    fn sweep_if_due(&mut self, now: Instant) {
        let (size, at) = self.swept;
        if self.groups.len() > (2 * size).max(1024) || now.saturating_duration_since(at) >= SWEEP_EVERY {
            let under = FORGET_UNDER.as_secs_f64();
            self.groups.retain(|_, (spent, at)| decayed(*spent, *at, now) >= under);
            self.swept = (self.groups.len(), now);
        }
    }
}

fn decayed(spent: f64, at: Instant, now: Instant) -> f64 {
    let halves = now.saturating_duration_since(at).as_secs_f64() / HALF_LIFE.as_secs_f64();
    spent * (-halves).exp2()
}

/// A waiting request: woken with its permit.
type Waiter = oneshot::Sender<()>;

/// Which permits a request holds: where it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// The server's own threads (those that read the connections, or those
    /// that may wait): quiet clients' requests, and a busy client's when
    /// nobody else is about.
    Main,
    /// Threads apart, at a lower priority: a busy client's requests while
    /// other clients are about, so that its work neither holds the threads
    /// that read the others' requests nor takes their CPU.
    Apart,
}

struct State {
    /// Permits held (by running requests, or on their way to a waiter), of
    /// the main pool and of the pool apart.
    held: usize,
    held_apart: usize,
    /// Waiting for the main pool: quiet requests first, then busy ones.
    quiet: Lines<Waiter>,
    busy: Lines<Waiter>,
    /// Waiting for the pool apart.
    apart: Lines<Waiter>,
    waiting: usize,
    spent: Spent,
    closed: bool,
}

impl State {
    /// Hands a permit of `pool` given back to the next waiter for it (quiet
    /// first), skipping those whose client gave up; else it is free again.
    fn pass_on(&mut self, pool: Pool) {
        loop {
            let next = match pool {
                Pool::Main => self.quiet.pop().or_else(|| self.busy.pop()),
                Pool::Apart => self.apart.pop(),
            };
            let Some(waiter) = next else { break };
            self.waiting -= 1;
            if waiter.send(()).is_ok() {
                return;
            }
        }
        match pool {
            Pool::Main => self.held -= 1,
            Pool::Apart => self.held_apart -= 1,
        }
    }

    fn waiting_of(&self, group: &ClientGroup) -> usize {
        self.quiet.len_of(group) + self.busy.len_of(group) + self.apart.len_of(group)
    }
}

/// The admission to the handlers, shared by every connection.
pub struct Gate {
    state: Mutex<State>,
    /// Keys the CPU times; used outside the lock.
    secret: Secret,
    permits: usize,
    /// Permits of the pool apart.
    apart: usize,
    capacity: usize,
    per_group: usize,
}

/// A request's right to run; given back (to the next in turn) when done or
/// dropped.
pub struct Permit {
    gate: Arc<Gate>,
    key: Key,
    pool: Pool,
    done: bool,
}

impl Gate {
    /// `permits` requests at once (at least 1) in the main pool, `apart`
    /// in the pool apart (at least 1); at most `capacity` waiting,
    /// `per_group` of them from one client group (both at least 1).
    pub fn new(permits: usize, apart: usize, capacity: usize, per_group: usize) -> anyhow::Result<Arc<Gate>> {
        let capacity = capacity.max(1);
        Ok(Arc::new(Gate {
            state: Mutex::new(State {
                held: 0,
                held_apart: 0,
                quiet: Lines::new(),
                busy: Lines::new(),
                apart: Lines::new(),
                waiting: 0,
                spent: Spent { groups: HashMap::new(), swept: (0, Instant::now()) },
                closed: false,
            }),
            secret: Secret::generate()?,
            permits: permits.max(1),
            apart: apart.max(1),
            capacity,
            per_group: per_group.clamp(1, capacity),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Each change is a few pushes and pops: the state stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key `group`'s CPU time is kept under.
    fn key(&self, group: &ClientGroup) -> Key {
        self.secret.tag(&[group.as_bytes()])
    }

    /// A permit for a request of `group`: at once if one of its pool is
    /// free and nobody waits for it, else in its turn. A busy client's
    /// request takes a permit apart while another client group is about
    /// (its CPU time not yet forgotten); alone, it runs as a quiet one.
    pub async fn enter(self: &Arc<Self>, group: ClientGroup) -> Result<Permit, Refused> {
        let key = self.key(&group);
        let (turn, pool) = {
            let mut state = self.lock();
            if state.closed {
                return Err(Refused::Closed);
            }
            let lane = state.spent.lane(&key, Instant::now());
            let pool = if lane == Lane::Busy && state.spent.groups.len() > 1 { Pool::Apart } else { Pool::Main };
            match pool {
                Pool::Main if state.held < self.permits && state.quiet.is_empty() && state.busy.is_empty() => {
                    state.held += 1;
                    return Ok(Permit { gate: self.clone(), key, pool, done: false });
                }
                Pool::Apart if state.held_apart < self.apart && state.apart.is_empty() => {
                    state.held_apart += 1;
                    return Ok(Permit { gate: self.clone(), key, pool, done: false });
                }
                _ => {}
            }
            if state.waiting >= self.capacity || state.waiting_of(&group) >= self.per_group {
                return Err(Refused::Full);
            }
            let (tx, rx) = oneshot::channel();
            match (pool, lane) {
                (Pool::Apart, _) => state.apart.push(group, tx),
                (Pool::Main, Lane::Quiet) => state.quiet.push(group, tx),
                (Pool::Main, Lane::Busy) => state.busy.push(group, tx),
            }
            state.waiting += 1;
            (rx, pool)
        };
        // Dropped while waiting (the client hung up): the sender fails, and
        // the permit goes to the next in turn.
        match turn.await {
            Ok(()) => Ok(Permit { gate: self.clone(), key, pool, done: false }),
            Err(_) => Err(Refused::Closed),
        }
    }

    /// Refuses every request from now on, and those waiting.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.quiet = Lines::new();
        state.busy = Lines::new();
        state.apart = Lines::new();
        state.waiting = 0;
    }

    /// Counts `cpu` against `group` for a request that did not wait at the
    /// gate (an upload, which runs on a thread that may wait).
    pub fn charge(&self, group: ClientGroup, cpu: Duration) {
        let key = self.key(&group);
        self.lock().spent.charge(key, cpu, Instant::now());
    }

    /// Forgets the client groups gone quiet (for an idle server: a busy one
    /// sweeps as it charges).
    pub fn sweep(&self) {
        self.lock().spent.sweep_if_due(Instant::now());
    }

    /// Sweeps `gates` every [`SWEEP_EVERY`], for ever: an idle server
    /// forgets its clients' CPU time all the same (a task of the server's
    /// runtime).
    pub async fn sweep_for_ever(gates: [Arc<Gate>; 2]) {
        loop {
            tokio::time::sleep(SWEEP_EVERY).await;
            for gate in &gates {
                gate.sweep();
            }
        }
    }

    /// The lane `group`'s next request would wait in.
    #[cfg(test)]
    pub fn lane_of(&self, group: ClientGroup) -> Lane {
        let key = self.key(&group);
        self.lock().spent.lane(&key, Instant::now())
    }
}

impl Permit {
    /// Where the request runs.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// The request is answered: `cpu`, the CPU time its handler took,
    /// counts against its client group, and the permit goes to the next.
    pub fn done(mut self, cpu: Duration) {
        self.done = true;
        let mut state = self.gate.lock();
        state.spent.charge(self.key, cpu, Instant::now());
        state.pass_on(self.pool);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.done {
            self.gate.lock().pass_on(self.pool);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn group(s: &str) -> ClientGroup {
        ClientGroup::of(s.parse::<IpAddr>().unwrap())
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    /// Makes `group` busy: its requests took `BUSY_FROM` and a bit, now.
    fn make_busy(gate: &Gate, group: ClientGroup) {
        let key = gate.key(&group);
        gate.lock().spent.charge(key, BUSY_FROM + Duration::from_millis(1), Instant::now());
    }

    /// Requests of `groups` (with their labels) queued behind one permit
    /// held; the labels in the order they are let in.
    fn order(gate: &Arc<Gate>, requests: &[(ClientGroup, &'static str)]) -> Vec<&'static str> {
        runtime().block_on(async {
            let first = gate.enter(group("203.0.113.1")).await.unwrap();
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let mut tasks = Vec::new();
            for &(g, label) in requests {
                let (gate, tx) = (gate.clone(), tx.clone());
                tasks.push(tokio::spawn(async move {
                    let permit = gate.enter(g).await.unwrap();
                    tx.send(label).unwrap();
                    permit.done(Duration::ZERO);
                }));
                // Each queued before the next comes.
                tokio::task::yield_now().await;
            }
            drop(first);
            for t in tasks {
                t.await.unwrap();
            }
            drop(tx);
            let mut out = Vec::new();
            while let Some(l) = rx.recv().await {
                out.push(l);
            }
            out
        })
    }

    #[test]
    fn clients_are_served_in_turn_and_each_in_order() {
        let gate = Gate::new(1, 1, 100, 100).unwrap();
        let (heavy, light, other) = (group("192.0.2.1"), group("192.0.2.2"), group("2001:db8::1"));
        let mut requests: Vec<(ClientGroup, &str)> =
            vec![(heavy, "h0"), (heavy, "h1"), (heavy, "h2"), (heavy, "h3"), (heavy, "h4")];
        requests.extend([(light, "l0"), (other, "o0"), (light, "l1")]);
        // A /64 is one client.
        requests.extend([(group("2001:db8::2"), "o1"), (group("2001:db8::3"), "o2")]);
        assert_eq!(
            order(&gate, &requests),
            ["h0", "l0", "o0", "h1", "l1", "o1", "h2", "o2", "h3", "h4"],
            "one of each client in turn, each client's own first come first served"
        );
    }

    #[test]
    fn a_quiet_request_goes_before_every_busy_one() {
        let gate = Gate::new(1, 1, 100, 100).unwrap();
        let (busy, quiet) = (group("192.0.2.1"), group("192.0.2.2"));
        make_busy(&gate, busy);
        assert_eq!(gate.lane_of(busy), Lane::Busy);
        assert_eq!(
            order(&gate, &[(busy, "b0"), (busy, "b1"), (quiet, "q0"), (busy, "b2"), (quiet, "q1")]),
            ["q0", "q1", "b0", "b1", "b2"]
        );
    }

    /// A busy client's requests run apart while another client is about:
    /// they neither wait for the main pool's permits nor hold them, and
    /// wait in turn for the permits apart; alone, a busy client runs in
    /// the main pool like a quiet one.
    #[test]
    fn a_busy_client_runs_apart_while_others_are_about_and_in_the_main_pool_alone() {
        let gate = Gate::new(1, 1, 100, 100).unwrap();
        let (busy, quiet) = (group("192.0.2.1"), group("192.0.2.2"));
        make_busy(&gate, busy);
        runtime().block_on(async {
            // Alone: the main pool.
            let alone = gate.enter(busy).await.unwrap();
            assert_eq!(alone.pool(), Pool::Main);
            alone.done(Duration::ZERO);
            // Another client about (its request counted): apart, even
            // while the main pool's only permit is held.
            gate.enter(quiet).await.unwrap().done(Duration::from_micros(100));
            let main = gate.enter(quiet).await.unwrap();
            assert_eq!(main.pool(), Pool::Main);
            let apart = gate.enter(busy).await.unwrap();
            assert_eq!(apart.pool(), Pool::Apart);
            // The permit apart is held: the busy client's next waits for it,
            // not for the main pool's, and a quiet request for the main
            // pool's only.
            let next_busy = tokio::spawn({
                let gate = gate.clone();
                async move { gate.enter(busy).await.unwrap().pool() }
            });
            let next_quiet = tokio::spawn({
                let gate = gate.clone();
                async move { gate.enter(quiet).await.unwrap().pool() }
            });
            tokio::task::yield_now().await;
            assert!(!next_busy.is_finished() && !next_quiet.is_finished());
            main.done(Duration::ZERO);
            assert_eq!(next_quiet.await.unwrap(), Pool::Main, "a quiet request takes the main pool's permit");
            assert!(!next_busy.is_finished(), "a busy one does not");
            apart.done(Duration::ZERO);
            assert_eq!(next_busy.await.unwrap(), Pool::Apart);
        });
    }

    #[test]
    fn free_permits_are_taken_at_once_and_a_flood_fills_its_own_line() {
        let gate = Gate::new(2, 1, 6, 3).unwrap();
        runtime().block_on(async {
            let (flood, calm) = (group("198.51.100.1"), group("198.51.100.2"));
            let a = gate.enter(flood).await.unwrap();
            let b = gate.enter(flood).await.unwrap();
            assert_eq!(gate.lock().waiting, 0, "two permits, taken without waiting");
            let mut waiting = Vec::new();
            for _ in 0..3 {
                let gate = gate.clone();
                waiting.push(tokio::spawn(async move { gate.enter(flood).await.map(|p| p.done(Duration::ZERO)) }));
                tokio::task::yield_now().await;
            }
            assert_eq!(gate.enter(flood).await.err(), Some(Refused::Full), "one client's share is full");
            for _ in 0..3 {
                let gate = gate.clone();
                waiting.push(tokio::spawn(async move { gate.enter(calm).await.map(|p| p.done(Duration::ZERO)) }));
                tokio::task::yield_now().await;
            }
            assert_eq!(gate.enter(group("198.51.100.3")).await.err(), Some(Refused::Full), "the queue is full");
            drop((a, b));
            for w in waiting {
                assert!(w.await.unwrap().is_ok());
            }
            let state = gate.lock();
            assert_eq!((state.held, state.waiting), (0, 0));
            assert!(state.quiet.lines.is_empty() && state.quiet.turns.is_empty(), "served lines are forgotten");
        });
    }

    #[test]
    fn a_waiter_that_gave_up_passes_its_turn_on_and_a_closed_gate_refuses() {
        let gate = Gate::new(1, 1, 10, 10).unwrap();
        runtime().block_on(async {
            let held = gate.enter(group("192.0.2.1")).await.unwrap();
            let gave_up = {
                let gate = gate.clone();
                tokio::spawn(async move { gate.enter(group("192.0.2.2")).await.is_ok() })
            };
            tokio::task::yield_now().await;
            gave_up.abort();
            let next = {
                let gate = gate.clone();
                tokio::spawn(async move { gate.enter(group("192.0.2.3")).await.is_ok() })
            };
            tokio::task::yield_now().await;
            drop(held);
            assert!(next.await.unwrap(), "the next in turn got the permit");
            gate.close();
            assert_eq!(gate.enter(group("192.0.2.4")).await.err(), Some(Refused::Closed));
        });
    }

    #[test]
    fn a_client_whose_requests_take_much_cpu_is_busy_until_its_time_decays() {
        let gate = Gate::new(1, 1, 10, 10).unwrap();
        let (pages, votes) = (group("192.0.2.7"), group("192.0.2.8"));
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let charge = |g: ClientGroup, cpu: Duration, when: Instant| {
            let key = gate.key(&g);
            gate.lock().spent.charge(key, cpu, when);
        };
        let lane = |g: ClientGroup, when: Instant| gate.lock().spent.lane(&gate.key(&g), when);
        // 200 small votes in a second (80 µs each, as measured: 16 ms) leave
        // a client quiet; 6 big pages in 0.06 s (8 ms each: 48 ms) make it
        // busy from the fourth on (32 ms).
        for i in 0..200 {
            charge(votes, Duration::from_micros(80), at(i * 5));
            assert_eq!(lane(votes, at(i * 5)), Lane::Quiet, "vote {i}");
        }
        let lanes: Vec<Lane> = (0..6)
            .map(|i| {
                let l = lane(pages, at(i * 10));
                charge(pages, Duration::from_millis(8), at(i * 10));
                l
            })
            .collect();
        assert_eq!(lanes.iter().position(|l| *l == Lane::Busy), Some(4), "busy once past BUSY_FROM: {lanes:?}");
        // Still busy right after; a half-life later, about 23 ms of its
        // 47 are left: quiet again.
        assert_eq!(lane(pages, at(60)), Lane::Busy);
        assert_eq!(lane(pages, at(60) + HALF_LIFE), Lane::Quiet, "decayed by half");
    }

    #[test]
    fn the_cpu_time_of_a_request_counts_against_its_client() {
        let gate = Gate::new(1, 1, 10, 10).unwrap();
        let g = group("192.0.2.3");
        runtime().block_on(async {
            gate.enter(g).await.unwrap().done(BUSY_FROM * 2);
        });
        assert_eq!(gate.lane_of(g), Lane::Busy);
        assert_eq!(gate.lane_of(group("192.0.2.4")), Lane::Quiet);
    }

    #[test]
    fn the_cpu_time_of_clients_gone_quiet_is_forgotten() {
        let gate = Gate::new(1, 1, 10, 10).unwrap();
        let t0 = Instant::now();
        let ip = |n: u32| ClientGroup::of(IpAddr::V4(std::net::Ipv4Addr::from(n)));
        let charge = |g: ClientGroup, cpu: Duration, when: Instant| {
            let key = gate.key(&g);
            gate.lock().spent.charge(key, cpu, when);
        };
        // A table that doubles is swept at once: 3,000 groups at the same
        // instant stay (none decayed).
        for i in 0..3000u32 {
            charge(ip(0x0a00_0000 + i), Duration::from_secs(60), t0);
        }
        assert_eq!(gate.lock().spent.groups.len(), 3000, "each group counted once");
        // Gone within FORGOTTEN_WITHIN, even after a minute of CPU each.
        let later = t0 + FORGOTTEN_WITHIN;
        gate.lock().spent.sweep_if_due(later);
        assert_eq!(gate.lock().spent.groups.len(), 0, "every group forgotten");
        charge(ip(0x0b00_0001), Duration::from_millis(5), later);
        gate.lock().spent.sweep_if_due(later + SWEEP_EVERY / 2);
        assert_eq!(gate.lock().spent.groups.len(), 1, "a group seen just now is kept");
        gate.lock().spent.sweep_if_due(later + FORGOTTEN_WITHIN);
        assert_eq!(gate.lock().spent.groups.len(), 0);
    }

    #[test]
    fn the_cpu_time_is_kept_under_a_key_of_this_process_only() {
        let (first, second) = (Gate::new(1, 1, 1, 1).unwrap(), Gate::new(1, 1, 1, 1).unwrap());
        let g = group("192.0.2.9");
        assert_eq!(first.key(&g), first.key(&g));
        assert_ne!(first.key(&g), second.key(&g), "a random key per gate: the key is not the address's");
    }

    /// Nobody calls the gate, and a client's CPU time is forgotten all the
    /// same, by the server's sweeping task.
    #[test]
    fn an_idle_gate_is_swept() {
        let gate = Gate::new(1, 1, 1, 1).unwrap();
        gate.charge(group("192.0.2.10"), Duration::from_millis(2));
        assert_eq!(gate.lock().spent.groups.len(), 1);
        runtime().block_on(async {
            let sweeping = tokio::spawn(Gate::sweep_for_ever([gate.clone(), Gate::new(1, 1, 1, 1).unwrap()]));
            // 2 ms is under a millisecond after one half-life; the sweep
            // comes within SWEEP_EVERY after that.
            tokio::time::sleep(HALF_LIFE + SWEEP_EVERY + Duration::from_millis(500)).await;
            sweeping.abort();
        });
        assert_eq!(gate.lock().spent.groups.len(), 0, "forgotten without a request");
    }
}
