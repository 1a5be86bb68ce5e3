//! The vote throttle: a budget of N responses per poll per client that
//! refills at N per window, to blunt scripted ballot stuffing.
//!
//! What the limit means: a client may send up to N responses to a poll at
//! once; each one spent comes back after window / N (6 s at the default 100
//! per 10 minutes), so an emptied budget is whole again one window after its
//! last use. Over any span of time T, a client gets at most N + N × T / window
//! responses in. A refilling budget rather than a rolling window: it needs
//! one small entry per client and poll instead of one instant per response.
//!
//! Why this shape: a classroom or an office answers from one address (NAT),
//! so the limit must be generous and it only slows a script down; the
//! one-time ballot tokens (`ballot.rs`) do the rest.
//!
//! The same budget can count work instead of responses, per client over
//! all polls ([`VoteThrottle::spend`]): the pace of `none` polls is counted
//! in the counters their ballots add, so that a heavy poll's ballots take
//! their share of the single writer and not all of it
//! (`app::PACE_PER_SECOND`).
//!
//! Privacy: a client is known here only as HMAC-SHA256(key, client group ‖
//! poll id) (for the work budget, of the client group alone) truncated to
//! 128 bits, with a random key that lives in memory for
//! one window and is dropped with its entries after the next one (by then
//! every budget it keyed is whole again, so forgetting it changes nothing).
//! Nothing is written anywhere.

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ClientGroup;
use crate::keyed::Generations;
use crate::secret::PollId;

/// Distinct (client, poll) pairs tracked per window; past it, new pairs are
/// refused until the next window, so memory stays bounded under a flood.
pub const MAX_TRACKED: usize = 500_000;

/// What is left of one client's budget for one poll, as of `at`.
#[derive(Clone, Copy)]
struct Budget {
    left: f64,
    at: Instant,
}

type State = Generations<Budget>;

pub struct VoteThrottle {
    limit: u32,
    window: Duration,
    state: Mutex<State>,
}

