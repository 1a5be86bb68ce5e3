//! A poll's counts as sealed: one value per poll, written whole once per
//! group commit, so no copy of the log shows which options a commit
//! counted.
//!
//! Format 2 ([`State`]): a version that grows with every write, the digest
//! of the poll's ballot rows (`keys::Digest`), the bitmap of its spent
//! invite codes, then the counts (format 1's whole value): fixed-width
//! numbers in an order the questions decide, and days padded to a power of
//! two of them. The bitmap is as long as the poll's codes issued, which
//! only issuing changes: a vote never changes the value's length.

use crate::day::Day;
use crate::domain::{Ballot, Counter, Tallies};
use crate::error::Error;

use super::super::keys::Digest;
use super::Layout;
use super::corrupt;

/// The first byte of a format-2 value.
const STATE_FORMAT: u8 = 2;

/// Everything a poll's sealed counts hold (format 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// Grows by one with every write of the value: a value put back as it
    /// was is older than one already read.
    pub version: u64,
    /// The digest of the poll's ballot rows as this value counts them.
    pub digest: Digest,
    /// Bit `i` set: the invite code of slot `i` has cast its ballot.
    pub spent: Vec<u8>,
    pub tallies: Tallies,
}

impl State {
    /// A new poll's: nothing counted, no code issued.
    pub fn new(layout: &Layout) -> State {
        State { version: 0, digest: Digest::default(), spent: Vec::new(), tallies: empty_tallies(layout) }
    }

    /// Whether the code of `slot` has cast its ballot.
    pub fn is_spent(&self, slot: u32) -> bool {
        let i = slot as usize;
        self.spent.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
    }

    /// Marks the code of `slot` spent (or, `false`, not spent: a ballot
    /// that was not stored after all); an error for a slot beyond the codes
    /// issued.
    pub fn set_spent(&mut self, slot: u32, spent: bool) -> Result<(), Error> {
        let i = slot as usize;
        let byte = self.spent.get_mut(i / 8).ok_or_else(|| corrupt("invite slot"))?;
        if spent {
            *byte |= 1 << (i % 8);
        } else {
            *byte &= !(1 << (i % 8));
        }
        Ok(())
    }

    /// Room in the bitmap for `issued` codes.
    pub fn hold_codes(&mut self, issued: u64) {
        let bytes = usize::try_from(issued.div_ceil(8)).unwrap_or(usize::MAX);
        if self.spent.len() < bytes {
            self.spent.resize(bytes, 0);
        }
    }

    /// How many codes have cast their ballot.
    pub fn spent_count(&self) -> u64 {
        self.spent.iter().map(|b| u64::from(b.count_ones())).sum()
    }
}

/// A [`State`]'s plaintext.
pub fn state_bytes(s: &State) -> Result<Vec<u8>, Error> {
    let tallies = tallies_bytes(&s.tallies)?;
    let mut out = Vec::with_capacity(1 + 8 + Digest::LEN + 4 + s.spent.len() + tallies.len());
    out.push(STATE_FORMAT);
    out.extend_from_slice(&s.version.to_le_bytes());
    out.extend_from_slice(&s.digest.to_bytes());
    out.extend_from_slice(&u32::try_from(s.spent.len()).map_err(|_| corrupt("spent codes"))?.to_le_bytes());
    out.extend_from_slice(&s.spent);
    out.extend_from_slice(&tallies);
    Ok(out)
}

