//! The key file and its database, bound and checked: where the key file is
//! (apart from the data, by default), the lease every process of a database
//! uses, and the checks that make a key file one the database trusts.
//!
//! Promises:
//! - a key file is created only for a database bound to none yet, and
//!   never over a database that holds polls sealed under another
//!   ([`crate::keyring::KeyError::Missing`], `WrongDatabase`);
//! - a key file that others than its owner can read is refused, with the
//!   command that fixes it (`Exposed`);
//! - the database records the furthest day any key state of it has moved
//!   to; a key file behind it by more than a day (the day's work on one
//!   node ahead of another's) is refused as an old copy (`Behind`), unless
//!   the operator says it is not ([`Keys::accept_behind`]);
//! - the lease is stored once, in the database: every process of it (polld,
//!   and the cron's `pollctl sweep`) wraps keys for the same number of days.

use std::path::{Path, PathBuf};

use crate::day::Day;
use crate::keyring::{DEFAULT_LEASE_DAYS, KeyError, Keyring};

use super::vocab::KeyringRow;

/// Where the key state is, and what the operator said of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The key file (`--keys`).
    pub path: PathBuf,
    /// Days a poll's data key is wrapped ahead at most, when given
    /// (`--key-lease-days`): stored in the database for every process.
    /// `None`: the database's, or the default for a new one.
    pub lease_days: Option<u16>,
    /// Whether a key file behind the database's key state is used anyway,
    /// with a warning (`--accept-old-key-file`: a node that was down).
    pub accept_behind: bool,
}

/// The name of the folder that holds a database's key file by default,
/// beside the database's own folder: `data/` and `data-keys/`.
pub const KEYS_DIR_SUFFIX: &str = "-keys";

impl Keys {
    /// The key file at `path`, with the database's lease.
    pub fn at(path: &Path) -> Keys {
        Keys { path: path.to_owned(), lease_days: None, accept_behind: false }
    }

    /// The default key file of the SQLite database `db`: in a folder of its
    /// own beside the database's folder (`./data/anonpoll.sqlite3` →
    /// `./data-keys/anonpoll.keys`), so that a backup of the data folder
    /// does not take it along. A key file where earlier releases put it
    /// (beside the database), with none at the new place, is still used,
    /// and polld says how to move it.
    pub fn apart_from(db: &Path) -> Keys {
        let folder = db.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned());
        let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "data".into());
        let apart = folder.with_file_name(format!("{name}{KEYS_DIR_SUFFIX}")).join(keys_name(db));
        let beside = db.with_extension("keys");
        if !apart.exists() && beside.exists() {
            eprintln!(
                "anonpoll: the key file {} lies beside its database, so every backup of the data folder holds \
                 both: move it apart (mkdir -m 700 {} && mv {} {}), or name it with --keys",
                beside.display(),
                apart.parent().unwrap_or(Path::new(".")).display(),
                beside.display(),
                apart.display()
            );
            return Keys::at(&beside);
        }
        Keys::at(&apart)
    }

    /// The key file for `--db db` and `--keys keys`: the one given, or for
    /// a SQLite file the default ([`Keys::apart_from`]). A PostgreSQL
    /// database has no default: every node must be given the key file
    /// (docs/OPERATIONS.md).
    pub fn for_db(
        db: &Path,
        keys: Option<&Path>,
        lease_days: Option<u16>,
        accept_behind: bool,
    ) -> anyhow::Result<Keys> {
        let path = match keys {
            Some(path) => path.to_owned(),
            None if db.to_str().is_some_and(super::is_url) => {
                anyhow::bail!("a PostgreSQL database needs its key file named: give --keys FILE (or POLL_KEYS)")
            }
            None => Keys::apart_from(db).path,
        };
        Ok(Keys { path, lease_days, accept_behind })
    }
}

/// The key file's name for a database file: its stem and `.keys`.
fn keys_name(db: &Path) -> String {
    format!("{}.keys", db.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "anonpoll".into()))
}

/// Opens the key file for a database whose `keyring` row is `stored` (or
/// creates it, for a database bound to none yet), checks it, and answers it
/// with the row the database should hold now (the engine writes it if it
/// differs).
pub(super) fn bind(keys: &Keys, stored: KeyringRow, today: Day) -> anyhow::Result<(Keyring, KeyringRow)> {
    let lease = keys.lease_days.or(stored.lease_days).unwrap_or(DEFAULT_LEASE_DAYS);
    let keyring = match (Keyring::open(&keys.path, lease), stored.ring) {
        (Ok(k), Some(ring)) => {
            k.check_ring(&ring)?;
            k
        }
        (Ok(k), None) => k,
        (Err(KeyError::Missing(p)), Some(_)) => return Err(KeyError::Missing(p).into()),
        (Err(KeyError::Missing(_)), None) => match Keyring::create(&keys.path, lease, today) {
            Ok(k) => k,
            // Another process made it meanwhile.
            Err(KeyError::Io(_, e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Keyring::open(&keys.path, lease)?
            }
            Err(e) => return Err(e.into()),
        },
        (Err(e), _) => return Err(e.into()),
    };
    if let Some(database) = stored.day
        && keyring.day() < database
    {
        let behind = KeyError::Behind { path: keys.path.clone(), file: keyring.day(), database };
        // One day behind is a node whose day's work has not run yet while
        // another's has: not a sign of an old copy.
        if database.days_since(keyring.day()) > 1 {
            if !keys.accept_behind {
                return Err(behind.into());
            }
            eprintln!("anonpoll: {behind} (used as told: --accept-old-key-file)");
        }
    }
    let day = stored.day.map_or(keyring.day(), |d| d.max(keyring.day()));
    let row = KeyringRow { ring: Some(keyring.ring()), day: Some(day), lease_days: Some(lease) };
    Ok((keyring, row))
}
