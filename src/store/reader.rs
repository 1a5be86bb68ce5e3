//! Read connections: one per worker thread, with cached statements. In WAL
//! mode a reader sees the last committed state and never waits on the writer.
//! Every value a reader returns was opened from its sealed form here, with
//! the poll's data key unwrapped through the keyring (or remembered from an
//! earlier unwrap while the keyring still holds its day: [`KeyMemo`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::day::Day;
use crate::domain::{Ballot, MediaItem, Poll, Tallies};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{MediaId, PollId, ReceiptHash};

use super::engine::{Cols, PollRow, Rows};
use super::rows::{self, Doc, Layout};
use super::seal::{DataKey, PIECE, piece_span};
use super::{Conn, corrupt, data_key, place};

pub struct Reader {
    pub(super) conn: Conn,
    keys: Arc<Keyring>,
    memo: KeyMemo,
    /// The sealed counts read with the last poll this reader read, for the
    /// [`Reader::tallies_as_read`] that usually follows (a results page): one
    /// statement instead of two, and counts from the same snapshot as the
    /// poll. Taken by that call, replaced by the next read, and not used
    /// once older than [`KEPT_TALLIES`] (a worker's next request reads its
    /// poll again anyway).
    last_tallies: Option<(String, PollRow, Vec<u8>, std::time::Instant)>,
}

/// Data keys this reader unwrapped, by poll, with the wrapped key and day
/// they came from. A poll is read again and again (its share page, its
/// JSON, its results), and unwrapping its key was a tenth of a poll read's
/// instructions (docs/PERFORMANCE.md, "Crypto erasure"). An entry serves
/// only while the row holds the same wrapped key under the same day and
/// the keyring still has that day's wrap key: a re-wrapped poll is
/// unwrapped anew, and a poll whose key is gone reads as erased, as
/// without the memo. Bounded by [`MEMO_POLLS`] like the writer's cache;
/// keys are zeroized as entries drop.
#[derive(Default)]
struct KeyMemo(HashMap<String, (Day, Vec<u8>, DataKey)>);

/// How long the counts read with a poll serve a following
/// [`Reader::tallies_as_read`].
const KEPT_TALLIES: std::time::Duration = std::time::Duration::from_secs(1);

/// Most data keys one reader remembers; past it the memo starts over.
const MEMO_POLLS: usize = 256;

impl PollRow {
    pub(super) fn key(&self, keys: &Keyring, id: &str) -> Result<DataKey, Error> {
        data_key(keys, id, self.key_day, &self.data_key)
    }
}

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

/// Opens a poll's sealed document.
pub(super) fn open_doc(key: &DataKey, id: &str, body: &[u8]) -> Result<Doc, Error> {
    let plain = key.open(&place::body(id), body).map_err(|e| corrupt_sealed("poll document", e))?;
    Doc::from_bytes(&plain)
}

/// Opens a poll's sealed counts.
pub(super) fn open_tallies(key: &DataKey, id: &str, layout: &Layout, sealed: &[u8]) -> Result<Tallies, Error> {
    let plain = key.open(&place::tallies(id), sealed).map_err(|e| corrupt_sealed("counts", e))?;
    rows::tallies_from(layout, &plain)
}

pub(super) fn corrupt_sealed(what: &str, e: super::seal::Unsealed) -> Error {
    Error::internal(anyhow::anyhow!("{what}: {e}"))
}

impl Reader {
    pub(super) fn new(conn: Conn, keys: Arc<Keyring>) -> Reader {
        Reader { conn, keys, memo: KeyMemo::default(), last_tallies: None }
    }

    /// The data key of poll `id` stored as `row`: remembered, or unwrapped
    /// (see [`KeyMemo`]).
    fn key(&mut self, id: &str, row: &PollRow) -> Result<&DataKey, Error> {
        let same = self.memo.0.get(id).is_some_and(|(day, wrapped, _)| {
            *day == row.key_day && *wrapped == row.data_key && self.keys.wrap_key(row.key_day).is_some()
        });
        if !same {
            self.memo.0.remove(id);
            let key = row.key(&self.keys, id)?;
            if self.memo.0.len() >= MEMO_POLLS {
                self.memo.0.clear();
            }
            self.memo.0.insert(id.to_owned(), (row.key_day, row.data_key.clone(), key));
        }
        self.memo.0.get(id).map(|(_, _, key)| key).ok_or_else(|| Error::internal(anyhow::anyhow!("the key memo")))
    }

    /// The poll if it exists and is live on `today` (and its key exists).
    pub fn poll(&mut self, id: &PollId, today: Day) -> Result<Option<Poll>, Error> {
        Ok(self.read(id, today, false)?.map(|(p, _)| p))
    }

