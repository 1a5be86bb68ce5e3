//! The `polld` process harness: [`Server`] starts a real `polld` on a random
//! loopback port in its own temporary directory, drains its stderr and stdout
//! into a shared buffer (so a test can search the logs), and kills it on
//! drop. Its methods are the usual ways a test talks to that one server: raw
//! requests, the JSON API, a person's vote over the share page, and SQL on
//! its live database.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{DB_NAME, Request, Response, ballot_code, next_seq, record_response, valid_poll_json};

#[derive(Default)]
pub struct ServerBuilder {
    base_url: Option<String>,
    trusted_proxies: Vec<String>,
    polld_default_trust: bool,
    dir: Option<tempfile::TempDir>,
    args: Vec<String>,
    database: Option<(String, PathBuf)>,
    unix_socket: bool,
}

impl ServerBuilder {
    /// Pass `--base-url URL`.
    pub fn base_url(mut self, url: &str) -> Self {
        self.base_url = Some(url.to_string());
        self
    }

    /// Pass `--trusted-proxy CIDR` (may be repeated).
    pub fn trusted_proxy(mut self, cidr: &str) -> Self {
        self.trusted_proxies.push(cidr.to_string());
        self
    }

    /// Trust no proxy, as polld does by default, instead of the harness's
    /// loopback.
    pub fn polld_default_trust(mut self) -> Self {
        self.polld_default_trust = true;
        self
    }

    /// Listen on a Unix socket in the server's folder (`--listen
    /// unix:PATH`), as the shipped unit does: [`Server::addr`] is then
    /// `unix:PATH`, which the harness's requests connect to. Needs
    /// [`ServerBuilder::base_url`].
    pub fn unix_socket(mut self) -> Self {
        self.unix_socket = true;
        self
    }

    /// Pass any other command-line argument to polld.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Use this PostgreSQL database (`--db URL`) and key file instead of
    /// the test's own: several nodes on one database.
    pub fn database(mut self, url: &str, keys: &Path) -> Self {
        self.database = Some((url.to_string(), keys.to_path_buf()));
        self
    }

    /// Reuse an existing data directory (e.g. to restart on the same DB).
    pub fn in_dir(mut self, dir: tempfile::TempDir) -> Self {
        self.dir = Some(dir);
        self
    }

    pub fn start(self) -> Server {
        let dir = self.dir.unwrap_or_else(|| tempfile::tempdir().expect("create tempdir"));
        let db = dir.path().join(DB_NAME);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_polld"));
        match &self.database {
            Some((url, keys)) => cmd.arg("--db").arg(url).arg("--keys").arg(keys),
            None => cmd.args(db_args(&db)),
        };
        if self.unix_socket {
            // As the shipped unit: a socket for the proxy, whose peer alone
            // names clients (no --trusted-proxy).
            cmd.arg("--listen").arg(format!("unix:{}", dir.path().join("polld.sock").display()));
        } else {
            cmd.arg("--listen").arg("127.0.0.1:0");
        }
        if let Some(url) = &self.base_url {
            cmd.arg("--base-url").arg(url);
        }
        for cidr in &self.trusted_proxies {
            cmd.arg("--trusted-proxy").arg(cidr);
        }
        // The tests' clients are told apart by X-Forwarded-For from loopback,
        // as behind the shipped Caddy (whose unit trusts loopback).
        if self.trusted_proxies.is_empty() && !self.polld_default_trust && !self.unix_socket {
            cmd.args(["--trusted-proxy", "127.0.0.1/8", "--trusted-proxy", "::1/128"]);
        }
        // Most tests vote again and again from one client: the day's limit
        // of a `network` poll is lifted unless a test names it (the rule is
        // tested where it is set, tests/web/throttle.rs and src/app).
        if !self.args.iter().any(|a| a == NETWORK_DAY_FLAG) {
            cmd.args([NETWORK_DAY_FLAG, "0"]);
        }
        cmd.args(&self.args);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn polld");

        let logs: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel::<String>();

        let stderr = child.stderr.take().expect("piped stderr");
        let stderr_logs = Arc::clone(&logs);
        let stderr_thread = std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut announced = false;
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        stderr_logs.lock().unwrap().extend_from_slice(&line);
                        if !announced {
                            let text = String::from_utf8_lossy(&line);
                            if let Some(pos) = text.find("polld: listening on ") {
                                let url = text[pos + "polld: listening on ".len()..].trim().to_string();
                                let _ = tx.send(url);
                                announced = true;
                            }
                        }
                    }
                }
            }
        });

        let stdout = child.stdout.take().expect("piped stdout");
        let stdout_logs = Arc::clone(&logs);
        let stdout_thread = std::thread::spawn(move || {
            let mut reader = stdout;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => stdout_logs.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
        });

        let listen_url = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(url) => url,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let out = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
                panic!("polld did not announce its address within 20 s ({e}); output:\n{out}");
            }
        };
        // `http://127.0.0.1:PORT`, or `unix:PATH` (`unix_socket`).
        let addr = if listen_url.starts_with("unix:") {
            listen_url.clone()
        } else {
            listen_url
                .strip_prefix("http://")
                .unwrap_or_else(|| panic!("unexpected listen URL {listen_url:?}"))
                .trim_end_matches('/')
                .to_string()
        };
        let base_url = self.base_url.clone().unwrap_or_else(|| format!("http://{addr}"));

        Server {
            child: Some(child),
            addr,
            listen_url,
            base_url,
            dir: Some(dir),
            logs,
            drains: vec![stderr_thread, stdout_thread],
        }
    }
}

