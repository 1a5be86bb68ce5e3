//! One-time ballot tokens: a vote form can be counted once, and only if this
//! server issued it for this poll.
//!
//! Why: without accounts or cookies, nothing else stops a captured vote POST
//! from being replayed to add votes. Each share page carries a token
//! `tag ‖ nonce ‖ HMAC(key, poll id ‖ nonce)`; redeeming it records the nonce
//! as used, and a second redemption is refused.
//!
//! Promises:
//! - keys are random, live only in memory and belong to one UTC day; the
//!   previous day's key is kept so that a form loaded just before midnight
//!   still works, then it is dropped with every nonce recorded under it;
//! - only the nonces of redeemed tokens are kept (16 random bytes each,
//!   linked to nothing): issuing a token stores nothing, so loading pages
//!   cannot grow memory;
//! - a vote's token is *reserved* while its ballot is on its way to the
//!   store and counts as used ([`Verdict::Used`], which opens `afterVote`
//!   results) only once the ballot is committed ([`BallotBox::settle`]). The
//!   writer settles it whether or not the voter is still connected, so a
//!   client that hangs up can neither see results for a vote that was
//!   refused nor lose an honest vote's token to a failed write;
//! - memory stays bounded: past [`MAX_USED`] redemptions in one generation a
//!   new generation starts early (forms issued before then ask to be sent
//!   again, with the voter's choices kept);
//! - a token for one poll is refused for every other poll;
//! - a vote's token stops opening `afterVote` results when the voter
//!   withdraws that ballot with its receipt ([`BallotBox::withdrawn`]): the
//!   box remembers which receipt came with which token, as a keyed hash of
//!   the receipt's hash under the token's day key, in memory, for as long as
//!   the token itself can be used (that day and the next);
//! - where several nodes share one database (PostgreSQL), the
//!   keys are not random but the day's form key of the shared key state
//!   ([`BallotBox::keyed`]), so a form fetched from one node is good on
//!   every node; and the nonce of each vote is also recorded in the
//!   database in the ballot's own transaction, as a keyed hash under the
//!   day's key ([`BallotBox::form_of`]), so a form sent to two nodes counts
//!   once. Each node's memory of used tokens
//!   stays what opens `afterVote` results on that node.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;

use std::sync::Arc;

use crate::day::Day;
use crate::keyed::Secret;
use crate::keyring::Keyring;
use crate::secret::{PollId, ReceiptHash, random_bytes};

/// Redemptions recorded per generation before the key rotates early.
pub const MAX_USED: usize = 1_000_000;

const TAG: usize = 4;
const NONCE: usize = 16;
const MAC: usize = 16;
const TOKEN_BYTES: usize = TAG + NONCE + MAC;

/// What a presented token is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Issued here for this poll and not yet used.
    Valid,
    /// Issued here for this poll, and its vote is being stored: neither
    /// usable again nor proof of a vote yet.
    Reserved,
    /// Issued here for this poll, and already counted once.
    Used,
    /// Forged, for another poll, malformed, or from a key that is gone.
    Invalid,
}

struct Generation {
    tag: [u8; TAG],
    day: Day,
    /// The day whose key this is: `day`, or the key state's day where that
    /// is ahead (the same on every node that has the state).
    keyed: Day,
    key: Secret,
    /// Each redeemed nonce: `true` once it counts, `false` while reserved
    /// (or after its ballot was withdrawn: then for good).
    used: HashMap<[u8; NONCE], bool>,
    /// The nonce a ballot with a receipt came with, by the receipt's hash
    /// keyed under this generation's key.
    by_receipt: HashMap<[u8; MAC], [u8; NONCE]>,
}

