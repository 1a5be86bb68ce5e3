//! The mix: a poll's new ballots, with every ballot of the groups they go
//! to (`rows::Groups`), rewritten at new keys, in an order that is not
//! theirs, under new group keys and a new data key; the same step brings a
//! poll of format 1 to format 2 (`upgrade`), and puts a changed or
//! withdrawn ballot's old answers out of reach (`amend`).
//!
//! Why, on every engine: a new ballot is stored staged, with its poll's
//! other new ones, in the order it came; on PostgreSQL every row also
//! carries the transaction that wrote it (`xmin`) and its place (`ctid`),
//! and its log (the WAL, its archive, every standby) keeps each commit, its
//! time and its rows, for as long as anyone keeps them. A stored ballot
//! therefore tells when it came, and which code or form was spent in its
//! commit, to whoever holds the files and a key file, on any engine whose
//! files keep history. The mix ends that, the same way everywhere:
//!
//! - every ballot of each group a new ballot goes to (the whole poll below
//!   twice `rows::GROUP` ballots) is deleted and written anew in one
//!   transaction (one `xmin` for all), at a new key each, in random order
//!   (or, where rows lie in key order, in the order of their random keys):
//!   nothing of where or when a row was written is left to tell a group's
//!   ballots apart. A mix costs a group per new ballot at most, whatever
//!   the poll's size; a poll whose number of groups changes is rewritten
//!   whole ([`mix_whole`]);
//! - under new group keys and a new data key: the old data key is wrapped
//!   nowhere any more, and dies with the lease it was wrapped under
//!   (`keys`, the day's key work), and the old keys of the groups rewritten
//!   were sealed only under it. Every copy of what came before (a dead row,
//!   a log record, an archived segment, a standby's page, a backup) was
//!   sealed under those keys, and is noise once that lease has passed. A
//!   withdrawn ballot and a changed ballot's old answers go the same way,
//!   at the poll's next mix (the group a change took a ballot out of is
//!   marked for it).
//!
//! So the window in which the files tie a ballot to when it came, or to its
//! code or form, runs from the vote to the poll's next mix, and what a copy
//! kept of it opens only until the old key's lease has passed
//! (docs/PRIVACY.md, "The window").
//!
//! When: a poll with new ballots is mixed once the writer is idle
//! ([`IDLE`]), or at the latest [`MIX_EVERY`] after its oldest new ballot
//! under steady load; but a poll's next mix waits [`COOL`] times as long as
//! its last one took, and at least [`MIN_GAP`], so that mixing one poll
//! takes at most a tenth of the writer's time, however large the poll and
//! however its votes (or changes) trickle in.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::super::engine::Rows;
use super::super::keys::{Digest, data_key, random_key, settled_key};
use super::super::open::{BallotKeys, Image, check_digest, open_doc, open_groups, open_image, open_state_in_tx};
use super::super::rows::{self, Doc, Group, Groups, Layout, State, Stored, Tag};
use super::super::seal::DataKey;
use super::super::seen::Seen;
use super::super::vocab::{BallotRow, Cols, ResealedRow, STAGED_KEYS, place};

/// Under steady load the writer is never idle; it mixes a poll with new
/// ballots at least this often.
pub const MIX_EVERY: Duration = Duration::from_secs(10);
/// How long without a write makes the writer idle, the moment to mix.
pub(in crate::store) const IDLE: Duration = Duration::from_millis(250);
/// After a poll's mix, the next waits at least this many times as long as
/// it took: a tenth of the writer's time at most.
pub(super) const COOL: u32 = 9;
/// After a poll's mix, the next waits at least this long (a poll whose
/// votes trickle in is mixed once a second, not after each vote).
pub(super) const MIN_GAP: Duration = Duration::from_secs(1);
/// After a failed mix, the poll's next is not tried before this.
pub(super) const MIX_RETRY: Duration = Duration::from_secs(60);
/// New ballots remembered before the writer mixes whatever the time.
pub(super) const MAX_FRESH: usize = 100_000;
/// Polls whose last mix's length is remembered, at most.
const COSTS: usize = 10_000;

/// The polls with ballots stored since their last mix, and when each was
/// mixed last.
#[derive(Default)]
pub(in crate::store) struct Fresh {
    /// Each poll to mix, with when its oldest new ballot came.
    polls: BTreeMap<String, Instant>,
    /// New ballots since the polls' last mixes.
    count: usize,
    /// Each poll's last mix: when it ended, and how long it took.
    last: HashMap<String, (Instant, Duration)>,
    /// Polls whose mix failed: not tried again before this.
    retry: HashMap<String, Instant>,
    /// Whether ballots a previous run left staged are still to be looked for.
    pub(in crate::store) look_for_left: bool,
}

