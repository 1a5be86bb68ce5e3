//! Throwaway PostgreSQL clusters for the tests (issue 23): a primary in a
//! fresh temporary directory, streaming standbys, promotion, base backups,
//! WAL archiving, and raw-byte scans of every file they write, so a test can
//! prove what reaches the disk of each copy.
//!
//! Each [`PgCluster`] lives in its own temporary directory (`data/` the data
//! directory, `sock/` a private unix socket directory, `archive/` the WAL
//! archive, `server.log`) and listens on 127.0.0.1 at a free port, with trust
//! authentication for `postgres`. It uses the highest
//! `/usr/lib/postgresql/*/bin` (Debian), else `initdb` on `PATH`. As root,
//! `initdb` and the server refuse to run, so they run as the `postgres` user
//! (`runuser -u postgres --`) in a directory chowned to it; clients (psql,
//! `basebackup`) run as the caller.
//!
//! No server may outlive its test, even one that panics or a test binary
//! that is killed. Drop stops the server (`pg_ctl stop -m immediate`) before
//! it returns, which covers a panic (libtest unwinds). It cannot cover the
//! cluster [`PgCluster::shared`] keeps in a static (statics are never
//! dropped) nor a process killed by a signal or `process::exit`: for those
//! each cluster has a watchdog, a tiny `sh` in its own process group (so a
//! terminal's Ctrl-C does not reach it) that blocks reading a pipe whose
//! only writer is the test process. The pipe closes when Drop closes it or
//! when the test process ends, however it ends; the watchdog then stops the
//! server (if still running) and removes the directory. Chosen over a
//! `postmaster.pid` or parent-pid poll because it needs no polling interval
//! and cannot mistake a reused process id for its parent.
//! `tests/store/pg_harness.rs` proves all three ways out.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{next_seq, skip_or_fail};

/// How long a server may take to start, stop, promote or catch up.
const PG_WAIT: Duration = Duration::from_secs(60);

/// Settings of a cluster before it starts. `PgCluster::builder().start()`.
#[derive(Clone, Default)]
pub struct PgBuilder {
    no_fsync: bool,
    archive: bool,
    settings: Vec<(String, String)>,
}

impl PgBuilder {
    /// `fsync = off`: faster, for tests that never crash the machine. Not
    /// the default: fsync stays on unless asked, as on a real server.
    pub fn no_fsync(mut self) -> Self {
        self.no_fsync = true;
        self
    }

    /// WAL archiving into [`PgCluster::archive_dir`] (`archive_mode = on`,
    /// `archive_command` a `cp`). Standbys made from this primary archive
    /// into their own directory once promoted.
    pub fn archive(mut self) -> Self {
        self.archive = true;
        self
    }

    /// Any other server setting, e.g. `setting("autovacuum", "off")`. The
    /// value is written as is: quote strings (`"'1min'"`).
    pub fn setting(mut self, name: &str, value: &str) -> Self {
        self.settings.push((name.to_string(), value.to_string()));
        self
    }

    /// Starts the primary. `None` (after a visible skip, or a failure under
    /// `CI=true`) when no PostgreSQL is installed.
    #[track_caller]
    pub fn start(self) -> Option<PgCluster> {
        let bin = pg_bin()?;
        Some(PgCluster::init(bin, self))
    }
}

/// One PostgreSQL server (a primary, or a standby made by
/// [`PgCluster::standby`]) in its own temporary directory. Stopped on
/// drop; its directory is removed right after, in the background.
pub struct PgCluster {
    bin: PathBuf,
    builder: PgBuilder,
    /// The cluster's own directory, removed by the watchdog.
    root: PathBuf,
    port: u16,
    /// `cluster_name`, also the standby's `application_name` on its primary.
    name: String,
    /// The standbys named in `synchronous_standby_names` on this server
    /// (any one of them confirms a commit), added by
    /// [`PgCluster::synchronous_standby`].
    sync_names: Mutex<Vec<String>>,
    stopped: AtomicBool,
    /// The watchdog and the write end of its pipe, closed by Drop or by the
    /// end of the test process.
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

/// A database of its own on the cluster shared by a test binary
/// ([`PgCluster::shared_db`]); dropped (with `FORCE`) on drop.
pub struct PgDb {
    pub cluster: &'static PgCluster,
    pub name: String,
}

impl PgDb {
    /// `postgresql://postgres@127.0.0.1:PORT/NAME`, for `--db`.
    pub fn url(&self) -> String {
        self.cluster.url(&self.name)
    }