/// Where a box's keys come from.
enum Source {
    /// Random, in this process only.
    Random,
    /// The key state's day key for a purpose: the same on every node.
    Keys(Arc<Keyring>, &'static [u8]),
}

impl Generation {
    fn new(day: Day, source: &Source) -> anyhow::Result<Generation> {
        match source {
            Source::Random => {
                let mut tag = [0u8; TAG];
                random_bytes(&mut tag)?;
                Ok(Generation {
                    tag,
                    day,
                    keyed: day,
                    key: Secret::generate()?,
                    used: HashMap::new(),
                    by_receipt: HashMap::new(),
                })
            }
            Source::Keys(keys, label) => {
                // A key state ahead of this node's clock (moved on by a
                // sweep as of a later day, or by a node whose clock is
                // ahead) has no key for today any more: the forms are
                // keyed under its day then, as every node with it does.
                let keyed = day.max(keys.day());
                let key = keys
                    .day_key(keyed, label)
                    .ok_or_else(|| anyhow::anyhow!("the key state has no key for {keyed}"))?;
                let key = Secret::from_bytes(*key);
                // Told apart by day, as every node tells them.
                let tag = key.tag::<TAG>(&[b"tag"]);
                Ok(Generation { tag, day, keyed, key, used: HashMap::new(), by_receipt: HashMap::new() })
            }
        }
    }

    fn mac(&self, poll: &PollId, nonce: &[u8]) -> [u8; MAC] {
        self.key.tag(&[poll.as_str().as_bytes(), &[0], nonce])
    }
}

struct State {
    current: Generation,
    previous: Option<Generation>,
}

pub struct BallotBox {
    state: Mutex<State>,
    source: Source,
}

impl BallotBox {
    pub fn new(today: Day) -> anyhow::Result<BallotBox> {
        BallotBox::with(today, Source::Random)
    }

    /// A box whose day keys are the key state's for `label`, shared by
    /// every node that has the key file.
    pub fn keyed(today: Day, keys: Arc<Keyring>, label: &'static [u8]) -> anyhow::Result<BallotBox> {
        BallotBox::with(today, Source::Keys(keys, label))
    }

    fn with(today: Day, source: Source) -> anyhow::Result<BallotBox> {
        let current = Generation::new(today, &source)?;
        Ok(BallotBox { state: Mutex::new(State { current, previous: None }), source })
    }

    /// What the database records as spent for a token this box issued for
    /// `poll`: the day of its key, and a keyed hash of its nonce under that
    /// key (the same on every node). Not the nonce: once the key state has
    /// moved past that day, no one can tell which form a record was, even
    /// with the form in hand.
    pub fn form_of(&self, poll: &PollId, token: &str) -> Option<(Day, [u8; 16])> {
        let mut state = self.lock();
        find(&mut state, poll, token)
            .map(|(generation, nonce)| (generation.keyed, generation.key.tag::<16>(&[b"spent form\0", &nonce])))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation is a single insert or swap: the data stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves to a new key when the day changed or the used set is full.
    fn rotate(state: &mut State, source: &Source, today: Day) -> anyhow::Result<()> {
        // A request that read the day just before midnight may come after one
        // that read the new day: it must not move the key back a day.
        if (state.current.day == today && state.current.used.len() < MAX_USED) || today < state.current.day {
            return Ok(());
        }
        let fresh = Generation::new(today, source)?;
        let old = std::mem::replace(&mut state.current, fresh);
        // The old key stays for one more day (a form loaded before midnight),
        // never longer.
        state.previous = (old.day == today || old.day == today.previous()).then_some(old);
        Ok(())
    }

    /// A fresh token for a vote form of `poll`.
    pub fn issue(&self, poll: &PollId, today: Day) -> anyhow::Result<String> {
        let mut state = self.lock();
        BallotBox::rotate(&mut state, &self.source, today)?;
        let mut nonce = [0u8; NONCE];
        random_bytes(&mut nonce)?;
        let mut raw = Vec::with_capacity(TOKEN_BYTES);
        raw.extend_from_slice(&state.current.tag);
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&state.current.mac(poll, &nonce));
        Ok(URL_SAFE_NO_PAD.encode(raw))
    }

    /// What `token` is worth for `poll`, without using it up.
    pub fn check(&self, poll: &PollId, token: &str, today: Day) -> Verdict {
        let mut state = self.lock();
        if BallotBox::rotate(&mut state, &self.source, today).is_err() {
            return Verdict::Invalid;
        }
        match find(&mut state, poll, token) {
            Some((generation, nonce)) => match generation.used.get(&nonce) {
                Some(true) => Verdict::Used,
                Some(false) => Verdict::Reserved,
                None => Verdict::Valid,
            },
            None => Verdict::Invalid,
        }
    }

