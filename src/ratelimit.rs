//! The creation limit: at most N events per rolling window per client group,
//! shared by the JSON API and the web form.
//!
//! Privacy: a client is known here only as HMAC-SHA256(key, group), truncated
//! to 128 bits, with a random in-memory key per window-long generation
//! (`keyed.rs`). The current generation and the one before together cover any
//! rolling window, so the limit is exact; an older generation is dropped with
//! its key.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client::ClientGroup;
use crate::error::RateLimited;
pub use crate::http::Quota;
use crate::keyed::Generations;

type State = Generations<Vec<Instant>>;

pub struct RateLimiter {
    limit: u32,
    window: Duration,
    max_clients: usize,
    state: Mutex<State>,
}

impl RateLimiter {
    pub fn new(limit: u32, window: Duration) -> anyhow::Result<RateLimiter> {
        Ok(RateLimiter {
            limit,
            window,
            max_clients: 200_000,
            state: Mutex::new(Generations::new(window, Instant::now())?),
        })
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Counts one event for `ip` if its group is under the limit.
    pub fn try_acquire(&self, ip: IpAddr) -> Result<Quota, RateLimited> {
        self.try_acquire_at(ip, Instant::now())
    }

    /// Rotates generations by the clock alone, so that on a quiet server, too,
    /// keys and entries go when their time is up (called by a timer).
    pub fn tick(&self) {
        self.lock().rotate(Instant::now());
    }

    /// Gives back an event counted by [`RateLimiter::try_acquire`] whose action
    /// then failed, so a refused write does not use up the budget.
    pub fn refund(&self, ip: IpAddr) {
        let group = ClientGroup::of(ip);
        let mut state = self.lock();
        let key = state.current.key(&[group.as_bytes()]);
        if let Some(v) = state.current.entries.get_mut(&key) {
            v.pop();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves consistent data
        // (every mutation is a single push/pop/insert), so keep going.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn try_acquire_at(&self, ip: IpAddr, now: Instant) -> Result<Quota, RateLimited> {
        let group = ClientGroup::of(ip);
        let mut state = self.lock();
        state.rotate(now);
        let since = now.checked_sub(self.window);
        let in_window = |t: &&Instant| since.is_none_or(|s| **t > s);
        let key_now = state.current.key(&[group.as_bytes()]);
        let mut times: Vec<Instant> = Vec::new();
        if let Some(prev) = &state.previous
            && let Some(v) = prev.entries.get(&prev.key(&[group.as_bytes()]))
        {
            times.extend(v.iter().filter(in_window));
        }
        if let Some(v) = state.current.entries.get(&key_now) {
            times.extend(v.iter().filter(in_window));
        }
        let oldest = times.iter().min().copied();
        let reset_secs = |now: Instant| {
            oldest.map_or(self.window.as_secs(), |o| ceil_secs((o + self.window).saturating_duration_since(now)))
        };
        let used = times.len() as u32;
        if used >= self.limit {
            return Err(RateLimited {
                limit: self.limit,
                window_secs: self.window.as_secs(),
                retry_after_secs: reset_secs(now).max(1),
            });
        }
        let known = state.current.entries.contains_key(&key_now);
        if !known && state.current.entries.len() >= self.max_clients {
            // Memory stays bounded under a flood of distinct clients: new
            // clients wait for the next generation rather than grow the map.
            return Err(RateLimited {
                limit: self.limit,
                window_secs: self.window.as_secs(),
                retry_after_secs: ceil_secs((state.current.started + self.window).saturating_duration_since(now))
                    .max(1),
            });
        }
        let entry = state.current.entries.entry(key_now).or_default();
        entry.retain(|t| since.is_none_or(|s| *t > s));
        entry.push(now);
        Ok(Quota {
            limit: self.limit,
            window_secs: self.window.as_secs(),
            remaining: self.limit - used - 1,
            reset_secs: oldest.map_or(self.window.as_secs(), |_| reset_secs(now)),
        })
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn ip(s: &str) -> IpAddr {
        IpAddr::from_str(s).unwrap()
    }

    #[test]
    fn limit_holds_over_a_rolling_window_across_rotations() {
        let hour = Duration::from_secs(3600);
        let rl = RateLimiter::new(3, hour).unwrap();
        let t0 = Instant::now();
        let a = ip("192.0.2.1");
        // Two events late in the first generation, one early in the second.
        assert_eq!(rl.try_acquire_at(a, t0 + Duration::from_secs(3500)).unwrap().remaining, 2);
        assert_eq!(rl.try_acquire_at(a, t0 + Duration::from_secs(3550)).unwrap().remaining, 1);
        assert_eq!(rl.try_acquire_at(a, t0 + Duration::from_secs(3650)).unwrap().remaining, 0);
        // The rotation at 3600 s must not have forgotten the first two.
        let refused = rl.try_acquire_at(a, t0 + Duration::from_secs(3700)).unwrap_err();
        assert_eq!(refused.retry_after_secs, 3500 + 3600 - 3700);
        // Once the first event leaves the window, one more is allowed.
        assert!(rl.try_acquire_at(a, t0 + Duration::from_secs(3500 + 3601)).is_ok());
        // Other clients were never affected.
        assert!(rl.try_acquire_at(ip("192.0.2.2"), t0 + Duration::from_secs(3700)).is_ok());
    }

    #[test]
    fn old_generations_and_their_keys_are_dropped() {
        let hour = Duration::from_secs(3600);
        let rl = RateLimiter::new(1, hour).unwrap();
        let t0 = Instant::now();
        let a = ip("2001:db8::1");
        rl.try_acquire_at(a, t0).unwrap();
        assert!(rl.try_acquire_at(ip("2001:db8::2"), t0 + Duration::from_secs(10)).is_err(), "same /64");
        let first_key = rl.lock().current.secret();
        rl.try_acquire_at(ip("198.51.100.1"), t0 + Duration::from_secs(3 * 3600)).unwrap();
        let state = rl.lock();
        assert!(state.previous.is_none(), "a generation older than two windows must be gone");
        assert_ne!(state.current.secret(), first_key);
        assert_eq!(state.current.entries.len(), 1);
    }

    #[test]
    fn refund_gives_the_event_back() {
        let rl = RateLimiter::new(1, Duration::from_secs(3600)).unwrap();
        let a = ip("192.0.2.9");
        rl.try_acquire(a).unwrap();
        rl.refund(a);
        let q = rl.try_acquire(a).unwrap();
        assert_eq!(q.remaining, 0);
        assert!(rl.try_acquire(a).is_err());
        let [(policy, p), (name, v)] = q.headers();
        assert_eq!((policy, p.as_str()), ("RateLimit-Policy", "\"creations\";q=1;w=3600"));
        assert_eq!(name, "RateLimit");
        assert!(v.starts_with("\"creations\";r=0;t="));
    }
}
