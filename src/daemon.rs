//! `polld`'s life: bind, open the store, serve until SIGTERM/SIGINT, drain.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::api::Api;
use crate::app::{App, VoteLimits};
use crate::client::TrustedProxies;
use crate::config::PolldArgs;
use crate::day::Day;
use crate::domain::MAX_JSON_BODY;
use crate::ratelimit::RateLimiter;
use crate::server::{Address, MinRate, Server, ServerConfig, UploadRoute};
use crate::store::Store;
use crate::web::Web;
use crate::web::uploads::Uploads;

/// Form bodies whose files are arriving at once. A slot is taken only when a
/// file part's content begins (a form without a file takes none) and given
/// back once the body is read; memory is bounded apart, by
/// [`UPLOAD_MEMORY_BODIES`]. Sixteen, so that a few slow clients, one slot
/// each, cannot hold them all.
const UPLOADS_AT_ONCE: usize = 16;
/// Of those, how many one client may hold, so that one client (four slow
/// connections, say) cannot take them all.
const UPLOADS_PER_CLIENT: u32 = 1;
/// The memory all upload bodies may hold at once, in largest bodies
/// (`POLL_UPLOAD_MAX_MIB`): taken as bytes arrive, so sixteen slow uploads
/// hold little of it.
const UPLOAD_MEMORY_BODIES: usize = 4;
/// The slowest a file may arrive, after a head start from its first byte:
/// a client trickling a file must not hold an upload slot for minutes.
const UPLOAD_MIN_RATE: MinRate = MinRate { bytes_per_sec: 16 * 1024, head_start: Duration::from_secs(10) };
/// The largest creation or admin form before its first file: 20 questions
/// of 12 options at their longest, in four-byte characters, with the
/// multipart headers of every field, come to about 300 KB.
const FORM_MAX: usize = 2 * MAX_JSON_BODY;

/// How far above the process's priority polld's writer runs, where the
/// kernel allows it (CAP_SYS_NICE, or an RLIMIT_NICE such as systemd's
/// `LimitNICE=-10`, which deploy/anonpoll.service sets). Every vote waits
/// for the writer's next batch, and a batch is short: run first, it keeps
/// votes from waiting behind the request threads that render and send a
/// busy client's pages (docs/RELIABILITY.md, "The writer's
/// priority").
pub const WRITER_RAISE: i32 = 10;

/// Raises the calling thread (polld's writer, as it starts) by
/// [`WRITER_RAISE`], or says once why it cannot.
fn raise_writer() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    crate::priority::shift_own_or_say(-WRITER_RAISE, &SAID, |e| {
        format!(
            "polld: cannot run the writer above the other threads ({e}); under a busy client's load votes wait \
             longer. Allow it with LimitNICE=-{WRITER_RAISE} in the systemd unit (deploy/anonpoll.service) or \
             CAP_SYS_NICE"
        )
    });
}