    /// The counters of a poll already read with [`Reader::poll`].
    pub fn tallies(&mut self, poll: &Poll) -> Result<Tallies, Error> {
        self.last_tallies = None;
        self.counts(poll, None)
    }

    /// The counters of `poll` as they were when this reader just read it
    /// (a results page: the counts of the same snapshot as the poll, with
    /// no second statement), or read now if it read something else since.
    pub fn tallies_as_read(&mut self, poll: &Poll) -> Result<Tallies, Error> {
        let kept =
            self.last_tallies.take().filter(|(id, _, _, at)| id == poll.id.as_str() && at.elapsed() < KEPT_TALLIES);
        self.counts(poll, kept.map(|(_, row, sealed, _)| (row, sealed)))
    }

    fn counts(&mut self, poll: &Poll, kept: Option<(PollRow, Vec<u8>)>) -> Result<Tallies, Error> {
        let (row, blobs) = match kept {
            Some((row, sealed)) => (row, vec![sealed]),
            None => {
                // The poll was read live: its creation day finds its row whatever today is.
                let row = self.conn.once(|r| r.poll(poll.id.as_str(), Some(poll.created_on), Cols::Tallies))?;
                let Some(found) = row else { return Ok(rows::empty_tallies(&Layout::of(&poll.questions))) };
                found
            }
        };
        let key = match self.key(poll.id.as_str(), &row) {
            Ok(k) => k,
            Err(e) if is_erased(&e) => return Ok(rows::empty_tallies(&Layout::of(&poll.questions))),
            Err(e) => return Err(e),
        };
        open_tallies(key, poll.id.as_str(), &Layout::of(&poll.questions), &blobs[0])
    }

    /// The live poll and its counters, read in one statement (one snapshot).
    pub fn poll_with_tallies(&mut self, id: &PollId, today: Day) -> Result<Option<(Poll, Tallies)>, Error> {
        Ok(self.read(id, today, true)?.map(|(p, t)| (p, t.unwrap_or_default())))
    }

