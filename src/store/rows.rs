//! What each sealed value holds, in plaintext: the poll document, a ballot,
//! the counts. Engine-neutral: any store seals and opens these bytes.
//!
//! Why one module: the layouts decide what a ciphertext's length can tell,
//! so they are kept together and padded here:
//! - the poll document (every setting and text of a poll, its language
//!   versions and its media listing) is JSON padded to a [`bucket`];
//! - a ballot is its day and its answers padded to one width per poll
//!   ([`ballot_width`]), so every ballot of a poll has the same length, and a
//!   changed ballot is rewritten in place whatever its answers;
//! - the counts are fixed-width numbers in an order the questions decide,
//!   and days padded to a power of two: one value per poll, written once per
//!   group commit, so no copy of the WAL shows which option a commit counted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{
    Ballot, Counter, DuplicateCheck, Lang, LanguageVersion, MediaItem, NewMedia, NewPoll, Poll, PollPatch, Question,
    QuestionKind, ResultsVisibility, Slot, Tallies, Title,
};
use crate::error::Error;
use crate::secret::{MediaId, PollId, TokenHash};

use super::seal::{bucket, padded};

/// Everything of a poll but its days (kept readable for the engine) and
/// its ballots, counts and media bytes (sealed apart).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Doc {
    token: String,
    pub title: Title,
    pub lang: Lang,
    pub visibility: ResultsVisibility,
    /// Closed by its admin (a deadline closes it too: [`Doc::is_closed`]).
    pub closed: bool,
    pub closes_on: Option<Day>,
    pub shuffle: bool,
    pub duplicate_check: DuplicateCheck,
    pub vote_changes: bool,
    pub questions: Vec<Question>,
    #[serde(default)]
    pub translations: BTreeMap<Lang, LanguageVersion>,
    #[serde(default)]
    pub media: Vec<DocMedia>,
    /// Ballots of a poll from before encryption keep the keys their
    /// receipts gave them then (unkeyed hashes): receipts look there too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy_receipts: bool,
}

/// A media item's listing; its bytes are sealed apart, padded to `padded`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DocMedia {
    pub id: String,
    pub question: Option<usize>,
    pub kind: String,
    pub mime: String,
    pub size: u64,
    pub padded: u64,
    pub sha256: String,
    pub alt: String,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

fn corrupt(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("stored {what} is malformed"))
}

impl DocMedia {
    pub fn new(m: &NewMedia) -> DocMedia {
        let sha: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&m.clean.bytes).into();
        DocMedia {
            id: m.id.as_str().to_owned(),
            question: m.slot.question(),
            kind: m.clean.kind.as_str().to_owned(),
            mime: m.clean.mime.to_owned(),
            size: m.clean.bytes.len() as u64,
            padded: bucket(m.clean.bytes.len()) as u64,
            sha256: crate::secret::hex(&sha),
            alt: m.alt.clone(),
            width: m.clean.width,
            height: m.clean.height,
        }
    }

    pub fn item(&self) -> Result<MediaItem, Error> {
        let mut sha = [0u8; 32];
        if self.sha256.len() != 64 {
            return Err(corrupt("media hash"));
        }
        for (i, b) in sha.iter_mut().enumerate() {
            *b = u8::from_str_radix(&self.sha256[2 * i..2 * i + 2], 16).map_err(|_| corrupt("media hash"))?;
        }
        Ok(MediaItem {
            id: MediaId::parse(&self.id).ok_or_else(|| corrupt("media id"))?,
            slot: Slot::from_question(self.question.map(|q| q as i64)).ok_or_else(|| corrupt("media slot"))?,
            kind: crate::media::Kind::from_str(&self.kind).ok_or_else(|| corrupt("media kind"))?,
            mime: self.mime.clone(),
            size: self.size,
            sha256: sha,
            alt: self.alt.clone(),
            width: self.width,
            height: self.height,
        })
    }

    pub fn slot(&self) -> Option<usize> {
        self.question
    }
}

impl Doc {
    pub fn new(token: &TokenHash, poll: &NewPoll, media: &[NewMedia]) -> Doc {
        Doc {
            token: crate::secret::hex(&token.0),
            title: poll.title.clone(),
            lang: poll.lang,
            visibility: poll.visibility,
            closed: false,
            closes_on: poll.closes_on,
            shuffle: poll.shuffle_options,
            duplicate_check: poll.duplicate_check,
            vote_changes: poll.vote_changes,
            questions: poll.questions.clone(),
            translations: BTreeMap::new(),
            media: media.iter().map(DocMedia::new).collect(),
            legacy_receipts: false,
        }
    }

