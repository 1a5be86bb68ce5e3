//! Test harness for the anonpoll integration tests, split by concern. Every
//! public name is re-exported here, so tests write `common::Server`,
//! `common::assert_422`, … (or `use common::*`) whatever file holds it.
//!
//! * `server`: the `polld` process ([`Server`], [`Created`]) on a random port.
//! * `http`: a raw HTTP/1.1 client ([`Request`], [`Response`], [`send_raw`]).
//! * `problem`: RFC 9457 problem and 422 assertions.
//! * `builders`: JSON request bodies and the one-time codes of HTML forms.
//! * `db`: raw-byte scans of every database file.
//! * `dates`: identifier and date shapes, today's date.
//! * `bytes`: byte search, markers, hex/SHA-256/base64url.
//! * `skip`: [`skip_or_fail`] for tests that need a missing tool.
//! * [`media`]: multipart bodies and pictures with metadata.
//! * [`hostile`]: clients that misbehave on purpose (issue 13's attacks).
//! * [`keepalive`]: a keep-alive client with deadlines, and probes.
//! * [`in_process`]: the application without a polld, limits opened wide.
//! * [`machine`]: the lock that lets a heavy or timed test run alone.
//! * `front`: Caddy with the several-node Caddyfile ([`NodesFront`]) and
//!   requests from other loopback addresses ([`curl_from`]).
//! * `pg`: throwaway PostgreSQL clusters ([`PgCluster`]: primary, standbys,
//!   promotion, base backups, WAL archive) and raw-byte scans of their files.
// Each of the seven test binaries compiles this harness and uses a part of
// it; what one binary leaves unused is not dead.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

mod builders;
mod bytes;
mod dates;
mod db;
mod front;
pub mod hostile;
mod http;
pub mod in_process;
pub mod keepalive;
pub mod machine;
pub mod media;
mod pg;
pub mod pg_attack;
mod problem;
mod server;
mod skip;

pub use builders::*;
pub use bytes::*;
pub use dates::*;
pub use db::*;
pub use front::*;
pub use http::*;
pub use pg::*;
pub use problem::*;
pub use server::*;
pub use skip::*;

/// A field of process `pid`'s `/proc/PID/status` in KiB (`"VmRSS:"`,
/// `"RssAnon:"`); `None` once the process is gone.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The `/proc/PID/task/TID` directories of a process's threads whose name
/// starts with `prefix` (polld names its kinds: anonpoll-io, -wait,
/// -writer, -janitor).
pub fn threads_named(pid: u32, prefix: &str) -> Vec<std::path::PathBuf> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .map(|t| t.path())
        .filter(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.starts_with(prefix)))
        .collect()
}

/// Largest accepted JSON body (256 KiB).
pub const BODY_LIMIT: usize = 262_144;
/// File name of the database inside a test's data directory.
pub const DB_NAME: &str = "anonpoll.sqlite3";
/// Where a test keeps its key file, in a folder of its own inside the
/// test's data directory (given to every polld and pollctl with `--keys`:
/// polld's default, a folder beside the data directory, would lie outside
/// the test's temporary directory).
pub const KEYS_NAME: &str = "keys/anonpoll.keys";
/// How long a single HTTP exchange may take before the test fails.
pub const IO_TIMEOUT: Duration = Duration::from_secs(15);

/// The name libtest gives the test `name` of the module `module_path`
/// (`module_path!()` there): its path without the test binary's own name,
/// as `--exact` wants it when a test runs itself again as a child process.
pub fn libtest_name(module_path: &str, name: &str) -> String {
    let module = module_path.split_once("::").map_or("", |(_, rest)| rest);
    if module.is_empty() { name.to_owned() } else { format!("{module}::{name}") }
}