    /// Runs `sql` in this database; see [`PgCluster::psql`].
    pub fn psql(&self, sql: &str) -> String {
        self.cluster.psql(&self.name, sql)
    }

    pub fn try_psql(&self, sql: &str) -> Result<String, String> {
        self.cluster.try_psql(&self.name, sql)
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let _ = self.cluster.try_psql("postgres", &format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name));
    }
}

/// Whether this process runs as root (the server must then run as `postgres`).
fn is_root() -> bool {
    // Without libc: the effective uid is the owner of /proc/self.
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").expect("stat /proc/self")) == 0
}

/// The directory of `initdb`, `pg_ctl`, `postgres`, `psql`: the highest
/// `/usr/lib/postgresql/VERSION/bin`, else the one on `PATH`.
#[track_caller]
pub fn pg_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    let found = versions.pop().map(|(_, bin)| bin).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|d| d.join("initdb").is_file())
    });
    if found.is_none() {
        skip_or_fail(
            "postgresql",
            "the PostgreSQL store's tests; .ci/run installs Debian's postgresql (see the README)",
        );
    }
    found
}

/// A port nothing listens on at this moment (the server may still lose it
/// to another process: [`PgCluster::init`] then retries on another).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind a free port").local_addr().expect("local addr").port()
}

impl PgCluster {
    /// A primary with the default settings (fsync on, no archive).
    #[track_caller]
    pub fn start() -> Option<PgCluster> {
        PgBuilder::default().start()
    }

    pub fn builder() -> PgBuilder {
        PgBuilder::default()
    }