    /// For a poll stored before encryption (the upgrade's pass): its
    /// settings are set by the pass, its receipts keep their old keys.
    pub fn legacy(
        token: &TokenHash,
        title: Title,
        lang: Lang,
        visibility: ResultsVisibility,
        questions: Vec<Question>,
    ) -> Doc {
        Doc {
            token: crate::secret::hex(&token.0),
            title,
            lang,
            visibility,
            closed: false,
            closes_on: None,
            shuffle: false,
            duplicate_check: DuplicateCheck::Network,
            vote_changes: false,
            questions,
            translations: BTreeMap::new(),
            media: Vec::new(),
            legacy_receipts: true,
        }
    }

    /// Whether the poll takes no votes on `today`.
    pub fn is_closed(&self, today: Day) -> bool {
        self.closed || deadline_passed(self.closes_on, today)
    }

    /// The poll as the application sees it, with the days kept beside.
    /// Takes the document: its questions and translations move into the
    /// poll instead of being copied (every read of a poll opens a fresh
    /// document, and the copies were 5 % of a poll JSON request's
    /// instructions: docs/PERFORMANCE.md, "Crypto erasure").
    pub fn into_poll(self, id: &PollId, created_on: Day, expires_on: Day, today: Day) -> Result<Poll, Error> {
        let token = TokenHash::from_slice(&unhex(&self.token).ok_or_else(|| corrupt("token hash"))?)
            .ok_or_else(|| corrupt("token hash"))?;
        let mut media = self.media.iter().map(DocMedia::item).collect::<Result<Vec<_>, _>>()?;
        media.sort_by_key(|m| m.slot);
        let closed = self.is_closed(today);
        Ok(Poll {
            id: id.clone(),
            token_hash: token,
            title: self.title,
            lang: self.lang,
            visibility: self.visibility,
            closed,
            closes_on: self.closes_on,
            shuffle_options: self.shuffle,
            duplicate_check: self.duplicate_check,
            vote_changes: self.vote_changes,
            created_on,
            expires_on,
            questions: self.questions,
            translations: self.translations,
            media,
        })
    }

    /// Applies a patch checked against this poll (all but the expiry, which
    /// is the row's). True if text was replaced or removed (its old bytes
    /// are then erased from the WAL at once).
    pub fn apply(&mut self, patch: &PollPatch, today: Day) -> bool {
        // Reopening a poll past its deadline removes the deadline, or it
        // would stay closed (docs/DECISIONS.md).
        if patch.reopens_past(self.closes_on, today) {
            self.closes_on = None;
        }
        if let Some(closed) = patch.closed {
            self.closed = closed;
        }
        if let Some(day) = patch.closes_on {
            self.closes_on = day;
        }
        if let Some(v) = patch.visibility {
            self.visibility = v;
        }
        if let Some(s) = patch.shuffle_options {
            self.shuffle = s;
        }
        if let Some(d) = patch.duplicate_check {
            self.duplicate_check = d;
        }
        if let Some(c) = patch.vote_changes {
            self.vote_changes = c;
        }
        let mut erased = false;
        for (lang, version) in &patch.translations {
            match version {
                Some(v) => erased |= self.translations.insert(*lang, v.clone()).is_some(),
                None => erased |= self.translations.remove(lang).is_some(),
            }
        }
        erased
    }

    /// The JSON, padded with spaces to its bucket.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let json = serde_json::to_vec(self).map_err(Error::internal)?;
        let len = bucket(json.len());
        Ok(padded(json, len, b' '))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Doc, Error> {
        serde_json::from_slice(bytes).map_err(|e| Error::internal(anyhow::anyhow!("stored poll document: {e}")))
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The longest stored form ([`Ballot::to_stored`]) a ballot of these
/// questions can have: every ballot of a poll is padded to it (after its
/// 10-byte day), so all have one length.
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
        };
        widest.max(NULL)
    };
    10 + list(&mut questions.iter().map(answer))
}

/// A ballot's plaintext: the day it was cast and its answers, padded.
pub fn ballot_bytes(layout: &Layout, day: Day, ballot: &Ballot) -> Result<Vec<u8>, Error> {
    let mut out = day.to_string().into_bytes();
    out.extend_from_slice(ballot.to_stored().as_bytes());
    let width = layout.width;
    if out.len() > width {
        return Err(Error::internal(anyhow::anyhow!("a ballot is wider than its poll's width")));
    }
    Ok(padded(out, width, b' '))
}

/// What [`ballot_bytes`] wrote.
pub fn ballot_from(questions: &[Question], bytes: &[u8]) -> Result<(Day, Ballot), Error> {
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
    questions: Vec<(usize, usize, usize)>,
    /// Every ballot's plaintext length ([`ballot_width`]).
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
            width: ballot_width(questions),
        }
    }
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