    /// Moves to the new day's key by the clock alone, so that yesterday's
    /// key and used codes go on time on a quiet server too.
    pub fn tick(&self, today: Day) {
        let mut state = self.lock();
        if let Err(e) = BallotBox::rotate(&mut state, &self.source, today) {
            eprintln!("anonpoll: ballot key rotation failed: {e}");
        }
    }

    /// Uses `token` up at once (a form whose work is done when this
    /// returns); `Valid` exactly once per token.
    pub fn redeem(&self, poll: &PollId, token: &str, today: Day) -> Verdict {
        self.take(poll, token, today, true)
    }

    /// Reserves `token` for a vote on its way to the store: `Valid` exactly
    /// once per token; it counts once [`BallotBox::settle`] says the ballot
    /// is stored, and is free again if it is not.
    pub fn reserve(&self, poll: &PollId, token: &str, today: Day) -> Verdict {
        self.take(poll, token, today, false)
    }

    fn take(&self, poll: &PollId, token: &str, today: Day, counted: bool) -> Verdict {
        let mut state = self.lock();
        if BallotBox::rotate(&mut state, &self.source, today).is_err() {
            return Verdict::Invalid;
        }
        match find(&mut state, poll, token) {
            Some((generation, nonce)) => match generation.used.entry(nonce) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(counted);
                    Verdict::Valid
                }
                std::collections::hash_map::Entry::Occupied(o) if *o.get() => Verdict::Used,
                std::collections::hash_map::Entry::Occupied(_) => Verdict::Reserved,
            },
            None => Verdict::Invalid,
        }
    }

    /// Ends a reservation: the ballot was committed (`stored`), so the token
    /// counts; or it was not, so the form may be sent again. A token whose
    /// key rotated away meanwhile is simply gone.
    pub fn settle(&self, poll: &PollId, token: &str, stored: bool) {
        self.settle_with(poll, token, stored, None);
    }

    /// [`BallotBox::settle`] for a ballot cast with a receipt (its hash):
    /// withdrawing that ballot later closes what the token opened.
    pub fn settle_with(&self, poll: &PollId, token: &str, stored: bool, receipt: Option<&ReceiptHash>) {
        let mut state = self.lock();
        if let Some((generation, nonce)) = find(&mut state, poll, token) {
            if stored {
                generation.used.insert(nonce, true);
                if let Some(r) = receipt {
                    let key = generation.key.tag::<MAC>(&[b"receipt", &r.0]);
                    generation.by_receipt.insert(key, nonce);
                }
            } else {
                generation.used.remove(&nonce);
            }
        }
    }

    /// The ballot cast with the receipt hashed `receipt` was withdrawn: the
    /// token it came with is neither usable nor proof of a vote any more
    /// ([`Verdict::Reserved`] for good).
    pub fn withdrawn(&self, receipt: &ReceiptHash) {
        let mut state = self.lock();
        let State { current, previous } = &mut *state;
        for generation in std::iter::once(current).chain(previous.as_mut()) {
            let key = generation.key.tag::<MAC>(&[b"receipt", &receipt.0]);
            if let Some(nonce) = generation.by_receipt.remove(&key) {
                generation.used.insert(nonce, false);
            }
        }
    }
}

