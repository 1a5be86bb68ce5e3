//! Refilling budgets: a token bucket per client group (and poll), the
//! mechanism under every limit a vote meets before the writer
//! (`throttle.rs` says which budget each vote spends).
//!
//! What a budget means: a client may spend up to N units at once; each one
//! spent comes back after window / N (6 s at the vote throttle's default of
//! 100 per 10 minutes), so an emptied budget is whole again one window after
//! its last use. Over any span of time T, a client gets at most
//! N + N × T / window units. A refilling budget rather than a rolling window
//! (as the creation limit, `ratelimit.rs`, has): it needs one small entry
//! per client and poll instead of one instant per event.
//!
//! A budget is kept either per client group and poll
//! ([`RefillingBudgets::spend_one`], one unit an event) or per client group
//! over all polls ([`RefillingBudgets::spend_across_polls_at`], a cost an
//! event: the pace of `none` polls counts their ballots' counters, so that
//! a heavy poll's ballots take their share of the single writer and not all
//! of it).
//!
//! Privacy: a client is known here only as HMAC-SHA256(key, client group ‖
//! poll id) (for a budget over all polls, of the client group alone)
//! truncated to 128 bits, with a random key that lives in memory for one
//! window and is dropped with its entries after the next one (by then every
//! budget it keyed is whole again, so forgetting it changes nothing).
//! Nothing is written anywhere.

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ClientGroup;
use crate::keyed::Generations;
use crate::secret::PollId;

/// Distinct budgets (client and poll, or client) tracked per window; past
/// it, new ones are refused until the next window, so memory stays bounded
/// under a flood.
pub const MAX_TRACKED: usize = 500_000;

/// What [`RefillingBudgets::try_spend_one_at`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spend {
    Spent,
    /// Nothing left: refused.
    Refused,
    /// Not tracked: the window's table is full ([`MAX_TRACKED`]), so nothing
    /// was spent and nothing can be said; the caller chooses.
    Untracked,
}

/// What is left of one budget, as of `at`.
#[derive(Clone, Copy)]
struct Budget {
    left: f64,
    at: Instant,
}

type State = Generations<Budget>;

/// Budgets of `per_window` units, each refilling at `per_window` per
/// `window`, kept under keyed hashes of the client group (and poll).
pub struct RefillingBudgets {
    per_window: u32,
    window: Duration,
    state: Mutex<State>,
}