/// The total of counts [`tallies_bytes`] wrote (it comes first), without
/// the layout.
pub fn tallies_total(bytes: &[u8]) -> Result<u64, Error> {
    let w = bytes.get(..4).ok_or_else(|| corrupt("tallies"))?;
    Ok(u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
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
    Ok(t)
}

fn day_number(d: Day) -> u64 {
    u64::try_from(d.number()).unwrap_or(0)
}

fn day_of(n: u64) -> Option<Day> {
    Day::from_number(i64::try_from(n).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Answer, NewPoll};
    use serde_json::json;

    fn questions() -> Vec<Question> {
        NewPoll::from_json(&json!({
            "title": "t", "lang": "en", "expiryDays": 7,
            "questions": [
                {"label": "Q1", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]},
                {"type": "multiple", "label": "Q2", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"], "minChoices": 1, "maxChoices": 12},
                {"type": "ranked", "label": "Q3", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]},
                {"type": "scale", "label": "Q4", "scaleMin": 0, "scaleMax": 10},
                {"label": "Q5", "options": ["a", "b"], "required": false}
            ]
        }))
        .unwrap()
        .questions
    }

    #[test]
    fn every_ballot_of_a_poll_has_one_width() {
        let qs = questions();
        let width = ballot_width(&qs);
        let widest = Ballot::new(
            &qs,
            vec![
                Some(Answer::Choice(11)),
                Some(Answer::Choices((0..12).collect())),
                Some(Answer::Ranks((1..=12).rev().map(Some).collect())),
                Some(Answer::Value(10)),
                None,
            ],
        )
        .unwrap();
        let narrow = Ballot::new(&qs, vec![Some(Answer::Choice(0)), None, None, Some(Answer::Value(0)), None]).unwrap();
        let day = Day::parse("2026-11-27").unwrap();
        for b in [&widest, &narrow] {
            let bytes = ballot_bytes(&Layout::of(&qs), day, b).unwrap();
            assert_eq!(bytes.len(), width);
            assert_eq!(ballot_from(&qs, &bytes).unwrap(), (day, b.clone()));
        }
        // The bound is tight enough to matter: the widest ballot uses most of it.
        assert!(10 + widest.to_stored().len() + 40 >= width, "{width}");
    }

    #[test]
    fn counts_round_trip_and_follow_ballots_exactly() {
        let qs = questions();
        let l = Layout::of(&qs);
        let mut t = empty_tallies(&l);
        let b = Ballot::new(
            &qs,
            vec![
                Some(Answer::Choice(3)),
                Some(Answer::Choices(vec![1, 4])),
                Some(Answer::Ranks({
                    let mut r = vec![None; 12];
                    r[2] = Some(1);
                    r[0] = Some(2);
                    r
                })),
                Some(Answer::Value(7)),
                None,
            ],
        )
        .unwrap();
        let d1 = Day::parse("2026-11-27").unwrap();
        let d0 = Day::parse("2026-11-20").unwrap();
        tally(&mut t, &l, &b, Some(d1), 1).unwrap();
        tally(&mut t, &l, &b, Some(d0), 1).unwrap();
        assert_eq!(t.total, 2);
        assert_eq!(t.votes[0][3], 2);
        assert_eq!(t.votes[3][7], 2);
        assert_eq!(t.answered, vec![2, 2, 2, 2, 0]);
        assert_eq!(t.pairwise[2][2][0], 2);
        assert_eq!(t.by_day, vec![(d0, 1), (d1, 1)]);
        let bytes = tallies_bytes(&t).unwrap();
        assert_eq!(tallies_from(&l, &bytes).unwrap(), t);
        tally(&mut t, &l, &b, Some(d0), -1).unwrap();
        assert_eq!(t.by_day, vec![(d1, 1)], "a day that falls to zero goes");
        let same_len = tallies_bytes(&t).unwrap();
        assert_eq!(same_len.len(), bytes.len(), "days are padded");
        tally(&mut t, &l, &b, Some(d1), -1).unwrap();
        assert_eq!(t, empty_tallies(&l));
        assert!(tally(&mut t, &l, &b, Some(d1), -1).is_err(), "never below zero");
    }

    #[test]
    fn the_document_pads_to_a_bucket_and_reads_back() {
        let poll = NewPoll::from_json(&json!({"title": "Lunch", "lang": "fr", "expiryDays": 7,
            "questions": [{"label": "Q", "options": ["a", "b"]}]}))
        .unwrap();
        let token = TokenHash([7; 32]);
        let doc = Doc::new(&token, &poll, &[]);
        let bytes = doc.to_bytes().unwrap();
        assert_eq!(bytes.len(), bucket(bytes.len()));
        let back = Doc::from_bytes(&bytes).unwrap();
        let d = Day::parse("2026-11-27").unwrap();
        let p = back.into_poll(&PollId::parse("AAAAAAAAAAAAAAAA").unwrap(), d, d.plus_days(7), d).unwrap();
        assert_eq!(p.title.as_str(), "Lunch");
        assert_eq!(p.lang, Lang::Fr);
        assert_eq!(p.token_hash.0, [7; 32]);
    }
}