pub struct Server {
    child: Option<Child>,
    /// `127.0.0.1:PORT`, or `unix:PATH`
    pub addr: String,
    /// URL announced on stderr.
    pub listen_url: String,
    /// Base URL the server should use in links.
    pub base_url: String,
    dir: Option<tempfile::TempDir>,
    logs: Arc<Mutex<Vec<u8>>>,
    drains: Vec<JoinHandle<()>>,
}

/// The environment variable that runs the suite on PostgreSQL: with
/// `ANONPOLL_TEST_ENGINE=postgres`, every polld and pollctl a test starts
/// uses a database of its own on the test binary's shared throwaway cluster
/// ([`super::PgCluster::shared_db`]) instead of a SQLite file (scripts/test
/// runs the engine-neutral test binaries both ways).
pub const ENGINE_VAR: &str = "ANONPOLL_TEST_ENGINE";

/// Whether this run is on PostgreSQL ([`ENGINE_VAR`]).
pub fn on_postgres() -> bool {
    std::env::var(ENGINE_VAR).as_deref() == Ok("postgres")
}

/// The file beside a test's `anonpoll.sqlite3` that names its PostgreSQL
/// database instead, when the run is on PostgreSQL: a polld restarted on
/// the same directory, and pollctl, find the same database through it.
pub const PG_URL_FILE: &str = "anonpoll.pgurl";

/// The URL of the PostgreSQL database of the test data directory `dir`
/// (named in its `anonpoll.pgurl`), if it has one yet.
pub fn pg_url(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(PG_URL_FILE)).ok()
}

/// `--db` and `--keys` for the database a test keeps at `db`: the SQLite
/// file itself, or on PostgreSQL the database named beside it (made on
/// first use); the key file in the `keys` folder beside it
/// ([`super::KEYS_NAME`]).
/// polld's flag for the responses a `network` poll takes from one client
/// a day (1 by default).
pub const NETWORK_DAY_FLAG: &str = "--network-votes-per-day";

