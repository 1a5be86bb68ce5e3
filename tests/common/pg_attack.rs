//! What someone reads of a PostgreSQL database without the store's help,
//! as the outside audit of 2026-12-05 did (shared/research/pg-linkage.md):
//! a role with SELECT and `pageinspect`, a standby, a base backup or a copy
//! of the data directory, and the WAL (`pg_wal/`, its archive) read with
//! `pg_waldump`. The privacy tests pair rows with this evidence.
//!
//! * [`Table::of`]: a table's on-disk shape (its file, its columns);
//! * [`live_pages`] (pageinspect's `get_raw_page`, through the server's
//!   buffers) or [`file_pages`] (the relation's files in any copy of the
//!   data directory): its raw 8 KiB heap pages;
//! * [`row_versions`]: every row version those pages hold, live or dead
//!   (not yet vacuumed), with its `xmin`, `xmax`, place (`ctid`) and column
//!   values, parsed here from the page layout, so the same code reads a live
//!   server and a copy;
//! * [`copy_wal`], then [`wal_transactions`]: the WAL's segments since an
//!   LSN, copied from `pg_wal/` and the archive, and its transactions, each
//!   with the row places its records (and its subtransactions') touched,
//!   and the subtransactions its COMMIT record lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// PostgreSQL's page size (the Debian build's, and the default).
pub const PAGE: usize = 8192;

/// One column as the heap stores it (`pg_attribute`): a dropped column's
/// bytes stay in older rows, so it is listed too.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    /// `attlen`: a fixed length, or -1 for a varlena (text, bytea).
    len: i16,
    /// `attalign` in bytes (1, 2, 4 or 8).
    align: usize,
}

/// A table's on-disk shape in one database.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    /// Its main fork, relative to the data directory (`pg_relation_filepath`).
    pub file: String,
    /// The number its WAL records name it by (`rel SPC/DB/RELFILENODE`).
    pub relfilenode: u32,
    pub columns: Vec<Column>,
}

impl Table {
    /// Table `name` of the database `client` is connected to, as its
    /// catalog (readable by any role) describes it; `None` if there is no
    /// such table.
    pub fn of(client: &mut postgres::Client, name: &str) -> Option<Table> {
        let row = client
            .query_one(
                "SELECT pg_relation_filepath(c.oid), c.relfilenode::bigint FROM pg_class c
                 WHERE c.oid = to_regclass($1::text)",
                &[&name],
            )
            .ok()?;
        let (file, relfilenode): (String, i64) = (row.get(0), row.get(1));
        let columns = client
            .query(
                "SELECT attname::text, attlen, attalign::text FROM pg_attribute
                 WHERE attrelid = to_regclass($1::text) AND attnum > 0 ORDER BY attnum",
                &[&name],
            )
            .unwrap_or_else(|e| panic!("the columns of {name}: {e}"))
            .iter()
            .map(|r| {
                let align = match r.get::<_, String>(2).as_str() {
                    "c" => 1,
                    "s" => 2,
                    "i" => 4,
                    _ => 8,
                };
                Column { name: r.get(0), len: r.get(1), align }
            })
            .collect();
        Some(Table { name: name.to_owned(), file, relfilenode: relfilenode as u32, columns })
    }

    /// The index of column `name` in [`RowVersion::values`].
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// Every page of `table` as the server holds it now, dirty buffers
/// included: pageinspect's `get_raw_page` over every block (the extension
/// is created in the database if missing; the harness's role is a
/// superuser).
pub fn live_pages(client: &mut postgres::Client, table: &Table) -> Vec<u8> {
    client.batch_execute("CREATE EXTENSION IF NOT EXISTS pageinspect").expect("CREATE EXTENSION pageinspect");
    let rows = client
        .query(
            "SELECT get_raw_page($1::text, 'main', b::int)
             FROM generate_series(0, pg_relation_size($1::text::regclass) / 8192 - 1) b ORDER BY b",
            &[&table.name],
        )
        .unwrap_or_else(|e| panic!("get_raw_page on {}: {e}", table.name));
    rows.iter().flat_map(|r| r.get::<_, Vec<u8>>(0)).collect()
}

/// Every page of `table` in a copy of a data directory (or the live one
/// after a `CHECKPOINT`): its main fork's file and 1 GiB segments.
pub fn file_pages(data_dir: &Path, table: &Table) -> Vec<u8> {
    let mut pages = Vec::new();
    for segment in 0.. {
        let name = if segment == 0 { table.file.clone() } else { format!("{}.{segment}", table.file) };
        match std::fs::read(data_dir.join(&name)) {
            Ok(bytes) => pages.extend(bytes),
            Err(_) if segment > 0 => break,
            Err(e) => panic!("cannot read {} in {}: {e}", table.file, data_dir.display()),
        }
    }
    pages
}

/// One version of one row, live or dead, as a heap page holds it.
#[derive(Clone, Debug)]
pub struct RowVersion {
    /// The transaction (or subtransaction) that wrote it.
    pub xmin: u32,
    /// The one that deleted, replaced or locked it; 0 if none.
    pub xmax: u32,
    /// `t_infomask` (whether xmin committed or aborted, a lock-only xmax…).
    pub infomask: u16,
    /// Where it lies: (block, line pointer), its `ctid`.
    pub place: (u32, u16),
    /// Its own place, or that of the version that replaced it (`t_ctid`).
    pub next: (u32, u16),
    /// Each column's bytes, in [`Table::columns`] order: `None` for NULL, or
    /// for a value stored compressed or out of line (not read here).
    pub values: Vec<Option<Vec<u8>>>,
}

impl RowVersion {
    /// The bytes of column `i`, if stored inline.
    pub fn value(&self, i: usize) -> Option<&[u8]> {
        self.values.get(i).and_then(Option::as_deref)
    }

