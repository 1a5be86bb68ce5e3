//! The workers' queue, fair between clients, and light work first.
//!
//! Why: requests wait for a worker in one queue. First come, first served,
//! a few clients that keep many connections busy (the second outside audit:
//! 6 addresses x 8 connections hammering a heavy poll) fill it, and every
//! other client's request waits behind all of theirs (issue 24, item 4). Here
//! each client group ([`ClientGroup`]: an IPv4 address or an IPv6 /64) has
//! its own line, and the workers take from the lines in turn: a client with
//! one request waits for at most one request of each other client, however
//! many they queued.
//!
//! Turns in a queue are not enough where the CPU is what is short: the
//! workers that took a heavy client's requests share the cores with the one
//! that took a light client's, and the kernel gives each thread its slice, so
//! the light request waits for many heavy ones all the same. So each request
//! goes into one of two lanes ([`Lane`]) by the CPU time its client group's
//! requests took of late (each worker reports it as it takes its next, [`Receiver::recv_after`]): past
//! [`BUSY_FROM`], decaying with a half-life of [`HALF_LIFE`], the group is
//! busy, else quiet. Counting CPU rather than requests tells a client sending
//! many small votes from a client that has the server render big pages for
//! it. The server's quiet workers take only quiet requests and run at the
//! process's priority; its busy workers are few and run at a lower one
//! (`server/workers.rs`), so the kernel gives a quiet request the CPU first
//! and the busy clients what is left. A busy worker also takes a quiet
//! request when no quiet worker is free (or about to wake for it), so a
//! quiet request never waits while any worker is idle; a busy request waits
//! for a busy worker even while quiet ones are idle, which is the point.
//!
//! Promises:
//! - bounded: at most `capacity` requests wait in all, and one client group
//!   at most `per_group`; past either, [`Sender::try_send`] refuses at once
//!   (the caller answers 503), so one client's flood fills its own line and
//!   not the queue;
//! - within a client group and a lane, first come, first served;
//! - the client groups' lines live only while they have requests waiting,
//!   in memory, never written anywhere; their CPU time is kept in memory
//!   under a keyed hash (`keyed::Secret`), never the address, and forgotten
//!   once under a millisecond, within [`FORGOTTEN_WITHIN`] of the group's
//!   last request, on an idle server too (an idle quiet worker sweeps);
//! - like a channel: [`Receiver::recv`] blocks until a request comes, and
//!   answers `None` once every [`Sender`] is gone and nothing is left.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ClientGroup;
use crate::keyed::{Key, Secret};

/// A client group whose requests took more than this CPU time (decayed) is
/// busy: sustained, about 17 ms of CPU a second. A share page takes a
/// millisecond or less to render (the largest, 20 rankings of 12 options,
/// half a millisecond), so a person is far below; a class behind one
/// address opening a big page at once may be busy for a second or two,
/// which only puts them after the others while the CPU is short; a client
/// that keeps the server rendering big pages for it from many connections
/// is busy for as long as it does. Low, because until a group passes it,
/// its requests run on the quiet workers beside everyone else's: at 100 ms,
/// 48 connections of 6 groups held the quiet workers for their first
/// second, and that second held most of the small poll's slow votes
/// (issue 24, item 4; bench/results/2026-11-28-issue24-ninth).
pub const BUSY_FROM: Duration = Duration::from_millis(25);

/// A client group's CPU time counts half after this time.
pub const HALF_LIFE: Duration = Duration::from_secs(1);

/// A group's CPU time is dropped once decayed under this.
const FORGET_UNDER: Duration = Duration::from_millis(1);

/// How often the table of CPU times is swept at least (when a request is
/// reported, or by an idle quiet worker).
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// A group is forgotten within this time of its last request: enough half
/// lives to fall from a minute of CPU under `FORGET_UNDER`, and a sweep.
pub const FORGOTTEN_WITHIN: Duration = Duration::from_secs(16 + 5);