    /// The one cluster of this test binary (fsync off, archiving on), started
    /// on first use; the watchdog stops it when the process ends. `None`
    /// after a visible skip when PostgreSQL is missing.
    #[track_caller]
    pub fn shared() -> Option<&'static PgCluster> {
        static SHARED: OnceLock<PgCluster> = OnceLock::new();
        if let Some(cluster) = SHARED.get() {
            return Some(cluster);
        }
        let bin = pg_bin()?;
        Some(SHARED.get_or_init(|| PgCluster::init(bin, PgBuilder::default().no_fsync().archive())))
    }

    /// A new, empty database on [`PgCluster::shared`], for one test.
    #[track_caller]
    pub fn shared_db() -> Option<PgDb> {
        let cluster = PgCluster::shared()?;
        let name = format!("t{}_{}", std::process::id(), next_seq());
        cluster.create_db(&name);
        Some(PgDb { cluster, name })
    }

    fn init(bin: PathBuf, builder: PgBuilder) -> PgCluster {
        let root = tempfile::Builder::new().prefix("anonpoll-pg-").tempdir().expect("create the cluster's tempdir");
        let name = format!("pg{}", next_seq());
        let mut cluster = PgCluster::new(bin, builder, root, name);
        let mut initdb = cluster.as_server_user("initdb");
        initdb.arg("-D").arg(cluster.data_dir());
        initdb.args(["-A", "trust", "--no-sync", "-U", "postgres", "-E", "UTF8", "--locale=C"]);
        cluster.run(initdb, "initdb");
        std::fs::create_dir_all(cluster.archive_dir()).expect("create the archive dir");
        cluster.chown();
        let conf = cluster.data_dir().join("postgresql.conf");
        let mut file = std::fs::OpenOptions::new().append(true).open(&conf).expect("open postgresql.conf");
        writeln!(file, "\ninclude 'harness.conf'").expect("append to postgresql.conf");
        cluster.start_on_a_free_port();
        cluster
    }

    /// A cluster not started yet in `root`, with its watchdog already armed.
    fn new(bin: PathBuf, builder: PgBuilder, root: tempfile::TempDir, name: String) -> PgCluster {
        // The watchdog removes it, whenever and however the cluster ends.
        let root = root.keep();
        std::fs::create_dir_all(root.join("sock")).expect("create the socket dir");
        let cluster = PgCluster {
            bin,
            builder,
            root,
            port: 0,
            name,
            sync_names: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(true),
            watchdog: Mutex::new(None),
        };
        cluster.chown();
        *cluster.watchdog.lock().unwrap_or_else(PoisonError::into_inner) = Some(cluster.spawn_watchdog());
        cluster
    }

    /// The watchdog described in the module documentation.
    fn spawn_watchdog(&self) -> (Child, ChildStdin) {
        use std::os::unix::process::CommandExt;
        let script = r#"trap '' INT HUP TERM QUIT; cat >/dev/null; dir=$1; shift; "$@" stop -m immediate -w -t 30 >/dev/null 2>&1; rm -rf "$dir""#;
        let mut stop = vec![];
        if is_root() {
            stop.extend(["runuser".into(), "-u".into(), "postgres".into(), "--".into()]);
        }
        stop.push(self.bin.join("pg_ctl").into_os_string());
        stop.extend(["-D".into(), self.data_dir().into_os_string()]);
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("pg-watchdog")
            .arg(self.root.as_path())
            .args(stop)
            .process_group(0)
            // Anywhere the server's user may enter.
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the cluster's watchdog");
        let stdin = child.stdin.take().expect("watchdog stdin");
        (child, stdin)
    }

    /// As root, hands the whole directory to `postgres`.
    fn chown(&self) {
        if is_root() {
            let mut chown = Command::new("chown");
            chown.arg("-R").arg("postgres:postgres").arg(self.root.as_path());
            self.run(chown, "chown");
        }
    }

    /// `harness.conf`, included by `postgresql.conf`: everything this
    /// harness sets, rewritten whole (port, archive, standby names).
    fn write_conf(&self) {
        let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "''"));
        let mut conf = format!(
            "# Written by tests/common/pg.rs.\n\
             listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = {}\n\
             cluster_name = '{}'\ntimezone = 'UTC'\nlog_timezone = 'UTC'\n\
             wal_level = replica\nmax_wal_senders = 10\nmax_replication_slots = 10\n\
             hot_standby = on\nwal_keep_size = '256MB'\nshared_buffers = '32MB'\n\
             fsync = {}\n",
            self.port,
            q(&self.root.as_path().join("sock")),
            self.name,
            if self.builder.no_fsync { "off" } else { "on" },
        );
        if self.builder.archive {
            let command = format!("test ! -f {dir}/%f && cp %p {dir}/%f", dir = self.archive_dir().display());
            conf.push_str(&format!("archive_mode = on\narchive_command = '{}'\n", command.replace('\'', "''")));
        }
        let names = self.sync_names.lock().unwrap_or_else(PoisonError::into_inner).join(", ");
        if !names.is_empty() {
            conf.push_str(&format!("synchronous_standby_names = 'ANY 1 ({names})'\n"));
        }
        for (name, value) in &self.builder.settings {
            conf.push_str(&format!("{name} = {value}\n"));
        }
        std::fs::write(self.data_dir().join("harness.conf"), conf).expect("write harness.conf");
        self.chown();
    }

    /// Starts the server on a free port, trying another when the one picked
    /// was taken meanwhile (by a server of another test binary).
    fn start_on_a_free_port(&mut self) {
        let mut last = String::new();
        for _ in 0..3 {
            self.port = free_port();
            match self.try_start() {
                Ok(()) => return,
                Err(e) => last = e,
            }
        }
        panic!("PostgreSQL did not start: {last}");
    }

    fn try_start(&self) -> Result<(), String> {
        self.write_conf();
        let mut start = self.as_server_user("pg_ctl");
        start.arg("-D").arg(self.data_dir()).arg("-l").arg(self.root.as_path().join("server.log"));
        start.args(["-w", "-t", &PG_WAIT.as_secs().to_string(), "start"]);
        let out = output(start, "pg_ctl start")?;
        if !out.status.success() {
            return Err(format!("{}\nserver log:\n{}", describe(&out), self.log()));
        }
        self.stopped.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Starts a server stopped by [`PgCluster::stop`] or [`PgCluster::kill`]
    /// again, on the same port and data (crash recovery after a kill).
    pub fn start_again(&self) {
        if let Err(e) = self.try_start() {
            panic!("PostgreSQL did not start again: {e}");
        }
    }

    /// `postgresql://postgres@127.0.0.1:PORT/DB`, for polld's `--db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/{db}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's own temporary directory: `data/`, `sock/`,
    /// `archive/`, `server.log`. Removed on drop.
    pub fn dir(&self) -> &Path {
        self.root.as_path()
    }

    /// The data directory (`PGDATA`).
    pub fn data_dir(&self) -> PathBuf {
        self.root.as_path().join("data")
    }

    /// Its write-ahead log, `pg_wal/`.
    pub fn wal_dir(&self) -> PathBuf {
        self.data_dir().join("pg_wal")
    }

    /// Where `archive_command` copies finished WAL segments (empty unless
    /// built with [`PgBuilder::archive`]).
    pub fn archive_dir(&self) -> PathBuf {
        self.root.as_path().join("archive")
    }

    /// The server's log (outside the data directory).
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(self.root.as_path().join("server.log")).unwrap_or_default()).into_owned()
    }

    /// Creates database `name`. Without fsync, `STRATEGY FILE_COPY`: it
    /// copies the template's files instead of writing all of them into the
    /// WAL (measured: 0.14 s and 4 KB of WAL a database instead of 0.16 s
    /// and 4.1 MB, which the shared cluster's archive would keep for every
    /// test). With fsync its two checkpoints cost more (0.75 s against
    /// 0.28 s on a busy machine), so the default, WAL_LOG, stays.
    pub fn create_db(&self, name: &str) {
        let name = name.replace('"', "\"\"");
        let strategy = if self.builder.no_fsync { "FILE_COPY" } else { "WAL_LOG" };
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\" STRATEGY {strategy}"));
    }

    /// Runs `sql` (one or more statements, each in its own transaction
    /// unless it says BEGIN) in database `db` with psql, stopping at the
    /// first error; returns every row printed, one line each, columns
    /// separated by `|`, without the last newline. Panics on an error.
    #[track_caller]
    pub fn psql(&self, db: &str, sql: &str) -> String {
        match self.try_psql(db, sql) {
            Ok(out) => out,
            Err(e) => panic!("psql on port {} ({db}) failed: {e}\nSQL: {sql}", self.port),
        }
    }

    /// [`PgCluster::psql`] that returns psql's error instead of panicking
    /// (e.g. a write refused by a standby, a server that is down).
    pub fn try_psql(&self, db: &str, sql: &str) -> Result<String, String> {
        let mut psql = self.client("psql");
        psql.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres", "-f", "-"]);
        psql.arg("-p").arg(self.port.to_string()).arg("-d").arg(db);
        psql.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = psql.spawn().map_err(|e| format!("spawn psql: {e}"))?;
        let mut stdin = child.stdin.take().ok_or("psql stdin")?;
        // A write error (psql quit early) shows in its status and stderr.
        let _ = stdin.write_all(sql.as_bytes());
        drop(stdin);
        let out = child.wait_with_output().map_err(|e| format!("wait for psql: {e}"))?;
        if !out.status.success() {
            return Err(describe(&out));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim_end_matches('\n').to_string())
    }

    /// A streaming standby of this server: `pg_basebackup -R -X stream -c
    /// fast` into a new directory, started on another port, returned once
    /// it streams. Asynchronous: see [`PgCluster::synchronous_standby`].
    pub fn standby(&self) -> PgCluster {
        let root = tempfile::Builder::new().prefix("anonpoll-pg-").tempdir().expect("create the standby's tempdir");
        let mut standby = PgCluster::new(self.bin.clone(), self.builder.clone(), root, format!("pg{}", next_seq()));
        let mut backup = standby.as_server_user("pg_basebackup");
        // --no-sync: the tests never crash the machine, and fsyncing the
        // copy took 1.3 of its 1.7 s here.
        backup.args(["-h", "127.0.0.1", "-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        backup.arg("-p").arg(self.port.to_string()).arg("-D").arg(standby.data_dir());
        standby.run(backup, "pg_basebackup (standby)");
        std::fs::create_dir_all(standby.archive_dir()).expect("create the standby's archive dir");
        // harness.conf came with the copy: start_on_a_free_port writes the
        // standby's own (port, name, archive, no synchronous standbys).
        standby.start_on_a_free_port();
        standby.wait_until("postgres", "SELECT status FROM pg_stat_wal_receiver", "streaming");
        standby
    }

    /// A standby (as [`PgCluster::standby`]) that this primary waits for:
    /// named in `synchronous_standby_names` (`ANY 1 (...)` of all such),
    /// returned once the primary reports it `sync`. From then on a commit
    /// here returns only when a synchronous standby has it on disk, and
    /// hangs while none answers: stop the primary before such a standby.
    pub fn synchronous_standby(&self) -> PgCluster {
        let standby = self.standby();
        self.sync_names.lock().unwrap_or_else(PoisonError::into_inner).push(standby.name.clone());
        self.write_conf();
        self.psql("postgres", "SELECT pg_reload_conf()");
        let sync = format!("SELECT sync_state FROM pg_stat_replication WHERE application_name = '{}'", standby.name);
        self.wait_until("postgres", &sync, "quorum");
        standby
    }

    /// Waits until `standby` has replayed everything this primary has
    /// flushed so far (its rows are then visible there).
    pub fn wait_replicated(&self, standby: &PgCluster) {
        let lsn = self.psql("postgres", "SELECT pg_current_wal_flush_lsn()");
        let caught_up = format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn");
        standby.wait_until("postgres", &caught_up, "t");
    }

    /// Polls `sql` until it prints `expected` (errors count as not yet).
    #[track_caller]
    pub fn wait_until(&self, db: &str, sql: &str, expected: &str) {
        let deadline = Instant::now() + PG_WAIT;
        let mut last = Err(String::new());
        while Instant::now() < deadline {
            last = self.try_psql(db, sql);
            if last.as_deref() == Ok(expected) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{sql} never gave {expected:?} on port {} within {PG_WAIT:?}; last: {last:?}", self.port);
    }

    /// Promotes this standby to a primary (`pg_ctl promote -w`).
    pub fn promote(&self) {
        let mut promote = self.as_server_user("pg_ctl");
        promote.arg("-D").arg(self.data_dir()).args(["-w", "-t", &PG_WAIT.as_secs().to_string(), "promote"]);
        self.run(promote, "pg_ctl promote");
        self.wait_until("postgres", "SELECT pg_is_in_recovery()", "f");
    }

    /// Stops the server cleanly and waits (`pg_ctl stop -m fast`).
    pub fn stop(&self) {
        let mut stop = self.as_server_user("pg_ctl");
        stop.arg("-D").arg(self.data_dir()).args(["-m", "fast", "-w", "-t", &PG_WAIT.as_secs().to_string(), "stop"]);
        self.run(stop, "pg_ctl stop");
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Kills every process of the server with SIGKILL, as a crash or the
    /// OOM killer would, and waits until they are gone. The data directory
    /// stays ([`PgCluster::start_again`] recovers from it).
    pub fn kill(&self) {
        kill_all(&self.data_dir());
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// `CHECKPOINT` (a restartpoint on a standby): flushes dirty pages into
    /// the data files, so a scan of `base/` sees them.
    pub fn checkpoint(&self) {
        self.psql("postgres", "CHECKPOINT");
    }

    /// Ends the current WAL segment (`pg_switch_wal()`, after writing a WAL
    /// record so there is always one to end) and returns its file name; with
    /// archiving on, returns once the archive holds it.
    pub fn switch_wal(&self) -> String {
        let out = self.psql(
            "postgres",
            "SELECT pg_logical_emit_message(false, 'harness', 'switch');\nSELECT pg_walfile_name(pg_switch_wal())",
        );
        let segment = out.lines().last().unwrap_or_default().to_string();
        if self.builder.archive {
            let deadline = Instant::now() + PG_WAIT;
            while !self.archive_dir().join(&segment).is_file() {
                assert!(Instant::now() < deadline, "WAL segment {segment} not archived within {PG_WAIT:?}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        segment
    }

    /// A plain base backup (`pg_basebackup -X stream -c fast --no-sync`) into `to`
    /// (which must be missing or empty), owned by the caller.
    pub fn basebackup(&self, to: &Path) {
        let mut backup = self.client("pg_basebackup");
        backup.args(["-h", "127.0.0.1", "-U", "postgres", "-X", "stream", "-c", "fast", "--no-sync"]);
        backup.arg("-p").arg(self.port.to_string()).arg("-D").arg(to);
        self.run(backup, "pg_basebackup");
    }

    /// `prog` of the PostgreSQL binaries, run as the server's user (as
    /// root: `postgres`, which `initdb` and the server require).
    fn as_server_user(&self, prog: &str) -> Command {
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join(prog));
            c
        } else {
            Command::new(self.bin.join(prog))
        };
        // The server user must be able to enter the working directory.
        cmd.current_dir(self.root.as_path());
        clean_env(&mut cmd);
        cmd
    }

    /// `prog` of the PostgreSQL binaries, run as the caller (clients).
    fn client(&self, prog: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(prog));
        clean_env(&mut cmd);
        cmd
    }

    /// Runs `cmd` to its end; panics with its output and the server log if
    /// it fails.
    fn run(&self, cmd: Command, what: &str) -> Output {
        match output(cmd, what) {
            Ok(out) if out.status.success() => out,
            Ok(out) => panic!("{what} failed: {}\nserver log:\n{}", describe(&out), self.log()),
            Err(e) => panic!("{e}"),
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if !self.stopped.load(Ordering::SeqCst) {
            let mut stop = self.as_server_user("pg_ctl");
            stop.arg("-D").arg(self.data_dir()).args(["-m", "immediate", "-w", "-t", "30", "stop"]);
            let _ = output(stop, "pg_ctl stop");
        }
        // Whatever pg_ctl could not stop (a wedged server) is killed.
        kill_all(&self.data_dir());
        // The watchdog finds the server stopped and removes the directory,
        // in the background: that took up to 3.8 s on a busy disk. A thread
        // reaps it.
        if let Some((mut child, stdin)) = self.watchdog.lock().unwrap_or_else(PoisonError::into_inner).take() {
            drop(stdin);
            std::thread::spawn(move || child.wait());
        }
    }
}

/// Removes the caller's `PG*` variables (PGHOST, PGPORT, PGUSER, …), which
/// would override the harness's own connection settings.
fn clean_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            cmd.env_remove(name);
        }
    }
}

/// Runs `cmd` with no stdin, capturing its output.
fn output(mut cmd: Command, what: &str) -> Result<Output, String> {
    cmd.stdin(Stdio::null()).output().map_err(|e| format!("could not run {what} ({cmd:?}): {e}"))
}

fn describe(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout).trim_end(),
        String::from_utf8_lossy(&out.stderr).trim_end()
    )
}