impl RefillingBudgets {
    /// Budgets of `per_window` units refilling over `window` (at least a
    /// second).
    pub fn new(per_window: u32, window: Duration) -> anyhow::Result<RefillingBudgets> {
        let window = window.max(Duration::from_secs(1));
        Ok(RefillingBudgets { per_window, window, state: Mutex::new(Generations::new(window, Instant::now())?) })
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// How long one spent unit takes to come back (window / N).
    pub fn refill_interval(&self) -> Duration {
        self.window / self.per_window.max(1)
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

    /// Spends one unit of `ip`'s budget for `poll`, or refuses it.
    pub fn spend_one(&self, ip: IpAddr, poll: &PollId) -> bool {
        self.spend_one_at(ip, poll, Instant::now())
    }

    pub fn spend_one_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> bool {
        self.try_spend_one_at(ip, poll, now) == Spend::Spent
    }

    /// Spends one unit of `ip`'s budget for `poll`, saying whether it was
    /// refused for want of it or not tracked at all (a full table).
    pub fn try_spend_one_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> Spend {
        let group = ClientGroup::of(ip);
        self.take(&[group.as_bytes(), poll.as_str().as_bytes()], 1, now)
    }

    /// Gives back one unit spent of `ip`'s budget for `poll` (a vote that
    /// was not stored after all), never above the whole budget.
    pub fn give_back_one(&self, ip: IpAddr, poll: &PollId) {
        self.give_back_one_at(ip, poll, Instant::now());
    }

    pub fn give_back_one_at(&self, ip: IpAddr, poll: &PollId, now: Instant) {
        let group = ClientGroup::of(ip);
        let parts: &[&[u8]] = &[group.as_bytes(), poll.as_str().as_bytes()];
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        let (known, left) = self.balance(&state, parts, &key, now);
        let whole = f64::from(self.per_window);
        if left >= whole || (known.is_none() && state.current.entries.len() >= MAX_TRACKED) {
            return;
        }
        state.current.entries.insert(key, Budget { left: (left + 1.0).min(whole), at: now });
    }

    /// Spends `cost` units of `ip`'s budget over all polls, or refuses it;
    /// a cost above the whole budget is charged as the whole budget, so
    /// that it passes when the budget is full.
    pub fn spend_across_polls_at(&self, ip: IpAddr, cost: u32, now: Instant) -> bool {
        self.take(&[ClientGroup::of(ip).as_bytes()], cost, now) == Spend::Spent
    }

    /// How long until `ip` has one unit of its budget for `poll` again, as
    /// of `now` (zero when it has one).
    pub fn wait_for_one_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> Duration {
        let group = ClientGroup::of(ip);
        let parts: &[&[u8]] = &[group.as_bytes(), poll.as_str().as_bytes()];
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        let missing = (1.0 - self.balance(&state, parts, &key, now).1).max(0.0);
        Duration::from_secs_f64(missing * self.refill_interval().as_secs_f64())
    }

    /// Whether `ip` has one unit left of its budget for `poll` at `now`,
    /// without spending it.
    pub fn has_one_left_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> bool {
        let group = ClientGroup::of(ip);
        let parts: &[&[u8]] = &[group.as_bytes(), poll.as_str().as_bytes()];
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        self.balance(&state, parts, &key, now).1 >= 1.0
    }

    /// The budget keyed by `parts` (`key` in the current generation): as
    /// last stored in this generation, and what is left of it at `now`.
    fn balance(&self, state: &State, parts: &[&[u8]], key: &crate::keyed::Key, now: Instant) -> (Option<Budget>, f64) {
        let known = state.current.entries.get(key).copied();
        // A budget last touched in the previous generation carries over; one
        // older than that is whole again anyway.
        let last = known.or_else(|| state.previous.as_ref().and_then(|p| p.entries.get(&p.key(parts)).copied()));
        let whole = f64::from(self.per_window);
        let window = self.window.as_secs_f64();
        let left = last.map_or(whole, |b| {
            (b.left + now.saturating_duration_since(b.at).as_secs_f64() * whole / window).min(whole)
        });
        (known, left)
    }

    /// Takes `cost` from the budget keyed by `parts`.
    fn take(&self, parts: &[&[u8]], cost: u32, now: Instant) -> Spend {
        let mut state = self.lock();
        state.rotate(now);
        let key = state.current.key(parts);
        let (known, left) = self.balance(&state, parts, &key, now);
        let cost = f64::from(cost.clamp(1, self.per_window.max(1)));
        if left < cost {
            return Spend::Refused;
        }
        if known.is_none() && state.current.entries.len() >= MAX_TRACKED {
            return Spend::Untracked;
        }
        state.current.entries.insert(key, Budget { left: left - cost, at: now });
        Spend::Spent
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
        let t = RefillingBudgets::new(3, window).unwrap();
        let t0 = t.lock().current.started;
        let at = |s: u64| t0 + Duration::from_secs(s);
        let (a, b) = (PollId::parse("AAAAAAAAAAAAAAAA").unwrap(), PollId::parse("BBBBBBBBBBBBBBBB").unwrap());
        for _ in 0..3 {
            assert!(t.spend_one_at(ip("192.0.2.1"), &a, t0));
        }
        assert!(!t.spend_one_at(ip("192.0.2.1"), &a, t0), "fourth vote refused");
        assert!(t.spend_one_at(ip("192.0.2.1"), &b, t0), "another poll is counted apart");
        assert!(t.spend_one_at(ip("192.0.2.2"), &a, t0), "another client is counted apart");
        // One response comes back every window / 3 = 200 s, across rotations.
        assert!(!t.spend_one_at(ip("192.0.2.1"), &a, at(199)));
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(200)));
        assert!(!t.spend_one_at(ip("192.0.2.1"), &a, at(201)));
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(400)));
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(600)), "the generation rotated; the budget carried over");
        assert!(!t.spend_one_at(ip("192.0.2.1"), &a, at(700)));
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(800)));
        // A whole window after its last use, the budget is whole again.
        for _ in 0..3 {
            assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(1400)));
        }
        assert!(!t.spend_one_at(ip("192.0.2.1"), &a, at(1400)));
        // Long after, everything is forgotten, keys included.
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, at(5000)));
        assert!(t.lock().previous.is_none());
        assert_eq!(t.lock().current.entries.len(), 1);
    }

    #[test]
    fn a_budget_of_work_is_spent_by_cost_and_refills_by_cost() {
        // 1,000 units a second: a ballot of 400 counters twice, not three times.
        let t = RefillingBudgets::new(1_000, Duration::from_secs(1)).unwrap();
        let t0 = t.lock().current.started;
        assert!(t.spend_across_polls_at(ip("192.0.2.1"), 400, t0));
        assert!(t.spend_across_polls_at(ip("192.0.2.1"), 400, t0));
        assert!(!t.spend_across_polls_at(ip("192.0.2.1"), 400, t0), "only 200 left");
        assert!(t.spend_across_polls_at(ip("192.0.2.1"), 200, t0), "what is left is spent by a smaller one");
        assert!(t.spend_across_polls_at(ip("192.0.2.2"), 400, t0), "another client is counted apart");
        // One budget per client, not per poll: the votes' budget of the same
        // client and a poll is another entry.
        let a = PollId::parse("AAAAAAAAAAAAAAAA").unwrap();
        assert!(t.spend_one_at(ip("192.0.2.1"), &a, t0));
        assert!(!t.spend_across_polls_at(ip("192.0.2.1"), 1, t0), "nothing left of the work budget");
        // 400 come back in 0.4 s.
        assert!(!t.spend_across_polls_at(ip("192.0.2.1"), 400, t0 + Duration::from_millis(399)));
        assert!(t.spend_across_polls_at(ip("192.0.2.1"), 400, t0 + Duration::from_millis(800)));
        // A cost above the whole budget passes once the budget is whole.
        assert!(t.spend_across_polls_at(ip("192.0.2.3"), 5_000, t0));
        assert!(!t.spend_across_polls_at(ip("192.0.2.3"), 5_000, t0 + Duration::from_millis(999)));
        assert!(t.spend_across_polls_at(ip("192.0.2.3"), 5_000, t0 + Duration::from_secs(1)));
    }

    #[test]
    fn ipv6_clients_are_grouped_by_64() {
        let t = RefillingBudgets::new(1, Duration::from_secs(600)).unwrap();
        let a = PollId::parse("AAAAAAAAAAAAAAAA").unwrap();
        assert!(t.spend_one(ip("2001:db8::1"), &a));
        assert!(!t.spend_one(ip("2001:db8::2"), &a));
        assert!(t.spend_one(ip("2001:db8:0:1::1"), &a));
    }
}
