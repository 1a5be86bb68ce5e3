//! Command-line and environment configuration of `polld`.

use std::path::PathBuf;

use clap::Parser;
use ipnet::IpNet;

use crate::client::parse_net;

#[derive(Debug, Parser)]
#[command(name = "polld", version, about = "The anonpoll server: JSON API and web pages over one SQLite file.")]
pub struct PolldArgs {
    /// SQLite database file (created with its folder on first start).
    #[arg(long, env = "POLL_DB", default_value = "./data/anonpoll.sqlite3")]
    pub db: PathBuf,

    /// Address to listen on (use port 0 for any free port).
    #[arg(long, env = "POLL_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Public base URL used in links (default: http://<listen address>).
    #[arg(long, env = "POLL_BASE_URL")]
    pub base_url: Option<String>,

    /// Proxy whose X-Forwarded-For is believed (CIDR or address; repeatable,
    /// or comma-separated in the environment). Default: loopback only.
    #[arg(long = "trusted-proxy", env = "POLL_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_net)]
    pub trusted_proxies: Vec<IpNet>,

    /// Worker threads serving requests. A write (vote, creation) holds its
    /// worker until the group commit's fsync, so more workers mean bigger
    /// commit groups under load (docs/PERFORMANCE.md); each idle worker costs
    /// a thread and a SQLite read connection.
    #[arg(long, env = "POLL_WORKERS", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,

    /// Open connections beyond this are closed at once (keep it below the
    /// process's open-file limit).
    #[arg(long, env = "POLL_MAX_CONNECTIONS", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Poll creations allowed per client per rolling hour.
    #[arg(long, env = "POLL_CREATE_LIMIT", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub create_limit: u32,

    /// Responses accepted per poll from one client (IPv4 address or IPv6 /64)
    /// per vote window. Generous, so that a class behind one address can vote.
    #[arg(long, env = "POLL_VOTE_LIMIT", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub vote_limit: u32,

    /// Length of the vote window, in minutes.
    #[arg(long, env = "POLL_VOTE_WINDOW_MINUTES", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1440))]
    pub vote_window_minutes: u64,
}