/// The processes whose working directory is `dir` or inside it: a
/// PostgreSQL server and all its children work in their data directory, so
/// these are the server's processes (their command lines are rewritten to
/// "postgres: checkpointer" and the like, so those do not tell).
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        // A process may end while listed, or hide its cwd: skip it then.
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else { continue };
        let cwd = cwd.to_string_lossy();
        let cwd = Path::new(cwd.strip_suffix(" (deleted)").unwrap_or(&cwd));
        if cwd.starts_with(dir) {
            pids.push(pid);
        }
    }
    pids
}

/// SIGKILLs every process working in `dir` (found by [`processes_in`])
/// until none is left, then waits until each is reaped: a killed postmaster
/// is an orphan that init reaps, and until then its zombie still "exists"
/// for the `postmaster.pid` check of a server started again (measured here:
/// about a second).
fn kill_all(dir: &Path) {
    let deadline = Instant::now() + PG_WAIT;
    let mut seen = Vec::new();
    loop {
        let pids = processes_in(dir);
        if pids.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "processes {pids:?} in {} survive SIGKILL", dir.display());
        let mut kill = Command::new("kill");
        kill.arg("-KILL").args(pids.iter().map(u32::to_string));
        let _ = output(kill, "kill");
        seen.extend(pids);
        std::thread::sleep(Duration::from_millis(20));
    }
    while let Some(pid) = seen.iter().find(|pid| Path::new(&format!("/proc/{pid}")).exists()) {
        assert!(Instant::now() < deadline, "killed process {pid} not reaped within {PG_WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every regular file under `dir` (recursively; symbolic links are not
/// followed) whose raw bytes contain `needle`, wherever they are: live rows,
/// dead tuples, free space, WAL records. A file that vanishes while the scan
/// runs (a recycled WAL segment) is skipped.
pub fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                todo.push(entry.path());
            } else if kind.is_file() && std::fs::read(entry.path()).is_ok_and(|bytes| holds(&bytes, needle)) {
                hits.push(entry.path());
            }
        }
    }
    hits.sort();
    hits
}

/// Whether `hay` holds `needle`: [`super::contains_bytes`]'s answer, found
/// by jumping between occurrences of the needle's first byte instead of
/// comparing at every offset, since a cluster and its copies are hundreds
/// of megabytes (16 MiB a WAL segment) and the tests build at opt-level 1.
fn holds(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    let mut at = 0;
    while let Some(i) = hay.get(at..).and_then(|h| h.iter().position(|&b| b == first)) {
        let start = at + i;
        if hay.get(start + 1..start + needle.len()) == Some(rest) {
            return true;
        }
        at = start + 1;
    }
    false
}