/// Which requests a worker takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Requests of client groups under [`BUSY_FROM`].
    Quiet,
    /// Requests of busy client groups, and quiet ones when no quiet worker
    /// is free.
    Busy,
}

/// Why a request was not queued; it comes back to the caller.
#[derive(Debug)]
pub enum TrySendError<T> {
    /// The queue, or this client's line, is full.
    Full(T),
    /// No worker takes requests any more.
    Disconnected(T),
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

struct State<T> {
    /// Each request with its client group's key in `spent`.
    quiet: Lines<(Key, T)>,
    busy: Lines<(Key, T)>,
    spent: Spent,
    waiting: usize,
    /// Quiet workers waiting for a request.
    idle_quiet: usize,
    /// Of those, the ones signalled for a request and not yet awake: a
    /// quiet request goes to a busy worker unless a quiet one is idle and
    /// not already called for another.
    called_quiet: usize,
    senders: usize,
    receivers: usize,
}

impl<T> State<T> {
    fn take(&mut self, lane: Lane) -> Option<(T, Done)> {
        let draining = self.senders == 0;
        let (quiet, busy) = (&mut self.quiet, &mut self.busy);
        let taken = match lane {
            Lane::Quiet if !draining => quiet.pop(),
            // A busy worker leaves a quiet request to a free quiet worker,
            // and once the senders are gone, anyone drains anything.
            Lane::Busy if !draining && self.idle_quiet > self.called_quiet => busy.pop(),
            _ => busy.pop().or_else(|| quiet.pop()),
        };
        let (key, item) = taken?;
        self.waiting -= 1;
        Some((item, Done { key }))
    }
}

/// What a worker gives back with [`Receiver::recv_after`] once it answered.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    key: Key,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Keys the CPU times; used outside the lock.
    secret: Secret,
    /// Signals quiet workers.
    quiet_arrived: Condvar,
    /// Signals busy workers.
    busy_arrived: Condvar,
    capacity: usize,
    per_group: usize,
}

impl<T> Inner<T> {
    /// The key `group`'s CPU time is kept under: once per request, carried
    /// to its [`Done`].
    fn key(&self, group: &ClientGroup) -> Key {
        self.secret.tag(&[group.as_bytes()])
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Each change is a few pushes and pops: the state stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Queues requests (connection tasks hold clones).
pub struct Sender<T>(Arc<Inner<T>>);

/// Takes requests (the workers share it).
pub struct Receiver<T>(Arc<Inner<T>>);

/// A queue of at most `capacity` waiting requests, `per_group` of them from
/// one client group (both at least 1).
pub fn channel<T>(capacity: usize, per_group: usize) -> anyhow::Result<(Sender<T>, Receiver<T>)> {
    let capacity = capacity.max(1);
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            quiet: Lines::new(),
            busy: Lines::new(),
            spent: Spent { groups: HashMap::new(), swept: (0, Instant::now()) },
            waiting: 0,
            idle_quiet: 0,
            called_quiet: 0,
            senders: 1,
            receivers: 1,
        }),
        secret: Secret::generate()?,
        quiet_arrived: Condvar::new(),
        busy_arrived: Condvar::new(),
        capacity,
        per_group: per_group.clamp(1, capacity),
    });
    Ok((Sender(inner.clone()), Receiver(inner)))
}

impl<T> Sender<T> {
    /// Queues `item` in `group`'s line, or gives it back at once.
    pub fn try_send(&self, group: ClientGroup, item: T) -> Result<(), TrySendError<T>> {
        self.send_at(group, item, Instant::now()).map(|_| ())
    }