impl Fresh {
    /// A ballot of `poll` was stored.
    pub fn add(&mut self, poll: &str) {
        self.count += 1;
        if !self.polls.contains_key(poll) {
            self.polls.insert(poll.to_owned(), Instant::now());
        }
    }

    /// Whether any poll waits for its mix (the writer then wakes when idle).
    pub fn pending(&self) -> bool {
        !self.polls.is_empty() || self.look_for_left
    }

    /// The poll to mix now, if any: the one waiting longest among those
    /// whose mix may run (`idle`: the writer has nothing else to do; else
    /// only those overdue), and whose cooling after its last mix is over.
    pub fn next(&self, now: Instant, idle: bool) -> Option<String> {
        let overdue_all = self.count >= MAX_FRESH;
        self.polls
            .iter()
            .filter(|(_, since)| idle || overdue_all || now.saturating_duration_since(**since) >= MIX_EVERY)
            .filter(|(poll, _)| self.retry.get(*poll).is_none_or(|t| now >= *t))
            .filter(|(poll, _)| {
                self.last.get(*poll).is_none_or(|(end, took)| now >= *end + (*took * COOL).max(MIN_GAP))
            })
            .min_by_key(|(_, since)| **since)
            .map(|(poll, _)| poll.clone())
    }

    /// `poll` was mixed (or erased, or mixed by a change: `took` is then
    /// `None`): its new ballots are placed.
    pub fn mixed(&mut self, poll: &str, took: Option<Duration>) {
        if self.polls.remove(poll).is_some() && self.polls.is_empty() {
            self.count = 0;
        }
        self.retry.remove(poll);
        if let Some(took) = took {
            if self.last.len() >= COSTS {
                self.last.clear();
            }
            self.last.insert(poll.to_owned(), (Instant::now(), took));
        }
    }

    /// `poll`'s mix failed: tried again after [`MIX_RETRY`].
    pub fn failed(&mut self, poll: &str) {
        self.retry.insert(poll.to_owned(), Instant::now() + MIX_RETRY);
    }

    /// Every poll waiting for its mix, now, whatever its cooling: for a
    /// writer that stops.
    pub fn drain(&mut self) -> Vec<String> {
        self.count = 0;
        self.retry.clear();
        std::mem::take(&mut self.polls).into_keys().collect()
    }

    /// Adds the polls a previous run left with staged ballots.
    pub fn add_left(&mut self, polls: Vec<String>) {
        for poll in polls {
            self.add(&poll);
        }
    }

    #[cfg(test)]
    pub fn waiting(&self) -> Vec<String> {
        self.polls.keys().cloned().collect()
    }
}

/// Mixes the new ballots of poll `id` in the transaction `tx` holds open,
/// if it still exists and lives on `today`: its staged ballots into their
/// groups (`rows::Groups`), and the groups they go to, and those a change
/// took a ballot out of, rewritten under new group keys; the poll's
/// document, counts and groups under a new data key. The whole poll when
/// its number of groups changes ([`mix_whole`]).
pub(in crate::store) fn mix(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, id: &str, today: Day) -> Result<(), Error> {
    let began = Instant::now();
    let Some(found) = tx.poll(id, Some(today), Cols::BodyTallies)? else { return Ok(()) };
    let key = match data_key(keys, id, found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        Err(Error::NotFound) => return Ok(()),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, id, found.body()?)?;
    let layout = Layout::of(&doc.questions);
    let mut state = open_state_in_tx(&key, (seen, began), id, &layout, found.tallies()?)?;
    let groups = open_groups(&key, id, tx.groups(id)?.as_deref())?;
    let (lo, hi) = STAGED_KEYS;
    let staged_rows = tx.ballots_between(id, &lo, &hi)?;
    // More groups once the poll has grown past twice their number's
    // share; fewer only once it has shrunk past half of it, so that a poll
    // whose size hovers at a bound is not rewritten whole at every mix.
    let wanted = Groups::bits_for(groups.count() + staged_rows.len() as u64);
    if wanted > groups.bits || wanted + 1 < groups.bits {
        return mix_whole(tx, keys, seen, id, today);
    }
    // The staged rows are those the counts' digest holds beyond the groups'.
    let mut staged_digest = state.digest;
    staged_digest.merge(&groups.digest(), false);
    check_digest(id, staged_digest, &staged_rows)?;
    let opener = BallotKeys::new(&key, &groups);
    let mut into: BTreeMap<usize, Vec<Stored>> =
        groups.groups.iter().enumerate().filter(|(_, g)| g.dirty).map(|(i, _)| (i, Vec::new())).collect();
    // Ballots without a tag go to one group drawn at random: a mix of
    // many such ballots rewrites one group, not one each.
    let drawn = rand::random_range(0..groups.groups.len());
    for row in &staged_rows {
        let stored = opener.open(id, &doc.questions, row)?;
        let g = stored.tag.as_ref().map_or(drawn, |t| groups.of_tag(t.bytes()));
        into.entry(g).or_default().push(stored);
    }
    for (&g, ballots) in &mut into {
        let (lo, hi) = Groups::range(g);
        let rows = tx.ballots_between(id, &lo, &hi)?;
        check_digest(id, groups.groups[g].digest, &rows)?;
        for row in &rows {
            ballots.push(opener.open(id, &doc.questions, row)?);
        }
        tx.delete_ballots_between(id, &lo, &hi)?;
    }
    tx.delete_ballots_between(id, &lo, &hi)?;
    let mut groups = groups;
    let receipts = takes_receipts(&doc, today);
    write_groups(tx, id, &layout, into, &mut groups, receipts)?;
    state.digest = groups.digest();
    reseal(tx, (keys, seen), id, (found.row.expires_on, today), (&doc, &mut state, &groups), None)?;
    Ok(())
}

