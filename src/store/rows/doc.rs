//! The poll document: every setting and text of a poll, its language
//! versions, its media listing with each item's key, and the keys of its
//! invite codes' hashes, as JSON padded to a [`bucket`] before it is sealed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{
    DuplicateCheck, Lang, LanguageVersion, MediaItem, NewMedia, NewPoll, Poll, PollPatch, Question, ResultsVisibility,
    Slot, Title,
};
use crate::error::Error;
use crate::secret::{InviteHash, MediaId, PollId, TokenHash};

use super::super::keys::{FormatOneReceipts, HexKey};
use super::super::seal::{DataKey, bucket};
use super::corrupt;

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
    /// receipts gave them then (unkeyed hashes) as their tags: receipts
    /// look there too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy_receipts: bool,
    /// The key of the invite codes' stored hashes: the poll's own, so that
    /// it outlives each data key (format 2; the upgrade takes format 1's
    /// out of the data key of then, so the hashes stored then still match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_key: Option<HexKey>,
    /// The hashes that found a receipt's ballot before receipt tags (a poll
    /// that had ballots at the upgrade to format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_one_receipts: Option<FormatOneReceipts>,
    /// The last day its title or questions changed after creation (a poll
    /// stored before edits existed has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_on: Option<Day>,
    /// How many times its questions changed in more than their texts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restructured: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
    /// The key its bytes are sealed under: its own, so that the poll's data
    /// key can change without sealing every file again (format 2; before,
    /// the poll's data key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<HexKey>,
}

impl DocMedia {
    /// The listing of a new item whose bytes are sealed under `key`.
    pub fn new(m: &NewMedia, key: HexKey) -> DocMedia {
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
            key: Some(key),
        }
    }

    /// The key its bytes are sealed under: its own, or for an item of format
    /// 1, the poll's data key `poll_key`.
    pub fn bytes_key(&self, poll_key: &DataKey) -> DataKey {
        match &self.key {
            Some(k) => k.data_key(),
            None => DataKey::import(&poll_key.export()),
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
    /// A new poll's document, its media listed with their keys.
    pub fn new(token: &TokenHash, poll: &NewPoll, media: Vec<DocMedia>) -> Result<Doc, Error> {
        Ok(Doc {
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
            media,
            legacy_receipts: false,
            invite_key: Some(HexKey::generate()?),
            format_one_receipts: None,
            edited_on: None,
            restructured: 0,
        })
    }

    /// How an invite code's hash is stored: keyed under the poll's invite
    /// key, so a copy of the database cannot be checked against a code
    /// someone kept once the poll's keys are gone.
    pub fn invite_mac(&self, code: &InviteHash) -> Result<[u8; 32], Error> {
        let key = self.invite_key.as_ref().ok_or_else(|| corrupt("poll document (no invite key)"))?;
        Ok(key.mac_key().mac(&[&code.0]))
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
            invite_key: None,
            format_one_receipts: None,
            edited_on: None,
            restructured: 0,
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
            edited_on: self.edited_on,
            restructured: self.restructured,
            questions: self.questions,
            translations: self.translations,
            media,
        })
    }

    /// Applies a patch checked against this poll (all but the expiry, which
    /// is the row's, and what a change of the questions' structure does to
    /// the counts and media, which the writer does). A new title or new
    /// questions mark the poll edited on `today`; questions of another
    /// structure drop the language versions this patch does not give again
    /// (they were written for the old questions). True if text was replaced
    /// or removed (its old bytes are then erased from the WAL at once).
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
        if let Some(title) = patch.title.as_ref().filter(|t| **t != self.title) {
            self.title = title.clone();
            self.edited_on = Some(today);
            erased = true;
        }
        if let Some(questions) = patch.questions.as_ref().filter(|q| **q != self.questions) {
            if !patch.restructures(&self.questions).is_empty() {
                self.restructured = self.restructured.saturating_add(1);
                self.translations.clear();
            }
            self.questions = questions.clone();
            self.edited_on = Some(today);
            erased = true;
        }
        for (lang, version) in &patch.translations {
            match version {
                Some(v) => erased |= self.translations.insert(*lang, v.clone()).is_some(),
                None => erased |= self.translations.remove(lang).is_some(),
            }
        }
        erased
    }

    /// The JSON, padded with spaces to its bucket; zeroized when dropped
    /// (it holds keys).
    pub fn to_bytes(&self) -> Result<zeroize::Zeroizing<Vec<u8>>, Error> {
        let json = zeroize::Zeroizing::new(serde_json::to_vec(self).map_err(Error::internal)?);
        let len = bucket(json.len());
        let mut out = zeroize::Zeroizing::new(Vec::with_capacity(len));
        out.extend_from_slice(&json);
        out.resize(len, b' ');
        Ok(out)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Doc, Error> {
        serde_json::from_slice(bytes).map_err(|e| Error::internal(anyhow::anyhow!("stored poll document: {e}")))
    }
}

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}