pub fn db_args(db: &Path) -> Vec<std::ffi::OsString> {
    let dir = db.parent().expect("the database's directory");
    if !on_postgres() {
        return vec!["--db".into(), db.as_os_str().to_owned(), "--keys".into(), dir.join(super::KEYS_NAME).into()];
    }
    let named = dir.join(PG_URL_FILE);
    let url = match std::fs::read_to_string(&named) {
        Ok(url) => url,
        Err(_) => {
            let pg = super::PgCluster::shared_db().expect("PostgreSQL for ANONPOLL_TEST_ENGINE=postgres");
            let url = pg.url();
            // The database lives as long as the shared cluster (the test
            // binary): a restarted polld finds it again.
            std::mem::forget(pg);
            std::fs::write(&named, &url).expect("note the test's database");
            url
        }
    };
    vec!["--db".into(), url.into(), "--keys".into(), dir.join(super::KEYS_NAME).into_os_string()]
}

/// `pollctl --db DB ARGS` as a process, with no admin token in its
/// environment and nothing on its standard input.
pub fn pollctl(db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pollctl"))
        .args(db_args(db))
        .args(args)
        .env_remove("POLL_ADMIN_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run pollctl")
}

/// Runs `cmd` (a polld that must refuse to start) to its end, its output
/// gathered; fails the test if it is still running after a minute (it
/// started instead of refusing) rather than waiting for ever.
pub fn output_of_refusal(cmd: &mut Command) -> std::process::Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let (mut out, mut err) = (child.stdout.take().expect("stdout"), child.stderr.take().expect("stderr"));
    let readers = (
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = out.read_to_end(&mut b);
            b
        }),
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = err.read_to_end(&mut b);
            b
        }),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = readers.1.join().unwrap_or_default();
            panic!("still running after a minute: it did not refuse\n{}", String::from_utf8_lossy(&stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = readers.0.join().unwrap_or_default();
    let stderr = readers.1.join().unwrap_or_default();
    std::process::Output { status, stdout, stderr }
}

/// [`pollctl`], failing the test unless it succeeds.
pub fn pollctl_ok(db: &Path, args: &[&str]) -> std::process::Output {
    let out = pollctl(db, args);
    assert!(
        out.status.success(),
        "pollctl {args:?} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Server {
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// Start with all defaults in a fresh tempdir.
    pub fn start() -> Server {
        ServerBuilder::default().start()
    }

    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("server dir").path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir().join(DB_NAME)
    }

    /// `pollctl sweep --as-of DAY` on this server's database, as cron runs
    /// it; fails the test unless it succeeds.
    pub fn sweep_as_of(&self, day: &str) {
        pollctl_ok(&self.db_path(), &["sweep", "--as-of", day]);
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running child").id()
    }

    /// Everything polld wrote to stderr and stdout so far (lossy UTF-8).
    pub fn logs(&self) -> String {
        String::from_utf8_lossy(&self.logs.lock().unwrap()).into_owned()
    }

    /// Raw bytes of everything polld wrote to stderr and stdout so far.
    pub fn log_bytes(&self) -> Vec<u8> {
        self.logs.lock().unwrap().clone()
    }

    /// Send SIGTERM, wait (≤ 10 s) for the exit, collect the remaining output.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("server already stopped");
        let status = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + Duration::from_secs(10);
        let exit = loop {
            if let Some(exit) = child.try_wait().expect("try_wait") {
                break exit;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("polld did not exit within 10 s of SIGTERM; output:\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for handle in self.drains.drain(..) {
            let _ = handle.join();
        }
        exit
    }

    /// Stop the server (SIGTERM) and hand back its data directory.
    pub fn into_dir(mut self) -> tempfile::TempDir {
        if self.child.is_some() {
            self.terminate();
        }
        self.dir.take().expect("server dir")
    }

    /// A new, distinct fake client address for X-Forwarded-For, so helpers
    /// never run into the per-client creation limit by accident.
    pub fn fresh_client_ip() -> String {
        let n = next_seq();
        format!("198.18.{}.{}", (n / 250) % 250, n % 250 + 1)
    }

    // ----- HTTP helpers -----------------------------------------------------

    pub fn request(&self, method: &str, path: &str) -> Request {
        Request::new(&self.addr, method, path)
    }

    /// Posts a form's `fields` to `path` from the client address `xff`.
    pub fn post_form(&self, path: &str, xff: &str, fields: &[(&str, &str)]) -> Response {
        self.request("POST", path).xff(xff).form(fields).send()
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path).send()
    }

    pub fn get_auth(&self, path: &str, token: &str) -> Response {
        self.request("GET", path).bearer(token).send()
    }

    /// POST a JSON value with `Content-Type: application/json` from a fresh
    /// fake client address.
    pub fn post_json(&self, path: &str, body: &Value) -> Response {
        self.request("POST", path).xff(&Self::fresh_client_ip()).json(body).send()
    }

    /// POST raw bytes with the given content type from a fresh client address.
    pub fn post_bytes(&self, path: &str, content_type: Option<&str>, body: &[u8]) -> Response {
        let mut req = self.request("POST", path).xff(&Self::fresh_client_ip()).body(body.to_vec());
        if let Some(ct) = content_type {
            req = req.header("Content-Type", ct);
        }
        req.send()
    }

    /// POST /api/polls from a given X-Forwarded-For value.
    pub fn create_from(&self, xff: &str, body: &Value) -> Response {
        self.request("POST", "/api/polls").xff(xff).json(body).send()
    }

    pub fn patch_json(&self, id: &str, token: &str, body: &Value) -> Response {
        self.request("PATCH", &format!("/api/polls/{id}")).bearer(token).json(body).send()
    }

    pub fn delete(&self, id: &str, token: &str) -> Response {
        self.request("DELETE", &format!("/api/polls/{id}")).bearer(token).send()
    }

    /// Create a poll; asserts 201 and returns its id, token and body.
    pub fn create_poll(&self, body: &Value) -> Created {
        let resp = self.post_json("/api/polls", body);
        assert_eq!(resp.status, 201, "poll creation failed: {}", resp.describe());
        Created::from_response(&resp)
    }

    pub fn create_default(&self) -> Created {
        self.create_poll(&valid_poll_json())
    }

    pub fn create_public(&self) -> Created {
        let mut body = valid_poll_json();
        body["resultsPublic"] = json!(true);
        self.create_poll(&body)
    }

    /// A rusqlite connection on the live SQLite database (busy_timeout
    /// 5 s), for a test of what only SQLite has ([`super::sqlite_only`]);
    /// [`Server::exec_sql`], [`Server::query_ints`] and the other helpers
    /// of `db` work on either engine.
    pub fn sql(&self) -> rusqlite::Connection {
        assert!(!super::on_postgres(), "Server::sql() is SQLite's: this test must be sqlite_only() or engine-neutral");
        let conn = rusqlite::Connection::open(self.db_path()).expect("open db with rusqlite");
        conn.busy_timeout(Duration::from_secs(5)).expect("busy_timeout");
        conn
    }

    /// Gives poll `id` a closing day of today as stored (the day comes: no
    /// front end allows a deadline of today, and no clock can be moved in a
    /// black-box test), through the sealed document, with the key file.
    pub fn closing_day_comes(&self, id: &str) {
        let today = super::today();
        super::audit(self.dir())
            .edit_document(id, |doc| doc["closes_on"] = serde_json::json!(today))
            .unwrap_or_else(|e| panic!("cannot set poll {id}'s closing day: {e:#}"));
    }

    /// Poll `id`'s sealed document as it lies in the database.
    pub fn sealed_body(&self, id: &str) -> Vec<u8> {
        super::db_blob(self.dir(), "SELECT body FROM sealed_polls WHERE id = ?1", &[id])
    }

    /// Run one SQL statement on the live database, on either engine
    /// ([`super::db_exec`]), with text parameters; returns changed rows.
    pub fn exec_sql<S: AsRef<str>>(&self, sql: &str, params: impl AsRef<[S]>) -> usize {
        let params: Vec<&str> = params.as_ref().iter().map(AsRef::as_ref).collect();
        super::db_exec(self.dir(), sql, &params)
    }

    /// The first row of a query of whole numbers on the live database, on
    /// either engine ([`super::db_ints`]).
    pub fn query_ints(&self, sql: &str, params: &[&str]) -> Vec<i64> {
        super::db_ints(self.dir(), sql, params)
    }

    /// [`Server::query_ints`] of a query of one number.
    pub fn query_int(&self, sql: &str, params: &[&str]) -> i64 {
        self.query_ints(sql, params)[0]
    }

    /// Cast one vote as a person does, over HTTP: load the share page from
    /// client `xff`, take its one-time ballot code, post the form. `Ok` only
    /// for the thank-you page (200), or on an `afterVote` poll the redirect
    /// to its results (303); `Err` with the status and text otherwise.
    pub fn vote(&self, poll_id: &str, choices: &[Option<usize>], xff: &str) -> Result<(), String> {
        let fields: Vec<(String, String)> = choices
            .iter()
            .enumerate()
            .filter_map(|(q, choice)| choice.map(|o| (format!("q{q}"), o.to_string())))
            .collect();
        self.vote_fields(poll_id, &fields, xff)
    }

    /// [`Server::vote`] with the form's fields as given (docs/WEB.md):
    /// `q{i}` (an option index, repeated for multiple choice, or a scale's
    /// value) and `q{i}r{j}` (the rank of option j, 1 = first).
    pub fn vote_fields(&self, poll_id: &str, fields: &[(String, String)], xff: &str) -> Result<(), String> {
        let resp = self.vote_page(poll_id, fields, xff)?;
        // A vote on an `afterVote` poll without receipts is answered by a 303
        // to the results the voter may now read (docs/WEB.md), any other by
        // the thank-you page.
        let to_results = resp.status == 303 && resp.header("location").is_some_and(|l| l.contains("voted="));
        if resp.status == 200 || to_results { Ok(()) } else { Err(format!("{}: {}", resp.status, resp.text())) }
    }

    /// The answer to a vote cast as [`Server::vote_fields`] casts it, as it
    /// came (the thank-you page with its receipt, a refusal); `Err` only when
    /// the share page gave no form to send.
    pub fn vote_page(&self, poll_id: &str, fields: &[(String, String)], xff: &str) -> Result<Response, String> {
        let path = format!("/p/{poll_id}");
        let page = self.request("GET", &path).xff(xff).send();
        if page.status != 200 {
            return Err(format!("share page: {}", page.status));
        }
        let ballot = ballot_code(&page.text()).ok_or_else(|| "no ballot code on the share page".to_string())?;
        let mut fields = fields.to_vec();
        fields.push(("ballot".to_owned(), ballot));
        Ok(self.request("POST", &path).xff(xff).form(&fields).send())
    }

    /// Record one response through the library's store, as the share page would.
    pub fn record(&self, poll_id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
        record_response(&self.db_path(), poll_id, choices)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The useful parts of a 201 creation response.
#[derive(Debug, Clone)]
pub struct Created {
    pub id: String,
    pub token: String,
    pub body: Value,
}

impl Created {
    pub fn from_response(resp: &Response) -> Created {
        let body = resp.json();
        let id = body["id"].as_str().unwrap_or_else(|| panic!("no id in {body}")).to_string();
        let token = body["adminToken"].as_str().unwrap_or_else(|| panic!("no adminToken in {body}")).to_string();
        Created { id, token, body }
    }

    /// The poll a web creation form made, read off its "Your poll is
    /// ready" page (its share and admin links; `body` stays empty).
    pub fn from_page(html: &str) -> Created {
        let share = super::input_value(html, "id=\"link-share\"");
        let admin = super::input_value(html, "id=\"link-admin\"");
        let id = share.rsplit('/').next().unwrap_or_default().to_owned();
        let token = admin.rsplit('#').next().unwrap_or_default().to_owned();
        Created { id, token, body: Value::Null }
    }

    pub fn path(&self) -> String {
        format!("/api/polls/{}", self.id)
    }

    pub fn results_path(&self) -> String {
        format!("/api/polls/{}/results", self.id)
    }
}