/// Mixes poll `id` whole: every ballot into groups as many as its size
/// asks for, every group under a new key (when a poll's groups split, when
/// it drops the tags of format 1, the day's key work).
pub(in crate::store) fn mix_whole(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    today: Day,
) -> Result<(), Error> {
    let Some(mut image) = open_image(tx, keys, seen, id, Some(today))? else { return Ok(()) };
    write_whole(tx, keys, seen, id, &mut image, today)
}

/// Writes `image` back whole: its ballots into `2^bits` groups for their
/// number, each under a new key, at new keys in random order; its
/// document, counts (one version on, the digest of the new rows) and groups
/// under a new data key, wrapped under its lease from `today`. A tag of
/// format 1 ([`Tag::FormatOne`]) is dropped once the poll takes no
/// receipts: nothing may follow that old key to its ballot any more.
pub(super) fn write_whole(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    image: &mut Image,
    today: Day,
) -> Result<(), Error> {
    let mut groups = Groups::with_bits(Groups::bits_for(image.ballots.len() as u64));
    let mut into: BTreeMap<usize, Vec<Stored>> = (0..groups.groups.len()).map(|g| (g, Vec::new())).collect();
    let n = groups.groups.len();
    for (_, stored) in image.ballots.drain(..) {
        let g = match &stored.tag {
            Some(t) => groups.of_tag(t.bytes()),
            None => rand::random_range(0..n),
        };
        into.entry(g).or_default().push(stored);
    }
    tx.delete_ballots_between(id, &[0; 16], &[0xff; 16])?;
    let receipts = takes_receipts(&image.doc, today);
    let old_tags = write_groups(tx, id, &image.layout, into, &mut groups, receipts)?;
    if !old_tags {
        // No receipt of format 1 can find a ballot any more: its hash keys go.
        image.doc.format_one_receipts = None;
    }
    image.state.digest = groups.digest();
    image.key = reseal(
        tx,
        (keys, seen),
        id,
        (image.row.expires_on, today),
        (&image.doc, &mut image.state, &groups),
        Some(old_tags),
    )?;
    image.groups = groups;
    Ok(())
}

/// Whether the poll's receipts may still be used (a tag of format 1 is
/// kept only then).
fn takes_receipts(doc: &Doc, today: Day) -> bool {
    doc.vote_changes && !doc.is_closed(today)
}

