//! In-memory tables keyed by a keyed hash of a client, kept in two
//! window-long generations: the mechanism behind the creation limit
//! (`ratelimit.rs`) and the vote budgets (`app/budgets.rs`).
//!
//! Promises: an entry's key is HMAC-SHA256(secret, parts) truncated to 128
//! bits, where the secret is random, exists only in this process's memory and
//! belongs to one generation. A generation starts when the previous one is a
//! window old; it is kept as "previous" only while a rolling window can still
//! reach into it, then dropped with its secret, so an old entry can no longer
//! be linked to anything, even by this process.
//!
//! [`Occupancy`] counts what each client holds right now (open connections,
//! uploads being read) under the same kind of key. It needs no generations:
//! an entry exists only while its client holds something, and goes with the
//! last [`Held`] guard.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::secret::random_bytes;

pub type Key = [u8; 16];

/// A random HMAC-SHA256 key that exists only in this process's memory: the
/// one way anonpoll derives in-memory keys and tags (here, the workers'
/// queue, and the ballot tokens of `web/ballot.rs`).
///
/// Held as HMAC's state after the key (its inner and outer pads): a tag
/// then costs two SHA-256 blocks instead of four, which counts where every
/// request takes one (`server/gate.rs`).
pub struct Secret(Hmac<Sha256>);

impl Secret {
    pub fn generate() -> anyhow::Result<Secret> {
        let mut key = [0u8; 32];
        random_bytes(&mut key)?;
        Ok(Secret::from_bytes(key))
    }

    /// A key derived elsewhere (the key state's day keys, which several
    /// nodes share: `web/ballot.rs`).
    pub fn from_bytes(key: [u8; 32]) -> Secret {
        // HMAC pads a key shorter than SHA-256's 64-byte block with zeros
        // (RFC 2104), so the padded block is the same key.
        let mut block = [0u8; 64];
        block[..32].copy_from_slice(&key);
        Secret(<Hmac<Sha256> as KeyInit>::new(&block.into()))
    }

    /// HMAC-SHA256 of `parts` (concatenated), truncated to `N` bytes (N ≤ 32).
    pub fn tag<const N: usize>(&self, parts: &[&[u8]]) -> [u8; N] {
        let mut mac = self.0.clone();
        for p in parts {
            mac.update(p);
        }
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; N];
        let n = N.min(full.len());
        out[..n].copy_from_slice(&full[..n]);
        out
    }
}

pub struct Generation<V> {
    secret: Secret,
    pub started: Instant,
    pub entries: HashMap<Key, V>,
}

impl<V> Generation<V> {
    fn new(started: Instant) -> anyhow::Result<Generation<V>> {
        Ok(Generation { secret: Secret::generate()?, started, entries: HashMap::new() })
    }

    /// The key of `parts` (concatenated) in this generation.
    pub fn key(&self, parts: &[&[u8]]) -> Key {
        self.secret.tag(parts)
    }

    /// A tag that tells this generation's secret from another's.
    #[cfg(test)]
    pub fn secret(&self) -> [u8; 32] {
        self.secret.tag(&[b"which secret"])
    }
}

pub struct Generations<V> {
    window: Duration,
    pub current: Generation<V>,
    pub previous: Option<Generation<V>>,
}

impl<V> Generations<V> {
    pub fn new(window: Duration, now: Instant) -> anyhow::Result<Generations<V>> {
        Ok(Generations { window, current: Generation::new(now)?, previous: None })
    }

    /// Starts a new generation once the current one is a window old. The old
    /// one stays as `previous` only if it is less than two windows old (else
    /// none of its entries can count any more).
    pub fn rotate(&mut self, now: Instant) {
        let age = now.saturating_duration_since(self.current.started);
        if age < self.window {
            return;
        }
        match Generation::new(now) {
            Ok(fresh) => {
                let old = std::mem::replace(&mut self.current, fresh);
                self.previous = (age < self.window * 2).then_some(old);
            }
            Err(e) => eprintln!("anonpoll: in-memory key rotation failed, keeping the old key: {e}"),
        }
    }
}

/// At most `limit` of something held at once per client.
pub struct Occupancy {
    limit: u32,
    held: Mutex<Generation<u32>>,
}

/// One unit held by one client; given back when dropped.
pub struct Held {
    owner: Arc<Occupancy>,
    key: Key,
}

impl Occupancy {
    pub fn new(limit: u32) -> anyhow::Result<Arc<Occupancy>> {
        Ok(Arc::new(Occupancy { limit, held: Mutex::new(Generation::new(Instant::now())?) }))
    }

    /// One more unit for `client`, unless it holds `limit` already.
    pub fn try_take(self: &Arc<Self>, client: crate::client::ClientGroup) -> Option<Held> {
        // Every mutation is a single insert, add or remove: the map stays
        // consistent even if a holder panicked.
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let key = held.key(&[client.as_bytes()]);
        let count = held.entries.entry(key).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(Held { owner: self.clone(), key })
    }

    /// Clients holding anything now (for tests: entries must not outlive their holders).
    pub fn clients(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).entries.len()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.owner.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.entries.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.entries.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_is_hmac_sha256_of_the_key_as_any_hmac_computes_it() {
        // The day keys of web/ballot.rs are shared by nodes that may run
        // different versions: the kept state must give RFC 2104's HMAC.
        let key: [u8; 32] = std::array::from_fn(|i| i as u8 * 7 + 1);
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(b"part one|");
        mac.update(b"part two");
        let expected = mac.finalize().into_bytes();
        let secret = Secret::from_bytes(key);
        assert_eq!(secret.tag::<32>(&[b"part one|", b"part two"])[..], expected[..]);
        assert_eq!(secret.tag::<16>(&[b"part one|part two"])[..], expected[..16], "parts are concatenated");
        // And the state is not used up by a tag.
        assert_eq!(secret.tag::<32>(&[b"part one|part two"])[..], expected[..]);
    }

    #[test]
    fn occupancy_caps_each_client_and_forgets_it_when_nothing_is_held() {
        let o = Occupancy::new(2).unwrap();
        let a = crate::client::ClientGroup::of(std::net::IpAddr::from([192, 0, 2, 1]));
        let b = crate::client::ClientGroup::of(std::net::IpAddr::from([192, 0, 2, 2]));
        let first = o.try_take(a).unwrap();
        let second = o.try_take(a).unwrap();
        assert!(o.try_take(a).is_none(), "a third unit for the same client");
        let other = o.try_take(b).unwrap();
        drop(first);
        let third = o.try_take(a).unwrap();
        assert_eq!(o.clients(), 2);
        drop((second, third, other));
        assert_eq!(o.clients(), 0, "no entry outlives its holders");
    }

    #[test]
    fn keys_differ_per_generation_and_old_generations_go() {
        let t0 = Instant::now();
        let w = Duration::from_secs(60);
        let mut g: Generations<u32> = Generations::new(w, t0).unwrap();
        let k0 = g.current.key(&[b"client"]);
        assert_eq!(k0, g.current.key(&[b"cli", b"ent"]));
        g.rotate(t0 + Duration::from_secs(59));
        assert_eq!(g.current.key(&[b"client"]), k0, "no rotation inside the window");
        g.rotate(t0 + w);
        assert_ne!(g.current.key(&[b"client"]), k0);
        assert_eq!(g.previous.as_ref().map(|p| p.key(&[b"client"])), Some(k0));
        g.rotate(t0 + w * 4);
        assert!(g.previous.is_none(), "a generation two windows old is dropped");
    }
}
