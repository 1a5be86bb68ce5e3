//! A ballot's plaintext, and what of a poll's questions its counts and
//! ballots need ([`Layout`]).
//!
//! Format 2: a flag and a tag ([`Tag`]), the day it was cast, and its
//! answers, padded to one width per poll ([`Layout::width`]), so every
//! ballot of a poll has the same length whatever its answers or whether it
//! came with a receipt. The tag (sealed with the rest) is what lets the mix,
//! which never sees a receipt, give the ballot the key its receipt finds
//! under the poll's next data key (`keys::settled_key`). Format 1 (no flag,
//! no tag) is read by the upgrade only.

use crate::day::Day;
use crate::domain::{Ballot, Question, QuestionKind};
use crate::error::Error;

use super::super::seal::padded;
use super::corrupt;

/// The flag and tag before the day: the tag's kind ([`Tag::flag`]) and
/// the tag, or `0` and zeros.
const TAGGED: usize = 1 + 16;

/// What lets a receipt find its ballot after any mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Drawn from the receipt the ballot came with (`keys::receipt_tag`):
    /// nothing outside the sealed ballot ever held it.
    Receipt([u8; 16]),
    /// The key the ballot's row had in format 1, which its receipt still
    /// finds through format 1's hash keys. That key lay unsealed in the
    /// files of then (beside its code row's `xmin` on PostgreSQL), so a
    /// copy of then could follow it to the ballot for as long as it lasts:
    /// it is replaced by the receipt's own tag when the receipt is used,
    /// and dropped at the first mix after the poll stops taking receipts
    /// (`writer::mix`).
    FormatOne([u8; 16]),
}

impl Tag {
    pub fn bytes(&self) -> &[u8; 16] {
        match self {
            Tag::Receipt(t) | Tag::FormatOne(t) => t,
        }
    }

    fn flag(&self) -> u8 {
        match self {
            Tag::Receipt(_) => 1,
            Tag::FormatOne(_) => 2,
        }
    }
}

/// Decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The longest stored form ([`Ballot::to_stored`]) a ballot of these
/// questions can have, after its 10-byte day (format 1's whole width).
pub fn ballot_width(questions: &[Question]) -> usize {
    const NULL: usize = 4;
    let list = |items: &mut dyn Iterator<Item = usize>| {
        let (n, sum) = items.fold((0usize, 0usize), |(n, s), len| (n + 1, s + len));
        2 + sum + n.saturating_sub(1)
    };
    let answer = |q: &Question| -> usize {
        let n = q.options.len();
        let widest = match q.kind {
            QuestionKind::Single => digits(n.saturating_sub(1)),
            QuestionKind::Scale => digits(q.scale().map_or(0, |(_, hi)| usize::from(hi))),
            QuestionKind::Multiple => list(&mut (0..n).map(digits)),
            QuestionKind::Ranked => list(&mut (0..n).map(|_| digits(n).max(NULL))),
            // One availability code (0, 1, 2) per slot.
            QuestionKind::Schedule => list(&mut (0..n).map(|_| 1)),
        };
        widest.max(NULL)
    };
    10 + list(&mut questions.iter().map(answer))
}

/// A ballot's plaintext: its receipt's tag if it came with one, the day it
/// was cast and its answers, padded to its poll's width.
pub fn ballot_bytes(layout: &Layout, day: Day, ballot: &Ballot, tag: Option<&Tag>) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(layout.width);
    out.push(tag.map_or(0, Tag::flag));
    out.extend_from_slice(tag.map_or(&[0u8; 16], |t| t.bytes()));
    out.extend_from_slice(day.to_string().as_bytes());
    out.extend_from_slice(ballot.to_stored().as_bytes());
    let width = layout.width;
    if out.len() > width {
        return Err(Error::internal(anyhow::anyhow!("a ballot is wider than its poll's width")));
    }
    Ok(padded(out, width, b' '))
}

/// A ballot as [`ballot_bytes`] wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub day: Day,
    pub ballot: Ballot,
    pub tag: Option<Tag>,
}

/// What [`ballot_bytes`] wrote.
pub fn ballot_from(questions: &[Question], bytes: &[u8]) -> Result<Stored, Error> {
    let (flag, raw) = match (bytes.first(), bytes.get(1..TAGGED)) {
        (Some(&f), Some(t)) => (f, t),
        _ => return Err(corrupt("ballot")),
    };
    let mut t = [0u8; 16];
    t.copy_from_slice(raw);
    let tag = match flag {
        0 => None,
        1 => Some(Tag::Receipt(t)),
        2 => Some(Tag::FormatOne(t)),
        _ => return Err(corrupt("ballot")),
    };
    let (day, ballot) = ballot_from_v1(questions, &bytes[TAGGED..])?;
    Ok(Stored { day, ballot, tag })
}

/// A ballot of format 1: its day and answers.
pub fn ballot_from_v1(questions: &[Question], bytes: &[u8]) -> Result<(Day, Ballot), Error> {
    let day = bytes.get(..10).and_then(|d| std::str::from_utf8(d).ok()).and_then(Day::parse);
    let rest = bytes.get(10..).and_then(|r| std::str::from_utf8(r).ok());
    match (day, rest) {
        (Some(day), Some(rest)) => {
            Ok((day, Ballot::from_stored(questions, rest.trim_end()).ok_or_else(|| corrupt("ballot"))?))
        }
        _ => Err(corrupt("ballot")),
    }
}

/// What the counts and ballots of a poll need to know of its questions:
/// small, so the writer keeps it for every poll it counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Per question: its counters, the first value counted (a scale's
    /// minimum, else 0), and its options if ranked (else 0).
    pub(super) questions: Vec<(usize, usize, usize)>,
    /// Every ballot's plaintext length: [`ballot_width`] and the tag.
    pub width: usize,
}

impl Layout {
    pub fn of(questions: &[Question]) -> Layout {
        Layout {
            questions: questions
                .iter()
                .map(|q| {
                    let first = q.scale().map_or(0, |(lo, _)| usize::from(lo));
                    let ranked = if q.kind == QuestionKind::Ranked { q.options.len() } else { 0 };
                    (q.counters(), first, ranked)
                })
                .collect(),
            width: TAGGED + ballot_width(questions),
        }
    }
}