/// Writes the ballots of each group of `into` under a new key of its own,
/// each at a new key (its group's number, then drawn from its tag, or
/// random), all groups' rows in one go, and notes each group's key, count
/// and digest in `groups`. Their old rows are gone already. Whether a tag
/// of format 1 was kept.
fn write_groups(
    tx: &mut dyn Rows,
    id: &str,
    layout: &Layout,
    into: BTreeMap<usize, Vec<Stored>>,
    groups: &mut Groups,
    receipts: bool,
) -> Result<bool, Error> {
    let mut rows = Vec::new();
    let mut old_tags = false;
    for (g, ballots) in into {
        if ballots.is_empty() {
            groups.groups[g] = Group::default();
            continue;
        }
        let key = DataKey::generate().map_err(Error::internal)?;
        let mut group = Group { key: Some(*key.export()), count: 0, digest: Digest::default(), dirty: false };
        let mut taken = std::collections::HashSet::with_capacity(ballots.len());
        for mut stored in ballots {
            if matches!(stored.tag, Some(Tag::FormatOne(_))) {
                if receipts {
                    old_tags = true;
                } else {
                    stored.tag = None;
                }
            }
            let at = match &stored.tag {
                Some(tag) => settled_key(&key, g, tag.bytes()),
                None => random_key(Some(g))?,
            };
            // Two ballots of one tag (one receipt) cannot be: a receipt
            // casts one ballot. A collision of random keys is as unlikely;
            // either would lose a ballot, so it fails the mix instead.
            if !taken.insert(at) {
                return Err(Error::internal(anyhow::anyhow!("two ballots would share a key")));
            }
            let plain = rows::ballot_bytes(layout, stored.day, &stored.ballot, stored.tag.as_ref())?;
            let sealed = key.seal(&place::ballot(id, &at), &plain).map_err(Error::internal)?;
            group.digest.count(&at, &sealed, true);
            group.count += 1;
            rows.push(BallotRow { key: at.to_vec(), sealed });
        }
        groups.groups[g] = group;
    }
    rows.shuffle(&mut rand::rng());
    tx.insert_ballots(id, rows)?;
    Ok(old_tags)
}

/// Seals the poll's document, counts (one version on) and groups under a
/// new data key, wrapped under its lease from `today`; answers that key.
/// The old data key is then wrapped nowhere, and dies with its lease.
fn reseal(
    tx: &mut dyn Rows,
    (keys, seen): (&Keyring, &Seen),
    id: &str,
    (expires_on, today): (Day, Day),
    (doc, state, groups): (&Doc, &mut State, &Groups),
    old_tags: Option<bool>,
) -> Result<DataKey, Error> {
    let key = DataKey::generate().map_err(Error::internal)?;
    state.version += 1;
    let (key_day, wrapped) = super::ops::wrap(keys, &key, id, expires_on, today)?;
    let body = key.seal(&place::body(id), &doc.to_bytes()?).map_err(Error::internal)?;
    let tallies = key.seal(&place::tallies(id), &rows::state_bytes(state)?).map_err(Error::internal)?;
    let groups = key.seal(&place::groups(id), &groups.to_bytes()).map_err(Error::internal)?;
    tx.reseal_poll(
        id,
        &ResealedRow { key_day, data_key: &wrapped, body: &body, tallies: &tallies, groups: &groups, old_tags },
    )?;
    seen.stage(id, state.version);
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_is_mixed_when_idle_or_overdue_and_cools_after_its_mix() {
        let mut f = Fresh::default();
        let t0 = Instant::now();
        assert_eq!(f.next(t0, true), None);
        f.add("a");
        assert_eq!(f.next(t0, false), None, "not overdue under load");
        assert_eq!(f.next(t0, true), Some("a".into()), "idle");
        assert_eq!(f.next(Instant::now() + MIX_EVERY, false), Some("a".into()), "overdue");
        f.mixed("a", Some(Duration::from_secs(1)));
        assert!(!f.pending());
        f.add("a");
        let now = Instant::now();
        assert_eq!(f.next(now + Duration::from_secs(8), true), None, "cooling: nine times its last mix");
        assert_eq!(f.next(now + Duration::from_secs(10), true), Some("a".into()));
        f.mixed("a", Some(Duration::from_millis(1)));
        f.add("a");
        let now = Instant::now();
        assert_eq!(f.next(now + Duration::from_millis(500), true), None, "a second at least");
        assert_eq!(f.next(now + MIN_GAP, true), Some("a".into()));
        f.failed("a");
        assert_eq!(f.next(now + Duration::from_secs(5), true), None, "a failed mix waits");
        assert_eq!(f.next(now + MIX_RETRY + Duration::from_secs(1), true), Some("a".into()));
        // The one waiting longest goes first.
        let mut g = Fresh::default();
        g.add("late");
        std::thread::sleep(Duration::from_millis(2));
        g.add("later");
        g.mixed("late", None);
        g.add("late");
        assert_eq!(g.next(Instant::now(), true), Some("later".into()));
    }
}