    /// Whether any column holds `needle` (as a whole value or inside one).
    pub fn holds(&self, needle: &[u8]) -> bool {
        self.values.iter().flatten().any(|v| super::contains_bytes(v, needle))
    }

    /// Whether the inserting transaction is known to have aborted
    /// (`HEAP_XMIN_INVALID` without `HEAP_XMIN_COMMITTED`): a version no
    /// one ever saw.
    pub fn aborted(&self) -> bool {
        self.infomask & 0x0300 == 0x0200
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Every row version in `pages` (a table's raw heap pages, as
/// [`live_pages`] or [`file_pages`] give them): each line pointer in use
/// (`LP_NORMAL`) on each page, its tuple header and its columns as
/// `table`'s layout places them (null bitmap, alignment, 1- and 4-byte
/// varlena headers).
pub fn row_versions(pages: &[u8], table: &Table) -> Vec<RowVersion> {
    let mut out = Vec::new();
    for (block, page) in pages.chunks_exact(PAGE).enumerate() {
        let Some(lower) = u16_at(page, 12) else { continue };
        let pointers = (usize::from(lower).saturating_sub(24)) / 4;
        for i in 0..pointers {
            let Some(lp) = u32_at(page, 24 + 4 * i) else { break };
            let (off, flags, len) = ((lp & 0x7fff) as usize, (lp >> 15) & 3, (lp >> 17) as usize);
            if flags != 1 || len < 23 || off + len > PAGE {
                continue;
            }
            if let Some(v) = tuple(&page[off..off + len], table, (block as u32, i as u16 + 1)) {
                out.push(v);
            }
        }
    }
    out
}

/// One heap tuple (`HeapTupleHeaderData` and its data) at `place`.
fn tuple(t: &[u8], table: &Table, place: (u32, u16)) -> Option<RowVersion> {
    let (xmin, xmax) = (u32_at(t, 0)?, u32_at(t, 4)?);
    let next_block = (u32::from(u16_at(t, 12)?) << 16) | u32::from(u16_at(t, 14)?);
    let next = (next_block, u16_at(t, 16)?);
    let (infomask2, infomask) = (u16_at(t, 18)?, u16_at(t, 20)?);
    let hoff = usize::from(*t.get(22)?);
    let natts = usize::from(infomask2 & 0x07ff);
    let has_nulls = infomask & 0x0001 != 0;
    let mut values = Vec::with_capacity(table.columns.len());
    let mut at = hoff;
    for (a, column) in table.columns.iter().enumerate() {
        let present = a < natts && (!has_nulls || t.get(23 + a / 8)? >> (a % 8) & 1 == 1);
        if !present {
            values.push(None);
            continue;
        }
        if column.len > 0 {
            at = at.next_multiple_of(column.align);
            let len = column.len as usize;
            values.push(Some(t.get(at..at + len)?.to_vec()));
            at += len;
            continue;
        }
        if column.len != -1 {
            return None; // a cstring column: no table of anonpoll has one
        }
        // A varlena: a zero byte is alignment padding before a 4-byte
        // header; a 1-byte header is odd and never zero.
        if *t.get(at)? == 0 {
            at = at.next_multiple_of(column.align);
        }
        let first = *t.get(at)?;
        let (size, value) = if first == 0x01 {
            // Out of line: a 2-byte header (its second byte the pointer's
            // kind), then the pointer: 16 bytes for one to a TOAST table
            // (kind 18), the only kind stored on disk.
            (2 + if *t.get(at + 1)? == 18 { 16 } else { 8 }, None)
        } else if first & 1 == 1 {
            let size = usize::from(first >> 1);
            (size, Some(t.get(at + 1..at + size)?.to_vec()))
        } else {
            let header = u32_at(t, at)?;
            let size = (header >> 2) as usize;
            let inline = header & 3 == 0;
            (size, if inline { Some(t.get(at + 4..at + size)?.to_vec()) } else { None })
        };
        values.push(value);
        at += size.max(1);
    }
    Some(RowVersion { xmin, xmax, infomask, place, next, values })
}

/// A heap row's place as the WAL names it: relation, block, line pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowPlace {
    /// The relation's relfilenode ([`Table::relfilenode`]).
    pub rel: u32,
    pub block: u32,
    pub offset: u16,
}

/// One top-level transaction of the WAL.
#[derive(Clone, Debug, Default)]
pub struct WalTxn {
    pub xid: u32,
    /// Its subtransactions (savepoints that wrote), as its COMMIT or ABORT
    /// record (or an ASSIGNMENT record) lists them.
    pub subxacts: Vec<u32>,
    /// Every heap row place its records and its subtransactions' records
    /// touched (inserted, updated on either side, deleted, locked), in the
    /// database asked for.
    pub touched: BTreeSet<RowPlace>,
    pub committed: bool,
}

impl WalTxn {
    /// Whether `xid` is this transaction or one of its subtransactions.
    pub fn owns(&self, xid: u32) -> bool {
        self.xid == xid || self.subxacts.contains(&xid)
    }

    /// The places it touched in relation `rel`.
    pub fn places_in(&self, rel: u32) -> impl Iterator<Item = &RowPlace> {
        self.touched.iter().filter(move |p| p.rel == rel)
    }
}

/// `pg_waldump` of the same PostgreSQL as [`super::pg_bin`] (Debian:
/// `/usr/lib/postgresql/15/bin`).
pub fn pg_waldump() -> PathBuf {
    super::pg_bin().expect("PostgreSQL's programs").join("pg_waldump")
}

/// The name's segment part (the last 16 of its 24 hex digits) of the WAL
/// segment holding LSN `lsn` (`X/Y`), 16 MiB segments.
fn segment_of(lsn: &str) -> String {
    let (hi, lo) = lsn.split_once('/').expect("an LSN is X/Y");
    let at = u64::from_str_radix(hi, 16).expect("an LSN") << 32 | u64::from_str_radix(lo, 16).expect("an LSN");
    let segment = at / (16 << 20);
    format!("{:08X}{:08X}", segment >> 8, segment & 0xff)
}

/// The names of the WAL segments in `dir` (24 hex digits), sorted.
fn segments_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.len() == 24 && n.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect();
    names.sort();
    names
}

/// Copies every WAL segment from the one holding LSN `start` on into `to`:
/// each from the first of `dirs` that has it (`pg_wal/`, then the archive
/// for what the server has recycled since it was archived). A copy, so
/// that what is read later is what was there now.
pub fn copy_wal(dirs: &[PathBuf], start: &str, to: &Path) {
    let first = segment_of(start);
    for dir in dirs {
        for name in segments_in(dir).into_iter().filter(|n| n[8..] >= *first) {
            let into = to.join(&name);
            // A segment may be recycled while listed: the archive has it.
            if !into.exists() {
                let _ = std::fs::copy(dir.join(&name), into);
            }
        }
    }
    let copied = segments_in(to);
    assert!(
        copied.iter().any(|n| n[8..] == *first),
        "no WAL segment holds {start} any more; copied {copied:?} from {dirs:?}"
    );
}

/// The WAL's transactions from LSN `start` on, read by `pg_waldump` over
/// the segments in `dir` (a [`copy_wal`]), as far as the WAL is valid. Only
/// records of database `db` (its OID) count as touches; COMMIT, ABORT and
/// ASSIGNMENT records tie subtransactions to their top-level transaction.
pub fn wal_transactions(dir: &Path, start: &str, db: u32) -> Vec<WalTxn> {
    let out =
        Command::new(pg_waldump()).arg("-p").arg(dir).arg(format!("--start={start}")).output().expect("run pg_waldump");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // It ends, failing, at the first record that is not valid, or at a
    // segment not yet begun (after a switch): the end of the WAL written so
    // far. Any other failure, a segment missing in between among them, is
    // the test's.
    let last = segments_in(dir).pop().unwrap_or_default();
    let past_the_end = stderr
        .split_once("could not find file \"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .is_some_and(|(name, _)| name.get(8..) > last.get(8..));
    assert!(
        out.status.success() || stderr.contains("error in WAL record") || past_the_end,
        "pg_waldump failed: {}\n{stderr}",
        out.status
    );
    assert!(stdout.lines().any(|l| l.starts_with("rmgr:")), "pg_waldump read no record from {start}: {stderr}");
    parse_waldump(&stdout, db)
}

/// The number after `key` in `s` (up to a space, comma, colon or `;`).
fn number_after(s: &str, key: &str) -> Option<u32> {
    let rest = s.split_once(key)?.1.trim_start();
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// `pg_waldump`'s text (PostgreSQL 15: `rmgr: Heap ... tx: N, lsn: ...,
/// desc: INSERT off 3 ..., blkref #0: rel 1663/DB/REL blk 0`) into
/// transactions.
pub fn parse_waldump(text: &str, db: u32) -> Vec<WalTxn> {
    let mut touched: BTreeMap<u32, BTreeSet<RowPlace>> = BTreeMap::new();
    let mut tops: BTreeMap<u32, WalTxn> = BTreeMap::new();
    let mut top_of: BTreeMap<u32, u32> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("rmgr:")) {
        let rmgr = line["rmgr:".len()..].split_whitespace().next().unwrap_or_default();
        let Some(xid) = number_after(line, " tx:") else { continue };
        let desc = line.split_once("desc: ").map_or("", |(_, d)| d);
        let (what, refs) = desc.split_once(", blkref #").map_or((desc, ""), |(w, r)| (w, r));
        match rmgr {
            "Transaction" => {
                let subxacts: Vec<u32> = what
                    .split_once("subxacts:")
                    .map(|(_, s)| s.split(';').next().unwrap_or_default())
                    .map(|s| s.split_whitespace().filter_map(|n| n.parse().ok()).collect())
                    .unwrap_or_default();
                // ASSIGNMENT names its top-level transaction (xtop).
                let top = if what.starts_with("ASSIGNMENT") { number_after(what, "xtop").unwrap_or(xid) } else { xid };
                let txn = tops.entry(top).or_insert_with(|| WalTxn { xid: top, ..WalTxn::default() });
                txn.committed |= what.starts_with("COMMIT");
                for s in subxacts {
                    top_of.insert(s, top);
                    if !txn.subxacts.contains(&s) {
                        txn.subxacts.push(s);
                    }
                }
            }
            "Heap" | "Heap2" if xid != 0 => {
                // Block references: "0: rel 1663/DB/REL blk N[ FPW], #1: ...".
                let mut blocks = BTreeMap::new();
                for r in format!("#{refs}").split('#').skip(1) {
                    let Some((k, rest)) = r.split_once(':') else { continue };
                    let Some(rel) =
                        rest.split_once("rel ").map(|(_, x)| x.split_whitespace().next().unwrap_or_default())
                    else {
                        continue;
                    };
                    let parts: Vec<u32> = rel.split('/').filter_map(|p| p.parse().ok()).collect();
                    if let ([_, d, relnode], Some(blk)) = (parts.as_slice(), number_after(rest, " blk"))
                        && *d == db
                    {
                        blocks.insert(k.trim().parse::<u32>().unwrap_or(0), (*relnode, blk));
                    }
                }
                // The first offset is on block #1 for an UPDATE that moved
                // the row to another page (block #0 is the new one), else #0;
                // "new off" is on block #0.
                let mut places = Vec::new();
                if let Some(off) = number_after(what, " off ") {
                    let old = blocks.get(&1).or_else(|| blocks.get(&0));
                    places.extend(old.map(|&(rel, block)| RowPlace { rel, block, offset: off as u16 }));
                }
                if let (Some(off), Some(&(rel, block))) = (number_after(what, "new off "), blocks.get(&0)) {
                    places.push(RowPlace { rel, block, offset: off as u16 });
                }
                touched.entry(xid).or_default().extend(places);
            }
            _ => {}
        }
    }
    for (xid, places) in touched {
        let top = *top_of.get(&xid).unwrap_or(&xid);
        tops.entry(top).or_insert_with(|| WalTxn { xid: top, ..WalTxn::default() }).touched.extend(places);
    }
    tops.into_values().collect()
}
