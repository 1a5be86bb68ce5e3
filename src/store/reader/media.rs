//! Reading a poll's media: a range of an item's bytes, opened piece by
//! piece under the item's own key, only while its poll lives.

use crate::day::Day;
use crate::domain::MediaItem;
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::MediaId;

use super::super::engine::Rows;
use super::super::keys::data_key;
use super::super::open::{corrupt_sealed, open_doc};
use super::super::rows::DocMedia;
use super::super::seal::{DataKey, PIECE, piece_span};
use super::super::vocab::{Cols, corrupt, place};
use super::{Reader, is_erased};

/// A media item ready to be served: what it is, and until when its poll lives.
#[derive(Debug)]
pub struct MediaBlob {
    pub item: MediaItem,
    pub expires_on: Day,
}

/// How much of a SQLite database file a stream's reader maps (see
/// [`Reader::for_media_streams`]): address space, not memory; pages past it
/// are read as usual.
pub const STREAM_MMAP: i64 = 1 << 30;

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
        self.snapshot(|tx, keys, _| {
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
    /// a memory map of up to [`STREAM_MMAP`] bytes: each read of a piece
    /// opens the file's blob afresh, and SQLite then walks the blob's chain
    /// of overflow pages from its start to the piece, one page read per
    /// 4 KiB of offset; mapped, that walk costs a third as much
    /// (docs/PERFORMANCE.md, "Media streams"). The mapped pages are the
    /// file's, shared with the kernel's cache, not a copy. (A mapped file
    /// that shrinks under a reader would fault; the live database never
    /// shrinks: no `VACUUM`, no `auto_vacuum`, only `VACUUM INTO` a copy. A
    /// disk's read error on a mapped page, or the file replaced or cut by
    /// hand while polld runs, ends the process (SIGBUS) instead of failing
    /// one read: so a backup is restored with polld stopped, as
    /// docs/OPERATIONS.md says.)
    pub fn for_media_streams(&mut self) -> Result<(), Error> {
        self.conn.for_media_streams()
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
        self.snapshot(|tx, keys, _| {
            let Some(live) = live_media(tx, keys, &item.id, today)? else { return Ok(None) };
            let now = live.listed.item()?;
            if now.sha256 != item.sha256 || now.size != item.size {
                return Ok(None);
            }
            live.read(tx, offset, len).map(Some)
        })
    }
}

/// A media item as listed by its live poll, with the key of its bytes.
struct LiveMedia {
    poll: String,
    key: DataKey,
    listed: DocMedia,
    expires_on: Day,
}

/// The listing of media item `id` if its poll is live on `today` and its
/// key exists.
fn live_media(tx: &mut dyn Rows, keys: &Keyring, id: &MediaId, today: Day) -> Result<Option<LiveMedia>, Error> {
    let Some(poll) = tx.media_poll(id.as_str())? else { return Ok(None) };
    let Some(found) = tx.poll(&poll, Some(today), Cols::Body)? else { return Ok(None) };
    let key = match data_key(keys, &poll, found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        Err(e) if is_erased(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, &poll, found.body()?)?;
    let Some(listed) = doc.media.into_iter().find(|m| m.id == id.as_str()) else { return Ok(None) };
    let key = listed.bytes_key(&key);
    Ok(Some(LiveMedia { poll, key, listed, expires_on: found.row.expires_on }))
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