    /// [`Self::try_send`] at `now`; the lane the item went to.
    fn send_at(&self, group: ClientGroup, item: T, now: Instant) -> Result<Lane, TrySendError<T>> {
        let key = self.0.key(&group);
        let mut state = self.0.lock();
        if state.receivers == 0 {
            return Err(TrySendError::Disconnected(item));
        }
        if state.waiting >= self.0.capacity
            || state.quiet.len_of(&group) + state.busy.len_of(&group) >= self.0.per_group
        {
            return Err(TrySendError::Full(item));
        }
        let lane = state.spent.lane(&key, now);
        match lane {
            Lane::Quiet => state.quiet.push(group, (key, item)),
            Lane::Busy => state.busy.push(group, (key, item)),
        }
        state.waiting += 1;
        // Call a quiet worker that is idle and not yet called for another
        // request; else a busy one.
        let call_quiet = lane == Lane::Quiet && state.idle_quiet > state.called_quiet;
        if call_quiet {
            state.called_quiet += 1;
        }
        drop(state);
        if call_quiet {
            self.0.quiet_arrived.notify_one();
        } else {
            self.0.busy_arrived.notify_one();
        }
        Ok(lane)
    }
}

#[cfg(test)]
impl<T> Sender<T> {
    /// The lane `group`'s next request would go to.
    pub fn lane_of(&self, group: ClientGroup) -> Lane {
        let key = self.0.key(&group);
        self.0.lock().spent.lane(&key, Instant::now())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders -= 1;
        if state.senders == 0 {
            drop(state);
            // Waiting workers see that nothing more will come.
            self.0.quiet_arrived.notify_all();
            self.0.busy_arrived.notify_all();
        }
    }
}

impl<T> Receiver<T> {
    /// The next request for a worker of `lane`, taking the client groups in
    /// turn; blocks until one comes. `None` once every sender is gone and
    /// nothing is left.
    pub fn recv(&self, lane: Lane) -> Option<(T, Done)> {
        self.recv_after(lane, None)
    }