    fn read(&mut self, id: &PollId, today: Day, with_tallies: bool) -> Result<Option<(Poll, Option<Tallies>)>, Error> {
        self.last_tallies = None;
        let Some((row, mut blobs)) = self.conn.once(|r| r.poll(id.as_str(), Some(today), Cols::BodyTallies))? else {
            // Gone or expired: its key, if remembered, goes too.
            self.memo.0.remove(id.as_str());
            return Ok(None);
        };
        let key = match self.key(id.as_str(), &row) {
            Ok(k) => k,
            // Its key is gone: erased, whatever the row says.
            Err(e) if is_erased(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let doc = open_doc(key, id.as_str(), &blobs[0])?;
        let poll = doc.into_poll(id, row.created_on, row.expires_on, today)?;
        let sealed = blobs.pop().ok_or_else(|| corrupt("poll row"))?;
        if with_tallies {
            let tallies = open_tallies(key, id.as_str(), &Layout::of(&poll.questions), &sealed)?;
            return Ok(Some((poll, Some(tallies))));
        }
        self.last_tallies = Some((id.as_str().to_owned(), row, sealed, std::time::Instant::now()));
        Ok(Some((poll, None)))
    }

    /// Whether a poll that does not read as live has a row whose key is
    /// gone (erased in this copy, or expired), rather than no row at all:
    /// `pollctl` says so instead of "no such poll".
    pub fn erased(&mut self, id: &PollId) -> Result<bool, Error> {
        let row = self.conn.once(|r| r.key_day(id.as_str()))?;
        Ok(row.and_then(|d| Day::parse(&d)).is_some_and(|d| self.keys.wrap_key(d).is_none()))
    }

    /// Whether the database answers now, through this reader's connection
    /// (`GET /healthz`).
    pub fn ping(&mut self) -> Result<(), Error> {
        self.conn.once(|r| r.ping())
    }

    /// A poll's invite codes: how many were issued, and how many were used.
    pub fn invite_counts(&mut self, poll: &Poll) -> Result<(u64, u64), Error> {
        self.conn.once(|r| r.invite_counts(poll.id.as_str()))
    }

    /// Every stored ballot of `poll`, shuffled, without the day it was
    /// cast. For the admin's ballot export and for recounts.
    pub fn ballots(&mut self, poll: &Poll) -> Result<Vec<Ballot>, Error> {
        let mut out: Vec<Ballot> = self.ballots_with_days(poll, Day::today())?.into_iter().map(|(_, b)| b).collect();
        rand::seq::SliceRandom::shuffle(out.as_mut_slice(), &mut rand::rng());
        Ok(out)
    }

    /// Every stored ballot of `poll` with its day, in key order.
    pub(super) fn ballots_with_days(&mut self, poll: &Poll, today: Day) -> Result<Vec<(Day, Ballot)>, Error> {
        let keys = &self.keys;
        self.conn.snapshot(|tx| {
            let Some((row, _)) = tx.poll(poll.id.as_str(), Some(std::cmp::min(today, poll.created_on)), Cols::None)?
            else {
                return Ok(Vec::new());
            };
            let key = row.key(keys, poll.id.as_str())?;
            let mut out = Vec::new();
            for (k, sealed) in tx.ballots(poll.id.as_str())? {
                let plain =
                    key.open(&place::ballot(poll.id.as_str(), &k), &sealed).map_err(|e| corrupt_sealed("ballot", e))?;
                out.push(rows::ballot_from(&poll.questions, &plain)?);
            }
            Ok(out)
        })
    }

    /// The ballot of `poll` that came with the receipt hashed `receipt`,
    /// if it is still stored.
    pub fn own_ballot(&mut self, poll: &Poll, receipt: &ReceiptHash) -> Result<Option<Ballot>, Error> {
        let keys = &self.keys;
        self.conn.snapshot(|tx| {
            let Some((row, blobs)) = tx.poll(poll.id.as_str(), Some(poll.created_on), Cols::Body)? else {
                return Ok(None);
            };
            let key = row.key(keys, poll.id.as_str())?;
            let doc = open_doc(&key, poll.id.as_str(), &blobs[0])?;
            let stored = super::receipt_row(tx, poll.id.as_str(), &key, &doc, receipt)?;
            Ok(stored.map(|found| found.ballot))
        })
    }
}

/// Whether `e` says a poll's key is gone (its row is then erased).
pub(super) fn is_erased(e: &Error) -> bool {
    matches!(e, Error::NotFound)
}

/// A media item ready to be served: what it is, and until when its poll lives.
#[derive(Debug)]
pub struct MediaBlob {
    pub item: MediaItem,
    pub expires_on: Day,
}

impl Reader {
    /// The media item `id` if its poll is live on `today`, with the bytes
    /// `pick` asks for (offset and length, within the item's size). Both
    /// are read in one transaction, so the bytes are this item's even if it
    /// is replaced or erased meanwhile; and only the sealed pieces that
    /// hold the range are read and opened, so a range of a large video
    /// never loads the rest of it.
    pub fn media(
        &mut self,
        id: &MediaId,
        today: Day,
        pick: impl FnOnce(&MediaBlob) -> Option<(u64, usize)>,
    ) -> Result<Option<(MediaBlob, Vec<u8>)>, Error> {
        let keys = &self.keys;
        self.conn.snapshot(|tx| {
            let Some(live) = live_media(tx, keys, id, today)? else { return Ok(None) };
            let blob = MediaBlob { item: live.listed.item()?, expires_on: live.expires_on };
            let bytes = match pick(&blob) {
                Some((offset, len)) => live.read(tx, offset, len)?,
                None => Vec::new(),
            };
            Ok(Some((blob, bytes)))
        })
    }

    /// Makes this reader fit for reading media a piece at a time (the
    /// streams of `/media/`). On SQLite it reads the database file through
    /// a memory map of up to `STREAM_MMAP` bytes: each read of a piece
    /// opens the file's blob afresh, and SQLite then walks the blob's chain
    /// of overflow pages from its start to the piece, one page read per
    /// 4 KiB of offset. Through the page cache that cost 0.3 ms per MiB of
    /// offset (2.3 ms per piece near the end of a 9 MB file: a fast client
    /// got 45 MB/s); mapped, 0.1 ms near the end, and 155 MB/s (160 to 180
    /// MB/s when the worker read the whole file in one go). The mapped
    /// pages are the file's, shared with the kernel's cache, not a copy; a
    /// larger page cache (32 MiB) did about as well but would be memory of
    /// each reader's own. (A mapped file that shrinks under a reader would
    /// fault; the live database never shrinks: no `VACUUM`, no
    /// `auto_vacuum`, only `VACUUM INTO` a copy. A disk's read error on a
    /// mapped page, or the file replaced or cut by hand while polld runs,
    /// ends the process (SIGBUS) instead of failing one read: so a backup
    /// is restored with polld stopped, as docs/OPERATIONS.md says.)
    pub fn for_media_streams(&mut self) -> Result<(), Error> {
        if let Conn::Sqlite(c) = &self.conn {
            c.pragma_update(None, "mmap_size", STREAM_MMAP)?;
        }
        Ok(())
    }

    /// `len` bytes at `offset` of the media item `id`, read in a
    /// transaction of their own, if its poll is still live on `today` and
    /// the item is still `item` (the same content, by its hash and size):
    /// the rest of a file being sent, read as its client takes it. `None`
    /// once the poll is erased or expired or the item replaced, so that a
    /// response never sends an erased poll's bytes or a mix of two files.
    pub fn media_more(
        &mut self,
        item: &MediaItem,
        offset: u64,
        len: usize,
        today: Day,
    ) -> Result<Option<Vec<u8>>, Error> {
        let keys = &self.keys;
        self.conn.snapshot(|tx| {
            let Some(live) = live_media(tx, keys, &item.id, today)? else { return Ok(None) };
            let now = live.listed.item()?;
            if now.sha256 != item.sha256 || now.size != item.size {
                return Ok(None);
            }
            live.read(tx, offset, len).map(Some)
        })
    }
}

/// How much of a SQLite database file a stream's reader maps (see
/// [`Reader::for_media_streams`]): address space, not memory; pages past it
/// are read as usual.
pub const STREAM_MMAP: i64 = 1 << 30;

/// A media item as listed by its live poll, with what opens its bytes.
struct LiveMedia {
    poll: String,
    key: DataKey,
    listed: rows::DocMedia,
    expires_on: Day,
}

/// The listing of media item `id` if its poll is live on `today` and its
/// key exists.
fn live_media(tx: &mut dyn Rows, keys: &Keyring, id: &MediaId, today: Day) -> Result<Option<LiveMedia>, Error> {
    let Some(poll) = tx.media_poll(id.as_str())? else { return Ok(None) };
    let Some((row, blobs)) = tx.poll(&poll, Some(today), Cols::Body)? else { return Ok(None) };
    let key = match row.key(keys, &poll) {
        Ok(k) => k,
        Err(e) if is_erased(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, &poll, &blobs[0])?;
    let Some(listed) = doc.media.into_iter().find(|m| m.id == id.as_str()) else { return Ok(None) };
    Ok(Some(LiveMedia { poll, key, listed, expires_on: row.expires_on }))
}

impl LiveMedia {
    /// `len` bytes at `offset`: only the sealed pieces that hold them are
    /// read (in one statement) and opened.
    fn read(&self, tx: &mut dyn Rows, offset: u64, len: usize) -> Result<Vec<u8>, Error> {
        let id = self.listed.id.as_str();
        let padded = usize::try_from(self.listed.padded).map_err(|_| corrupt("media size"))?;
        let offset = usize::try_from(offset).map_err(|_| corrupt("media offset"))?;
        if offset.checked_add(len).is_none_or(|end| end > padded) {
            return Err(corrupt("media range"));
        }
        if len == 0 {
            return Ok(Vec::new());
        }
        let first = offset / PIECE;
        let last = (offset + len - 1) / PIECE;
        let spans: Vec<(usize, usize)> = (first..=last).map(|i| piece_span(padded, i)).collect();
        let pieces = tx.media_spans(id, &spans)?;
        let place = place::media(&self.poll, id);
        let mut bytes = Vec::with_capacity(len);
        let mut at = offset;
        for (index, sealed) in (first..=last).zip(pieces) {
            let piece = self.key.open_piece(&place, padded, index, &sealed).map_err(|e| corrupt_sealed("media", e))?;
            let from = at - index * PIECE;
            let take = (offset + len - at).min(piece.len() - from);
            bytes.extend_from_slice(&piece[from..from + take]);
            at += take;
        }
        if bytes.len() != len {
            return Err(corrupt("media pieces"));
        }
        Ok(bytes)
    }
}

/// What a sweep as of some day would erase, for one expiry day: counts only,
/// so that `pollctl sweep --dry-run` tells nothing about any single poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub expires_on: Day,
    pub polls: u64,
    pub responses: u64,
    pub media: u64,
    pub media_bytes: u64,
}

impl Reader {
    /// Per expiry day, in order, the polls that a sweep as of `as_of` erases
    /// (`expires_on <= as_of`, the sweep's own rule), with their stored
    /// responses and media (the bytes they take as stored: sealed, padded).
    /// Reads only.
    pub fn due_for_sweep(&mut self, as_of: Day) -> Result<Vec<Due>, Error> {
        let rows = self.conn.once(|r| r.due(as_of))?;
        let mut due = Vec::new();
        for (day, [polls, responses, media, media_bytes]) in rows {
            due.push(Due {
                expires_on: Day::parse(&day).ok_or_else(|| corrupt("expires_on"))?,
                polls: count(polls)?,
                responses: count(responses)?,
                media: count(media)?,
                media_bytes: count(media_bytes)?,
            });
        }
        Ok(due)
    }
}