/// What [`state_bytes`] wrote, for a poll of this layout.
pub fn state_from(layout: &Layout, bytes: &[u8]) -> Result<State, Error> {
    let bad = || corrupt("counts");
    if bytes.first() != Some(&STATE_FORMAT) {
        return Err(bad());
    }
    let version = u64::from_le_bytes(bytes.get(1..9).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
    let digest: [u8; 32] = bytes.get(9..41).ok_or_else(bad)?.try_into().map_err(|_| bad())?;
    let len = u32::from_le_bytes(bytes.get(41..45).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let spent = bytes.get(45..45 + len).ok_or_else(bad)?.to_vec();
    let tallies = tallies_from(layout, bytes.get(45 + len..).ok_or_else(bad)?)?;
    Ok(State { version, digest: Digest::from_bytes(&digest), spent, tallies })
}

/// Empty counts for a poll of this layout.
pub fn empty_tallies(layout: &Layout) -> Tallies {
    Tallies {
        total: 0,
        votes: layout.questions.iter().map(|&(n, _, _)| vec![0; n]).collect(),
        answered: vec![0; layout.questions.len()],
        pairwise: layout
            .questions
            .iter()
            .map(|&(_, _, r)| vec![vec![0; r]; r])
            .map(|m| if m.is_empty() { Vec::new() } else { m })
            .collect(),
        by_day: Vec::new(),
    }
}

/// Adds `by` (1, or -1 for a ballot taken back) to every count of
/// `ballot`'s answers; with `day`, to the ballots of that day and the total
/// too (a changed ballot keeps its day and is counted once). A day's count
/// that falls to zero goes, so a withdrawn ballot leaves not even its day.
pub fn tally(t: &mut Tallies, layout: &Layout, ballot: &Ballot, day: Option<Day>, by: i64) -> Result<(), Error> {
    let bump = |n: &mut u64| -> Result<(), Error> {
        *n = n.checked_add_signed(by).ok_or_else(|| corrupt("counter"))?;
        Ok(())
    };
    for (q, answer) in ballot.answers().iter().enumerate() {
        if answer.is_some() {
            bump(t.answered.get_mut(q).ok_or_else(|| corrupt("tally index"))?)?;
        }
    }
    ballot.try_for_each_counter(|counter| {
        let slot = match counter {
            Counter::Option { question, option } => {
                let first = layout.questions.get(question).map_or(0, |&(_, first, _)| first);
                t.votes.get_mut(question).and_then(|v| v.get_mut(option.checked_sub(first)?))
            }
            Counter::Answered { .. } => return Ok(()),
            Counter::Pair { question, above, below } => {
                t.pairwise.get_mut(question).and_then(|m| m.get_mut(above)).and_then(|r| r.get_mut(below))
            }
        };
        bump(slot.ok_or_else(|| corrupt("tally index"))?)
    })?;
    if let Some(day) = day {
        bump(&mut t.total)?;
        let at = t.by_day.partition_point(|(d, _)| *d < day);
        if t.by_day.get(at).is_none_or(|(d, _)| *d != day) {
            t.by_day.insert(at, (day, 0));
        }
        bump(&mut t.by_day[at].1)?;
        if t.by_day[at].1 == 0 {
            t.by_day.remove(at);
        }
    }
    Ok(())
}

/// The counts' plaintext: fixed-width numbers in the questions' order, then
/// the days, padded to a power of two of them.
pub fn tallies_bytes(t: &Tallies) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut put = |n: u64| -> Result<(), Error> {
        out.extend_from_slice(&u32::try_from(n).map_err(|_| corrupt("counter"))?.to_le_bytes());
        Ok(())
    };
    put(t.total)?;
    for v in &t.votes {
        v.iter().try_for_each(|n| put(*n))?;
    }
    t.answered.iter().try_for_each(|n| put(*n))?;
    for m in &t.pairwise {
        m.iter().flatten().try_for_each(|n| put(*n))?;
    }
    put(t.by_day.len() as u64)?;
    let slots = t.by_day.len().next_power_of_two().max(4);
    for i in 0..slots {
        let (day, n) = t.by_day.get(i).map_or((0, 0), |(d, n)| (day_number(*d), *n));
        put(day)?;
        put(n)?;
    }
    Ok(out)
}

/// What [`tallies_bytes`] wrote, for a poll of this layout.
pub fn tallies_from(layout: &Layout, bytes: &[u8]) -> Result<Tallies, Error> {
    let mut t = empty_tallies(layout);
    let mut words = bytes.chunks_exact(4).map(|w| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    let mut next = || words.next().ok_or_else(|| corrupt("tallies"));
    t.total = next()?;
    for v in &mut t.votes {
        for n in v.iter_mut() {
            *n = next()?;
        }
    }
    for n in &mut t.answered {
        *n = next()?;
    }
    for m in &mut t.pairwise {
        for n in m.iter_mut().flatten() {
            *n = next()?;
        }
    }
    let days = usize::try_from(next()?).map_err(|_| corrupt("tallies"))?;
    for _ in 0..days {
        let (d, n) = (next()?, next()?);
        t.by_day.push((day_of(d).ok_or_else(|| corrupt("tally day"))?, n));
    }
    // Exactly the padding `tallies_bytes` writes, and nothing after it: a
    // value of another format or layout read as this one fails here
    // instead of passing as counts.
    let padding = 2 * (days.next_power_of_two().max(4) - days);
    let rest: Vec<u64> = words.collect();
    if !bytes.len().is_multiple_of(4) || rest.len() != padding || rest.iter().any(|w| *w != 0) {
        return Err(corrupt("tallies"));
    }
    Ok(t)
}

fn day_number(d: Day) -> u64 {
    u64::try_from(d.number()).unwrap_or(0)
}

fn day_of(n: u64) -> Option<Day> {
    Day::from_number(i64::try_from(n).ok()?)
}