/// The generation that issued `token` for `poll`, and the token's nonce.
fn find<'a>(state: &'a mut State, poll: &PollId, token: &str) -> Option<(&'a mut Generation, [u8; NONCE])> {
    if token.len() > 64 {
        return None;
    }
    let raw = URL_SAFE_NO_PAD.decode(token.trim()).ok()?;
    if raw.len() != TOKEN_BYTES {
        return None;
    }
    let (tag, rest) = raw.split_at(TAG);
    let (nonce, mac) = rest.split_at(NONCE);
    let generation = if state.current.tag.as_slice() == tag {
        &mut state.current
    } else {
        state.previous.as_mut().filter(|g| g.tag.as_slice() == tag)?
    };
    let expected = generation.mac(poll, nonce);
    if !bool::from(expected.as_slice().ct_eq(mac)) {
        return None;
    }
    let nonce: [u8; NONCE] = nonce.try_into().ok()?;
    Some((generation, nonce))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> Day {
        Day::parse(s).unwrap()
    }

    fn poll(s: &str) -> PollId {
        PollId::parse(s).unwrap()
    }

    #[test]
    fn a_reserved_token_counts_only_once_its_vote_is_stored() {
        let today = day("2026-03-10");
        let b = BallotBox::new(today).unwrap();
        let p = poll("AAAAAAAAAAAAAAAA");
        let token = b.issue(&p, today).unwrap();
        assert_eq!(b.reserve(&p, &token, today), Verdict::Valid);
        // On its way to the store: not usable again, and not yet a vote.
        assert_eq!(b.check(&p, &token, today), Verdict::Reserved);
        assert_eq!(b.reserve(&p, &token, today), Verdict::Reserved);
        assert_eq!(b.redeem(&p, &token, today), Verdict::Reserved);
        // Not stored: the form may be sent again.
        b.settle(&p, &token, false);
        assert_eq!(b.check(&p, &token, today), Verdict::Valid);
        assert_eq!(b.reserve(&p, &token, today), Verdict::Valid);
        // Stored: it counts, for good.
        b.settle(&p, &token, true);
        assert_eq!(b.check(&p, &token, today), Verdict::Used);
        assert_eq!(b.reserve(&p, &token, today), Verdict::Used);
        // Forged or foreign tokens change nothing.
        b.settle(&p, "AAAA", false);
        b.settle(&poll("BBBBBBBBBBBBBBBB"), &token, false);
        assert_eq!(b.check(&p, &token, today), Verdict::Used);
    }

    #[test]
    fn a_redeemed_token_counts_at_once_and_is_freed_by_a_settle() {
        let today = day("2026-03-10");
        let b = BallotBox::new(today).unwrap();
        let p = poll("AAAAAAAAAAAAAAAA");
        let token = b.issue(&p, today).unwrap();
        assert_eq!(b.redeem(&p, &token, today), Verdict::Valid);
        assert_eq!(b.check(&p, &token, today), Verdict::Used);
        b.settle(&p, &token, false);
        assert_eq!(b.redeem(&p, &token, today), Verdict::Valid);
    }

    #[test]
    fn a_late_request_from_before_midnight_does_not_turn_the_key_back() {
        let b = BallotBox::new(day("2026-11-22")).unwrap();
        let p = poll("AAAAAAAAAAAAAAAA");
        let evening = b.issue(&p, day("2026-11-22")).unwrap();
        b.tick(day("2026-11-23")); // midnight passed
        let morning = b.issue(&p, day("2026-11-23")).unwrap();
        // A request that read the day just before midnight arrives now.
        let late = b.issue(&p, day("2026-11-22")).unwrap();
        assert_eq!(b.redeem(&p, &evening, day("2026-11-23")), Verdict::Valid, "yesterday's key is kept");
        assert_eq!(b.redeem(&p, &morning, day("2026-11-23")), Verdict::Valid);
        assert_eq!(b.redeem(&p, &late, day("2026-11-23")), Verdict::Valid);
        // Two days on, the evening's key is gone.
        let old = b.issue(&p, day("2026-11-23")).unwrap();
        b.tick(day("2026-11-25"));
        assert_eq!(b.redeem(&p, &old, day("2026-11-25")), Verdict::Invalid);
    }

    #[test]
    fn a_token_counts_once_and_only_for_its_poll() {
        let d = day("2025-03-01");
        let bb = BallotBox::new(d).unwrap();
        let (a, b) = (poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"));
        let t = bb.issue(&a, d).unwrap();
        assert_eq!(bb.check(&b, &t, d), Verdict::Invalid);
        assert_eq!(bb.redeem(&b, &t, d), Verdict::Invalid);
        assert_eq!(bb.check(&a, &t, d), Verdict::Valid);
        assert_eq!(bb.redeem(&a, &t, d), Verdict::Valid);
        assert_eq!(bb.check(&a, &t, d), Verdict::Used);
        assert_eq!(bb.redeem(&a, &t, d), Verdict::Used);
        let t2 = bb.issue(&a, d).unwrap();
        assert_ne!(t, t2);
        assert_eq!(bb.redeem(&a, &t2, d), Verdict::Valid);
    }

    #[test]
    fn forged_and_malformed_tokens_are_invalid() {
        let d = day("2025-03-01");
        let bb = BallotBox::new(d).unwrap();
        let a = poll("AAAAAAAAAAAAAAAA");
        let t = bb.issue(&a, d).unwrap();
        let mut raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let forged = URL_SAFE_NO_PAD.encode(&raw);
        for bad in [forged.as_str(), "", "x", "!!!!", &"A".repeat(48), &"A".repeat(1000)] {
            assert_eq!(bb.redeem(&a, bad, d), Verdict::Invalid, "{bad}");
        }
        let other = BallotBox::new(d).unwrap();
        assert_eq!(other.redeem(&a, &t, d), Verdict::Invalid, "another key");
    }

    #[test]
    fn keys_last_into_the_next_day_then_go_with_their_nonces() {
        let bb = BallotBox::new(day("2025-03-01")).unwrap();
        let a = poll("AAAAAAAAAAAAAAAA");
        let late = bb.issue(&a, day("2025-03-01")).unwrap();
        let used = bb.issue(&a, day("2025-03-01")).unwrap();
        assert_eq!(bb.redeem(&a, &used, day("2025-03-01")), Verdict::Valid);
        // Just after midnight, yesterday's form still works once.
        assert_eq!(bb.redeem(&a, &late, day("2025-03-02")), Verdict::Valid);
        assert_eq!(bb.redeem(&a, &used, day("2025-03-02")), Verdict::Used);
        // A day later, yesterday's key and its record of used nonces are gone.
        let fresh = bb.issue(&a, day("2025-03-03")).unwrap();
        assert_eq!(bb.check(&a, &late, day("2025-03-03")), Verdict::Invalid);
        assert!(bb.lock().previous.as_ref().is_some_and(|g| g.day == day("2025-03-02")));
        assert_eq!(bb.lock().current.used.len(), 0);
        assert_eq!(bb.redeem(&a, &fresh, day("2025-03-03")), Verdict::Valid);
        // After a gap of days nothing old survives.
        bb.issue(&a, day("2025-03-10")).unwrap();
        assert!(bb.lock().previous.is_none());
    }

    #[test]
    fn keyed_boxes_with_one_key_state_accept_each_others_forms_once_keyed_ahead_too() {
        let dir = tempfile::tempdir().unwrap();
        let d = day("2026-03-10");
        let keys = Arc::new(Keyring::create(&dir.path().join("k"), 7, d).unwrap());
        std::fs::copy(dir.path().join("k"), dir.path().join("k2")).unwrap();
        let copy = Arc::new(Keyring::open(&dir.path().join("k2"), 7).unwrap());
        let (a, b) = (BallotBox::keyed(d, keys.clone(), b"form").unwrap(), BallotBox::keyed(d, copy, b"form").unwrap());
        let p = poll("AAAAAAAAAAAAAAAA");
        let token = a.issue(&p, d).unwrap();
        assert_eq!(b.check(&p, &token, d), Verdict::Valid, "a form from one node is good on another");
        assert_eq!(a.form_of(&p, &token), b.form_of(&p, &token), "both see the same day and nonce");
        assert!(a.form_of(&p, &token).is_some_and(|(day, _)| day == d));
        let other = BallotBox::keyed(d, keys.clone(), b"invite form").unwrap();
        assert_eq!(other.check(&p, &token, d), Verdict::Invalid, "another purpose, another key");
        // The key state moved past today (a drill, a clock behind): forms
        // are still issued, keyed under the state's day.
        keys.advance(day("2026-04-19")).unwrap();
        let ahead = BallotBox::keyed(d, keys, b"form").unwrap();
        let token = ahead.issue(&p, d).unwrap();
        assert_eq!(ahead.check(&p, &token, d), Verdict::Valid);
        assert!(
            ahead.form_of(&p, &token).is_some_and(|(keyed, _)| keyed == day("2026-04-19")),
            "spent under the key's day"
        );
    }
}
