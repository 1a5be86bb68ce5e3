//! Command-line and environment configuration of `polld`.

use std::path::PathBuf;

use clap::Parser;
use ipnet::IpNet;

use crate::client::parse_net;

/// Where polld listens unless told otherwise; `pollctl` builds its default
/// links on it too.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

#[derive(Debug, Parser)]
#[command(
    name = "polld",
    version,
    about = "The anonpoll server: JSON API and web pages over one SQLite file (or a PostgreSQL database shared by several nodes)."
)]
pub struct PolldArgs {
    /// SQLite database file (created with its folder on first start), or a
    /// PostgreSQL database as `postgresql://USER@HOST:PORT/DBNAME` (several
    /// nodes; give `--keys` then).
    #[arg(long, env = "POLL_DB", default_value = "./data/anonpoll.sqlite3")]
    pub db: PathBuf,

    /// The key file every poll is sealed under (created with a fresh random
    /// key chain on first start, mode 0600; default: in a folder of its own
    /// beside the database's, `./data-keys/anonpoll.keys` for
    /// `./data/anonpoll.sqlite3`). Never back it up with the database:
    /// without a current key file a copy cannot be read (docs/OPERATIONS.md).
    #[arg(long, env = "POLL_KEYS")]
    pub keys: Option<PathBuf>,

    /// Days ahead a poll's data key is wrapped at most: a deleted or
    /// shortened poll cannot be read from any copy older than this. Stored
    /// in the database, for every process of it (`pollctl sweep` too);
    /// default: the database's, 7 for a new one.
    #[arg(long, env = "POLL_KEY_LEASE_DAYS",
          value_parser = clap::value_parser!(u16).range(1..=crate::keyring::MAX_LEASE_DAYS as i64))]
    pub key_lease_days: Option<u16>,

    /// Use a key file that is behind the day the database's key state has
    /// reached (refused otherwise, as an old copy): for a node that was
    /// down for more than a day. Says so on stderr.
    #[arg(long, env = "POLL_ACCEPT_OLD_KEY_FILE")]
    pub accept_old_key_file: bool,

    /// Address to listen on: `HOST:PORT` (port 0 for any free port), or
    /// `unix:PATH`, a Unix socket for the proxy in front on this machine
    /// (made with mode 0660; its peer is trusted to name the client, so
    /// give `--base-url` with it). The shipped setup listens on
    /// `unix:/run/anonpoll/polld.sock`.
    #[arg(long, env = "POLL_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: String,

    /// Public base URL used in links (default: http://<listen address>).
    // The text is --help's, where the angle brackets are meant.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(long, env = "POLL_BASE_URL")]
    pub base_url: Option<String>,

    /// Proxy whose X-Forwarded-For is believed (CIDR or address; repeatable,
    /// or comma-separated in the environment), for a proxy that reaches
    /// polld over TCP. Default: none, so every TCP client is its peer.
    /// Behind a Caddy on the same machine, listen on a Unix socket instead:
    /// trusting loopback lets any local process claim any address.
    #[arg(long = "trusted-proxy", env = "POLL_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_net)]
    pub trusted_proxies: Vec<IpNet>,

    /// Requests handled at once on threads that may wait: a creation,
    /// change or deletion (each holds its thread until the group commit's
    /// fsync), and every request on PostgreSQL (each read a round trip).
    /// Reads and votes on SQLite run on one thread per core instead (a
    /// vote's answer waits on its connection: docs/PERFORMANCE.md). Each
    /// costs a thread and a read connection while in use.
    #[arg(long, env = "POLL_WORKERS", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,

    /// Open connections beyond this are closed at once (keep it below the
    /// process's open-file limit).
    #[arg(long, env = "POLL_MAX_CONNECTIONS", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Open connections one client (IPv4 address or IPv6 /64) may hold;
    /// more are closed at once. Not applied to trusted proxies, whose
    /// connections carry many clients.
    #[arg(long, env = "POLL_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_client: u32,

    /// Seconds a reply may wait for the client to read any of it; a client
    /// that reads nothing for that long is disconnected.
    #[arg(long, env = "POLL_SEND_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub send_timeout_secs: u64,

    /// Poll creations allowed per client per rolling hour.
    #[arg(long, env = "POLL_CREATE_LIMIT", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub create_limit: u32,

    /// Responses one client (IPv4 address or IPv6 /64) may send to a poll at
    /// once: a budget that refills at this many per vote window (one every
    /// window / N). Generous, so that a class behind one address can vote.
    #[arg(long, env = "POLL_VOTE_LIMIT", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub vote_limit: u32,

    /// Responses one client (IPv4 address or IPv6 /64) may send to a poll
    /// with the default duplicate check (`network`) within a day; 0 lifts
    /// this limit (the vote limit above still holds). A room of people
    /// behind one address is what a poll without duplicate check is for.
    #[arg(long, env = "POLL_NETWORK_VOTES_PER_DAY", default_value_t = crate::app::NETWORK_VOTES_PER_DAY)]
    pub network_votes_per_day: u32,

    /// The vote window, in minutes: the time in which an emptied vote budget
    /// refills completely.
    #[arg(long, env = "POLL_VOTE_WINDOW_MINUTES", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1440))]
    pub vote_window_minutes: u64,

    /// The vote window in seconds instead (overrides the minutes).
    #[arg(long, env = "POLL_VOTE_WINDOW_SECS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub vote_window_secs: Option<u64>,

    /// Largest picture accepted, in MiB.
    #[arg(long, env = "POLL_IMAGE_MAX_MIB", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=MAX_FILE_MIB))]
    pub image_max_mib: u32,

    /// Largest sound accepted, in MiB.
    #[arg(long, env = "POLL_AUDIO_MAX_MIB", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=MAX_FILE_MIB))]
    pub audio_max_mib: u32,

    /// Largest video accepted, in MiB.
    #[arg(long, env = "POLL_VIDEO_MAX_MIB", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=MAX_FILE_MIB))]
    pub video_max_mib: u32,

    /// Most pixels (width × height, in millions) of a picture, checked before
    /// it is decoded (a guard against decompression bombs).
    #[arg(long, env = "POLL_IMAGE_MAX_MEGAPIXELS", default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub image_max_megapixels: u32,

    /// Largest form body with files (all files and fields of one form), in
    /// MiB. Keep it at least as large as the largest single file limit.
    #[arg(long, env = "POLL_UPLOAD_MAX_MIB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub upload_max_mib: u32,

    /// Memory for cleaned files held between two sends of a form that is
    /// being filled in, in MiB (see docs/OPERATIONS.md).
    #[arg(long, env = "POLL_UPLOAD_HOLD_MIB", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub upload_hold_mib: u32,
}

