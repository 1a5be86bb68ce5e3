//! The vote throttle: at most N responses per poll per client in a sliding
//! window, to blunt scripted ballot stuffing.
//!
//! Why this shape: a classroom or an office answers from one address (NAT),
//! so the limit must be generous (default 100 per 10 minutes) and it only
//! slows a script down; the one-time ballot tokens (`ballot.rs`) do the rest.
//!
//! Privacy: a client is known here only as HMAC-SHA256(key, client group ‖
//! poll id) truncated to 128 bits, with a random key that lives in memory for
//! one window and is dropped with its counts after the next one. Nothing is
//! written anywhere. The count is a sliding-window estimate from two fixed
//! windows (current count plus the previous one's, weighted by how much of it
//! still overlaps), which needs one counter per client and window.

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ClientGroup;
use crate::keyed::Generations;
use crate::secret::PollId;

/// Distinct (client, poll) pairs tracked per window; past it, new pairs are
/// refused until the next window, so memory stays bounded under a flood.
pub const MAX_TRACKED: usize = 500_000;

type State = Generations<u32>;

pub struct VoteThrottle {
    limit: u32,
    window: Duration,
    state: Mutex<State>,
}

impl VoteThrottle {
    pub fn new(limit: u32, window: Duration) -> anyhow::Result<VoteThrottle> {
        Ok(VoteThrottle {
            limit,
            window: window.max(Duration::from_secs(1)),
            state: Mutex::new(Generations::new(window.max(Duration::from_secs(1)), Instant::now())?),
        })
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation is a single insert or swap: the data stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one response of `ip` to `poll`, or refuses it.
    /// Rotates windows by the clock alone, so that on a quiet server, too,
    /// keys and counts go when their time is up (called by a timer).
    pub fn tick(&self) {
        self.lock().rotate(Instant::now());
    }

    pub fn admit(&self, ip: IpAddr, poll: &PollId) -> bool {
        self.admit_at(ip, poll, Instant::now())
    }

    pub fn admit_at(&self, ip: IpAddr, poll: &PollId, now: Instant) -> bool {
        let group = ClientGroup::of(ip);
        let mut state = self.lock();
        state.rotate(now);
        let elapsed = now.saturating_duration_since(state.current.started).as_secs_f64();
        let overlap = (1.0 - elapsed / self.window.as_secs_f64()).clamp(0.0, 1.0);
        let before = state
            .previous
            .as_ref()
            .and_then(|w| w.entries.get(&w.key(&[group.as_bytes(), poll.as_str().as_bytes()])).copied())
            .map_or(0.0, |n| f64::from(n) * overlap);
        let key = state.current.key(&[group.as_bytes(), poll.as_str().as_bytes()]);
        let now_count = state.current.entries.get(&key).copied();
        if before + f64::from(now_count.unwrap_or(0)) >= f64::from(self.limit) {
            return false;
        }
        if now_count.is_none() && state.current.entries.len() >= MAX_TRACKED {
            return false;
        }
        *state.current.entries.entry(key).or_insert(0) += 1;
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
    fn limit_is_per_client_and_per_poll_and_slides() {
        let window = Duration::from_secs(600);
        let t = VoteThrottle::new(3, window).unwrap();
        let t0 = t.lock().current.started;
        let (a, b) = (PollId::parse("AAAAAAAAAAAAAAAA").unwrap(), PollId::parse("BBBBBBBBBBBBBBBB").unwrap());
        for _ in 0..3 {
            assert!(t.admit_at(ip("192.0.2.1"), &a, t0));
        }
        assert!(!t.admit_at(ip("192.0.2.1"), &a, t0), "fourth vote refused");
        assert!(t.admit_at(ip("192.0.2.1"), &b, t0), "another poll is counted apart");
        assert!(t.admit_at(ip("192.0.2.2"), &a, t0), "another client is counted apart");
        // Just into the next window the three votes still weigh almost fully.
        assert!(!t.admit_at(ip("192.0.2.1"), &a, t0 + window + Duration::from_secs(1)));
        // Two thirds into it, one third of them still counts: 1 < 3.
        assert!(t.admit_at(ip("192.0.2.1"), &a, t0 + window + Duration::from_secs(400)));
        // Two windows later everything is forgotten, keys included.
        assert!(t.admit_at(ip("192.0.2.1"), &a, t0 + window * 4));
        assert!(t.lock().previous.is_none());
        assert_eq!(t.lock().current.entries.len(), 1);
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