pub fn run(args: PolldArgs) -> anyhow::Result<()> {
    args.check()?;
    let trusted = TrustedProxies::new(args.trusted_proxies.clone());
    let mut config = ServerConfig::new(usize::from(args.workers), trusted, MAX_JSON_BODY);
    config.max_connections = args.max_connections as usize;
    config.max_connections_per_client = args.max_connections_per_client;
    config.send_timeout = Duration::from_secs(args.send_timeout_secs);
    // A remote database makes every read wait on the network: requests
    // then run on the threads that may wait, `--workers` at once.
    config.blocking = args.db.to_str().is_some_and(crate::store::is_url);
    config.inline = crate::web::runs_inline;
    let upload_max = args.upload_max_mib as usize * 1024 * 1024;
    config.uploads = Some(UploadRoute {
        accepts: crate::web::accepts_uploads,
        max_body: upload_max,
        form_max: FORM_MAX,
        // Slow home uplinks: 64 MiB at 2 Mbit/s takes about four minutes.
        body_timeout: Duration::from_secs(300),
        concurrent: UPLOADS_AT_ONCE,
        per_client: UPLOADS_PER_CLIENT,
        memory: UPLOAD_MEMORY_BODIES.saturating_mul(upload_max),
        min_rate: UPLOAD_MIN_RATE,
    });
    // Listen first: a busy port must not leave a new, empty database behind.
    let server = Server::bind(&args.listen, config)?;
    // The writer runs above the request threads where allowed.
    let config = crate::store::WriterConfig { on_start: Some(raise_writer), ..crate::store::WriterConfig::default() };
    let store = Store::open_db(&args.db, &args.keys()?, config)?;
    let address = server.address().clone();
    let base_url = args.base_url.clone().unwrap_or_else(|| format!("http://{address}"));
    let limiter = Arc::new(RateLimiter::new(args.create_limit, Duration::from_secs(3600))?);
    let votes = VoteLimits {
        per_window: args.vote_limit,
        window: args.vote_window(),
        per_network_day: args.network_votes_per_day,
    };
    let app = Arc::new(App::new(store, limiter, votes, &base_url)?);
    // The day's key work at every start: a node that was down for days
    // re-wraps from its old key state before that state moves on. A
    // failure does not stop polld (it serves with the state it has);
    // `/healthz` reports it until the work succeeds, retried each minute.
    if let Err(e) = app.roll_keys(Day::today()) {
        eprintln!("polld: the day's key work at start failed (retried in a minute): {e}");
    }

    let shutdown = server.shutdown_handle();
    ctrlc::set_handler(move || shutdown.trigger()).context("cannot install the signal handler")?;

    match &address {
        Address::Tcp(addr) => eprintln!("polld: listening on http://{addr}"),
        Address::Unix(_) => eprintln!("polld: listening on {address}"),
    }
    eprintln!("polld: database {}, base URL {}", args.db_shown(), app.links().base());
    let uploads = Uploads::new(args.media_limits(), upload_max, args.upload_hold_mib as usize * 1024 * 1024)?;
    let web = Web::new(app.clone(), uploads)?;
    let api = Api::new(app.clone())?;
    // In-memory keys must expire on time on a quiet server too, not only when
    // the next request happens to rotate them. The readers' remembered data
    // keys are expired every `MEMO_SWEEP` (10 s: they live a minute), the
    // rest each minute.
    let (stop_janitor, janitor_stop) = std::sync::mpsc::channel::<()>();
    let janitor = {
        let (app, web) = (app.clone(), web.clone());
        std::thread::Builder::new().name("anonpoll-janitor".into()).spawn(move || {
            let per_minute = (60 / crate::store::MEMO_SWEEP.as_secs().max(1)).max(1);
            let mut wakes = 0u64;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                janitor_stop.recv_timeout(crate::store::MEMO_SWEEP)
            {
                app.expire_key_memos();
                wakes += 1;
                if !wakes.is_multiple_of(per_minute) {
                    continue;
                }
                app.tick();
                web.tick();
                // Without cron too: each day change re-wraps every poll's
                // key and moves the key state on (a failure is retried
                // the next minute).
                if let Err(e) = app.roll_keys(Day::today()) {
                    eprintln!("polld: the day's key work failed (retried in a minute): {e}");
                }
            }
        })?
    };
    server.run(move || {
        let mut api = api.worker()?;
        let mut pages = web.worker()?;
        Ok(move |req: &crate::http::Request| {
            if req.path == "/healthz" {
                api.health(req)
            } else if crate::api::Worker::owns(&req.path) {
                api.handle(req)
            } else {
                pages.handle(req)
            }
        })
    })?;
    drop(stop_janitor);
    if janitor.join().is_err() {
        eprintln!("polld: the janitor thread panicked");
    }
    drop(app); // closes the store: the writer commits what is queued and stops
    eprintln!("polld: stopped");
    Ok(())
}