/// Largest file limit: SQLite stores at most 1,000,000,000 bytes in a value.
const MAX_FILE_MIB: i64 = 900;

impl PolldArgs {
    /// Options that are fine alone but not together.
    pub fn check(&self) -> anyhow::Result<()> {
        let largest = self.image_max_mib.max(self.audio_max_mib).max(self.video_max_mib);
        if self.upload_max_mib < largest {
            anyhow::bail!(
                "--upload-max-mib ({}) must be at least the largest file limit ({largest} MiB), \
                 or such a file could never be sent",
                self.upload_max_mib
            );
        }
        if self.listen.starts_with("unix:") && self.base_url.is_none() {
            anyhow::bail!(
                "--listen {} needs --base-url: the address people open in their browser (polld cannot tell it                  from a socket)",
                self.listen
            );
        }
        Ok(())
    }

    /// The vote window these options set.
    /// Where the key file is and how long a lease lasts.
    pub fn keys(&self) -> anyhow::Result<crate::store::Keys> {
        crate::store::Keys::for_db(&self.db, self.keys.as_deref(), self.key_lease_days, self.accept_old_key_file)
    }

    /// The database as polld says it at its start: a PostgreSQL URL without
    /// its password.
    pub fn db_shown(&self) -> String {
        crate::store::shown(&self.db)
    }

    pub fn vote_window(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.vote_window_secs.unwrap_or(self.vote_window_minutes.saturating_mul(60)))
    }

    /// The media limits these options set.
    pub fn media_limits(&self) -> crate::media::Limits {
        const MIB: usize = 1024 * 1024;
        crate::media::Limits {
            image_bytes: self.image_max_mib as usize * MIB,
            audio_bytes: self.audio_max_mib as usize * MIB,
            video_bytes: self.video_max_mib as usize * MIB,
            max_pixels: u64::from(self.image_max_megapixels) * 1_000_000,
        }
    }
}