impl VoteThrottle {
    pub fn new(limit: u32, window: Duration) -> anyhow::Result<VoteThrottle> {
        let window = window.max(Duration::from_secs(1));
        Ok(VoteThrottle { limit, window, state: Mutex::new(Generations::new(window, Instant::now())?) })
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// How long one spent response takes to come back (window / N).
    pub fn refill(&self) -> Duration {
        self.window / self.limit.max(1)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation is a single insert: the data stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Rotates windows by the clock alone, so that on a quiet server, too,
    /// keys and budgets go when their time is up (called by a timer).
    pub fn tick(&self) {
        self.lock().rotate(Instant::now());
    }

    /// Spends one response of `ip`'s budget for `poll`, or refuses it.
    pub fn admit(&self, ip: IpAddr, poll: &PollId) -> bool {
        self.admit_at(ip, poll, Instant::now())
    }

    pub fn admit_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> bool {
        let group = ClientGroup::of(ip);
        self.take(&[group.as_bytes(), poll.as_str().as_bytes()], 1, now)
    }

    /// Spends `cost` units of `ip`'s budget over all polls (a budget
    /// counted in the writer's work rather than in responses), or refuses
    /// it; a cost above the whole budget is charged as the whole budget, so
    /// that it passes when the budget is full.
    pub fn spend(&self, ip: IpAddr, cost: u32) -> bool {
        self.spend_at(ip, cost, Instant::now())
    }

    pub fn spend_at(&self, ip: IpAddr, cost: u32, now: Instant) -> bool {
        self.take(&[ClientGroup::of(ip).as_bytes()], cost, now)
    }

    /// Whether `ip` has one response left of its budget for `poll`,
    /// without spending it.
    pub fn has_room(&self, ip: IpAddr, poll: &PollId) -> bool {
        self.has_room_at(ip, poll, Instant::now())
    }

    pub fn has_room_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> bool {
        let group = ClientGroup::of(ip);
        let parts: &[&[u8]] = &[group.as_bytes(), poll.as_str().as_bytes()];
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        self.left(&state, parts, &key, now).1 >= 1.0
    }

    /// The budget keyed by `parts` (`key` in the current generation): as
    /// last stored in this generation, and what is left of it at `now`.
    fn left(&self, state: &State, parts: &[&[u8]], key: &crate::keyed::Key, now: Instant) -> (Option<Budget>, f64) {
        let known = state.current.entries.get(key).copied();
        // A budget last touched in the previous generation carries over; one
        // older than that is whole again anyway.
        let last = known.or_else(|| state.previous.as_ref().and_then(|p| p.entries.get(&p.key(parts)).copied()));
        let limit = f64::from(self.limit);
        let window = self.window.as_secs_f64();
        let left = last.map_or(limit, |b| {
            (b.left + now.saturating_duration_since(b.at).as_secs_f64() * limit / window).min(limit)
        });
        (known, left)
    }

    /// Takes `cost` from the budget keyed by `parts`.
    fn take(&self, parts: &[&[u8]], cost: u32, now: Instant) -> bool {
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        let (known, left) = self.left(&state, parts, &key, now);
        let cost = f64::from(cost.clamp(1, self.limit.max(1)));
        if left < cost {
            return false;
        }
        if known.is_none() && state.current.entries.len() >= MAX_TRACKED {
            return false;
        }
        state.current.entries.insert(key, Budget { left: left - cost, at: now });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn ip(s: &str) -> IpAddr {
        IpAddr::from_str(s).unwrap()
    }

    #[test]
    fn the_budget_is_per_client_and_per_poll_and_refills_over_windows() {
        let window = Duration::from_secs(600);
        let t = VoteThrottle::new(3, window).unwrap();
        let t0 = t.lock().current.started;
        let at = |s: u64| t0 + Duration::from_secs(s);
        let (a, b) = (PollId::parse("AAAAAAAAAAAAAAAA").unwrap(), PollId::parse("BBBBBBBBBBBBBBBB").unwrap());
        for _ in 0..3 {
            assert!(t.admit_at(ip("192.0.2.1"), &a, t0));
        }
        assert!(!t.admit_at(ip("192.0.2.1"), &a, t0), "fourth vote refused");
        assert!(t.admit_at(ip("192.0.2.1"), &b, t0), "another poll is counted apart");
        assert!(t.admit_at(ip("192.0.2.2"), &a, t0), "another client is counted apart");
        // One response comes back every window / 3 = 200 s, across rotations.
        assert!(!t.admit_at(ip("192.0.2.1"), &a, at(199)));
        assert!(t.admit_at(ip("192.0.2.1"), &a, at(200)));
        assert!(!t.admit_at(ip("192.0.2.1"), &a, at(201)));
        assert!(t.admit_at(ip("192.0.2.1"), &a, at(400)));
        assert!(t.admit_at(ip("192.0.2.1"), &a, at(600)), "the generation rotated; the budget carried over");
        assert!(!t.admit_at(ip("192.0.2.1"), &a, at(700)));
        assert!(t.admit_at(ip("192.0.2.1"), &a, at(800)));
        // A whole window after its last use, the budget is whole again.
        for _ in 0..3 {
            assert!(t.admit_at(ip("192.0.2.1"), &a, at(1400)));
        }
        assert!(!t.admit_at(ip("192.0.2.1"), &a, at(1400)));
        // Long after, everything is forgotten, keys included.
        assert!(t.admit_at(ip("192.0.2.1"), &a, at(5000)));
        assert!(t.lock().previous.is_none());
        assert_eq!(t.lock().current.entries.len(), 1);
    }

    #[test]
    fn a_budget_of_work_is_spent_by_cost_and_refills_by_cost() {
        // 1,000 units a second: a ballot of 400 counters twice, not three times.
        let t = VoteThrottle::new(1_000, Duration::from_secs(1)).unwrap();
        let t0 = t.lock().current.started;
        assert!(t.spend_at(ip("192.0.2.1"), 400, t0));
        assert!(t.spend_at(ip("192.0.2.1"), 400, t0));
        assert!(!t.spend_at(ip("192.0.2.1"), 400, t0), "only 200 left");
        assert!(t.spend_at(ip("192.0.2.1"), 200, t0), "what is left is spent by a smaller one");
        assert!(t.spend_at(ip("192.0.2.2"), 400, t0), "another client is counted apart");
        // One budget per client, not per poll: the votes' budget of the same
        // client and a poll is another entry.
        let a = PollId::parse("AAAAAAAAAAAAAAAA").unwrap();
        assert!(t.admit_at(ip("192.0.2.1"), &a, t0));
        assert!(!t.spend_at(ip("192.0.2.1"), 1, t0), "nothing left of the work budget");
        // 400 come back in 0.4 s.
        assert!(!t.spend_at(ip("192.0.2.1"), 400, t0 + Duration::from_millis(399)));
        assert!(t.spend_at(ip("192.0.2.1"), 400, t0 + Duration::from_millis(800)));
        // A cost above the whole budget passes once the budget is whole.
        assert!(t.spend_at(ip("192.0.2.3"), 5_000, t0));
        assert!(!t.spend_at(ip("192.0.2.3"), 5_000, t0 + Duration::from_millis(999)));
        assert!(t.spend_at(ip("192.0.2.3"), 5_000, t0 + Duration::from_secs(1)));
    }

    #[test]
    fn ipv6_clients_are_grouped_by_64() {
        let t = VoteThrottle::new(1, Duration::from_secs(600)).unwrap();
        let a = PollId::parse("AAAAAAAAAAAAAAAA").unwrap();
        assert!(t.admit(ip("2001:db8::1"), &a));
        assert!(!t.admit(ip("2001:db8::2"), &a));
        assert!(t.admit(ip("2001:db8:0:1::1"), &a));
    }
}