    /// [`Self::recv`] for a worker that has just answered a request: its
    /// [`Done`] and the CPU time it took, which counts against its client
    /// group, under the same lock as the taking of the next.
    pub fn recv_after(&self, lane: Lane, finished: Option<(Done, Duration)>) -> Option<(T, Done)> {
        let mut state = self.0.lock();
        if let Some((done, cpu)) = finished {
            state.spent.charge(done.key, cpu, Instant::now());
        }
        loop {
            if let Some(taken) = state.take(lane) {
                return Some(taken);
            }
            if state.senders == 0 {
                return None;
            }
            state = match lane {
                Lane::Quiet => {
                    state.idle_quiet += 1;
                    let (mut s, woke) =
                        self.0.quiet_arrived.wait_timeout(state, SWEEP_EVERY).unwrap_or_else(PoisonError::into_inner);
                    s.idle_quiet -= 1;
                    // A call is spent by the worker it woke. A worker that
                    // timed out leaves the count as it is: counting a call
                    // too many only lets a busy worker take a quiet request
                    // sooner, too few would leave one waiting.
                    if !woke.timed_out() {
                        s.called_quiet = s.called_quiet.saturating_sub(1);
                    }
                    s.called_quiet = s.called_quiet.min(s.idle_quiet);
                    // An idle server forgets its clients all the same.
                    s.spent.sweep_if_due(Instant::now());
                    s
                }
                Lane::Busy => self.0.busy_arrived.wait(state).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.0.lock().receivers -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn group(s: &str) -> ClientGroup {
        ClientGroup::of(s.parse::<IpAddr>().unwrap())
    }

    /// The next request for a worker of `lane`, without its receipt.
    fn next<T>(rx: &Receiver<T>, lane: Lane) -> Option<T> {
        rx.recv(lane).map(|(item, _)| item)
    }

    /// Counts `cpu` against `group` at `when`.
    fn charge<T>(rx: &Receiver<T>, group: ClientGroup, cpu: Duration, when: Instant) {
        let key = rx.0.key(&group);
        rx.0.lock().spent.charge(key, cpu, when);
    }

    /// Makes `group` busy: its requests took `BUSY_FROM` and a bit, now.
    fn make_busy<T>(rx: &Receiver<T>, group: ClientGroup) {
        charge(rx, group, BUSY_FROM + Duration::from_millis(1), Instant::now());
    }

    #[test]
    fn clients_are_served_in_turn_and_each_in_order() {
        let (tx, rx) = channel(100, 100).unwrap();
        let (heavy, light, other) = (group("192.0.2.1"), group("192.0.2.2"), group("2001:db8::1"));
        for i in 0..5 {
            tx.try_send(heavy, ("heavy", i)).unwrap();
        }
        tx.try_send(light, ("light", 0)).unwrap();
        tx.try_send(other, ("other", 0)).unwrap();
        tx.try_send(light, ("light", 1)).unwrap();
        let order: Vec<_> = (0..8).map(|_| next(&rx, Lane::Quiet).unwrap()).collect();
        assert_eq!(
            order,
            [
                ("heavy", 0),
                ("light", 0),
                ("other", 0),
                ("heavy", 1),
                ("light", 1),
                ("heavy", 2),
                ("heavy", 3),
                ("heavy", 4)
            ],
            "one of each client in turn, each client's own first come first served"
        );
        // A /64 is one client.
        tx.try_send(group("2001:db8::2"), ("other", 1)).unwrap();
        tx.try_send(group("2001:db8::3"), ("other", 2)).unwrap();
        assert_eq!(next(&rx, Lane::Quiet), Some(("other", 1)));
        assert_eq!(next(&rx, Lane::Quiet), Some(("other", 2)));
    }

    #[test]
    fn a_flood_fills_its_own_line_not_the_queue() {
        let (tx, rx) = channel(10, 4).unwrap();
        let (flood, calm) = (group("198.51.100.1"), group("198.51.100.2"));
        for i in 0..2 {
            tx.try_send(flood, i).unwrap();
        }
        // Its line counts both lanes.
        make_busy(&rx, flood);
        for i in 2..4 {
            tx.try_send(flood, i).unwrap();
        }
        assert!(matches!(tx.try_send(flood, 4), Err(TrySendError::Full(4))), "one client's share is full");
        for i in 0..4 {
            tx.try_send(calm, 10 + i).unwrap();
        }
        tx.try_send(group("198.51.100.3"), 20).unwrap();
        tx.try_send(group("198.51.100.4"), 30).unwrap();
        assert!(matches!(tx.try_send(group("198.51.100.5"), 40), Err(TrySendError::Full(40))), "the queue is full");
        assert_eq!(next(&rx, Lane::Quiet), Some(0));
        tx.try_send(group("198.51.100.5"), 40).unwrap();
        // Served lines are forgotten.
        while rx.0.lock().waiting > 0 {
            next(&rx, Lane::Busy).unwrap();
        }
        let state = rx.0.lock();
        assert!(state.quiet.lines.is_empty() && state.quiet.turns.is_empty());
        assert!(state.busy.lines.is_empty() && state.busy.turns.is_empty());
    }

    #[test]
    fn workers_stop_once_every_sender_is_gone_and_the_queue_is_empty() {
        let (tx, rx) = channel(100, 100).unwrap();
        make_busy(&rx, group("192.0.2.8"));
        let rx = Arc::new(rx);
        let workers: Vec<_> = [Lane::Quiet, Lane::Quiet, Lane::Busy]
            .into_iter()
            .map(|lane| {
                let rx = rx.clone();
                std::thread::spawn(move || {
                    let mut got = 0;
                    while rx.recv(lane).is_some() {
                        got += 1;
                    }
                    got
                })
            })
            .collect();
        let second = tx.clone();
        for i in 0..6 {
            second.try_send(group("192.0.2.9"), i).unwrap();
            second.try_send(group("192.0.2.8"), 10 + i).unwrap();
        }
        drop(second);
        drop(tx);
        let total: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(total, 12, "everything queued, in both lanes, is taken before the workers stop");
    }

    #[test]
    fn without_workers_nothing_is_queued() {
        let (tx, rx) = channel(10, 10).unwrap();
        drop(rx);
        assert!(matches!(tx.try_send(group("192.0.2.1"), 1), Err(TrySendError::Disconnected(1))));
    }

    #[test]
    fn a_client_whose_requests_take_much_cpu_is_busy_until_its_time_decays() {
        let (tx, rx) = channel(10_000, 10_000).unwrap();
        let (pages, votes) = (group("192.0.2.7"), group("192.0.2.8"));
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let charge = |g: ClientGroup, cpu: Duration, when: Instant| charge(&rx, g, cpu, when);
        // 200 small votes in a second (80 µs each, as measured: 16 ms) leave
        // a client quiet; 6 big pages in 0.06 s (8 ms each: 48 ms) make it
        // busy from the fourth on (32 ms).
        for i in 0..200 {
            charge(votes, Duration::from_micros(80), at(i * 5));
            assert_eq!(tx.send_at(votes, i, at(i * 5)).unwrap(), Lane::Quiet, "vote {i}");
        }
        let lanes: Vec<Lane> = (0..6)
            .map(|i| {
                let lane = tx.send_at(pages, 5000 + i, at(i * 10)).unwrap();
                charge(pages, Duration::from_millis(8), at(i * 10));
                lane
            })
            .collect();
        let first_busy = lanes.iter().position(|l| *l == Lane::Busy).expect("busy at last");
        assert_eq!(first_busy, 4, "busy once past BUSY_FROM: {lanes:?}");
        assert!(lanes[first_busy..].iter().all(|l| *l == Lane::Busy));
        // Still busy right after; a half-life later, about 23 ms of its
        // 47 are left: quiet again.
        assert_eq!(tx.send_at(pages, 9000, at(60)).unwrap(), Lane::Busy);
        assert_eq!(tx.send_at(pages, 9001, at(60) + HALF_LIFE).unwrap(), Lane::Quiet, "decayed by half");
    }

    #[test]
    fn a_quiet_worker_takes_only_quiet_requests_and_a_busy_one_both() {
        let (tx, rx) = channel(100, 100).unwrap();
        let (busy, quiet) = (group("192.0.2.1"), group("192.0.2.2"));
        make_busy(&rx, busy);
        tx.try_send(busy, "busy").unwrap();
        tx.try_send(quiet, "quiet").unwrap();
        assert_eq!(rx.0.lock().take(Lane::Quiet).map(|(i, _)| i), Some("quiet"));
        assert_eq!(rx.0.lock().take(Lane::Quiet).map(|(i, _)| i), None, "a busy request waits for a busy worker");
        assert_eq!(next(&rx, Lane::Busy), Some("busy"));
        // A busy worker takes a quiet request only when no quiet worker is
        // free: one idle quiet worker is called for the first of two quiet
        // requests, and the second is a busy worker's.
        rx.0.lock().idle_quiet = 1;
        tx.try_send(quiet, "quiet 2").unwrap();
        assert_eq!(rx.0.lock().called_quiet, 1, "the idle quiet worker is called");
        tx.try_send(quiet, "quiet 3").unwrap();
        assert_eq!(rx.0.lock().called_quiet, 1, "and called once");
        assert_eq!(rx.0.lock().take(Lane::Busy).map(|(i, _)| i), Some("quiet 2"), "no free quiet worker is left");
        rx.0.lock().called_quiet = 0;
        assert_eq!(rx.0.lock().take(Lane::Busy).map(|(i, _)| i), None, "left to the free quiet worker");
        rx.0.lock().idle_quiet = 0;
        assert_eq!(next(&rx, Lane::Quiet), Some("quiet 3"));
        // And with real threads: a quiet worker waiting gets the request.
        let rx = Arc::new(rx);
        let (got, waiting) = std::sync::mpsc::channel();
        {
            let rx = rx.clone();
            std::thread::spawn(move || got.send(next(&rx, Lane::Quiet)));
        }
        while rx.0.lock().idle_quiet == 0 {
            std::thread::yield_now();
        }
        tx.try_send(quiet, "quiet 4").unwrap();
        assert_eq!(waiting.recv_timeout(Duration::from_secs(10)), Ok(Some("quiet 4")), "the quiet worker was woken");
    }

    #[test]
    fn the_cpu_time_of_a_request_counts_against_its_client() {
        let (tx, rx) = channel(10, 10).unwrap();
        let g = group("192.0.2.3");
        tx.try_send(g, ()).unwrap();
        let ((), done) = rx.recv(Lane::Quiet).unwrap();
        tx.try_send(group("192.0.2.4"), ()).unwrap();
        assert!(rx.recv_after(Lane::Quiet, Some((done, BUSY_FROM * 2))).is_some());
        tx.try_send(g, ()).unwrap();
        assert_eq!(rx.0.lock().busy.len_of(&g), 1, "the next request of the client is busy");
        assert_eq!(rx.0.lock().quiet.len_of(&group("192.0.2.4")), 0);
    }

    #[test]
    fn the_cpu_time_of_clients_gone_quiet_is_forgotten() {
        let (_tx, rx) = channel::<()>(10, 10).unwrap();
        let t0 = Instant::now();
        let ip = |n: u32| ClientGroup::of(IpAddr::V4(std::net::Ipv4Addr::from(n)));
        // A table that doubles is swept at once: 3,000 groups at the same
        // instant stay (none decayed), and so on each doubling.
        for i in 0..3000u32 {
            charge(&rx, ip(0x0a00_0000 + i), Duration::from_secs(60), t0);
        }
        assert_eq!(rx.0.lock().spent.groups.len(), 3000, "each group counted once");
        // On a quiet server, a few groups: gone within FORGOTTEN_WITHIN, even
        // after a minute of CPU each, by the sweep of an idle worker.
        let later = t0 + FORGOTTEN_WITHIN;
        rx.0.lock().spent.sweep_if_due(later);
        assert_eq!(rx.0.lock().spent.groups.len(), 0, "every group forgotten");
        charge(&rx, ip(0x0b00_0001), Duration::from_millis(5), later);
        rx.0.lock().spent.sweep_if_due(later + SWEEP_EVERY / 2);
        assert_eq!(rx.0.lock().spent.groups.len(), 1, "a group seen just now is kept");
        rx.0.lock().spent.sweep_if_due(later + FORGOTTEN_WITHIN);
        assert_eq!(rx.0.lock().spent.groups.len(), 0);
    }

    #[test]
    fn an_idle_quiet_worker_sweeps_the_table() {
        let (tx, rx) = channel::<()>(10, 10).unwrap();
        let old = Instant::now().checked_sub(FORGOTTEN_WITHIN * 2).unwrap();
        charge(&rx, group("192.0.2.6"), Duration::from_millis(5), old);
        rx.0.lock().spent.swept.1 = old;
        let rx = Arc::new(rx);
        let worker = {
            let rx = rx.clone();
            std::thread::spawn(move || rx.recv(Lane::Quiet).is_none())
        };
        // Wait for the worker's timed wake (SWEEP_EVERY), at most twice that.
        let deadline = Instant::now() + SWEEP_EVERY * 3;
        while !rx.0.lock().spent.groups.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(rx.0.lock().spent.groups.is_empty(), "the idle worker swept the decayed group");
        drop(tx);
        assert!(worker.join().unwrap());
    }

    #[test]
    fn the_cpu_time_is_kept_under_a_key_of_this_process_only() {
        let (_, first) = channel::<()>(10, 10).unwrap();
        let (_, second) = channel::<()>(10, 10).unwrap();
        let g = group("192.0.2.9");
        assert_eq!(first.0.key(&g), first.0.key(&g));
        assert_ne!(first.0.key(&g), second.0.key(&g), "a random key per queue: the key is not the address's");
    }
}
