//! The worker threads that run the request handlers: `--workers` of them
//! for quiet clients at the process's priority, and [`BUSY_PER_CORE`] per
//! core for busy ones at a lower priority ([`BUSY_NICE`]).
//!
//! Why two kinds (issue 24, item 4): where the cores are short, the kernel
//! shares them between threads, not clients, so a client that keeps many
//! workers rendering big pages takes the CPU from a voter whose one request
//! waits in another worker. `fairq.rs` tells busy clients from quiet ones by
//! the CPU time their requests take; here each request's CPU time is
//! measured, and busy clients' requests run on threads the kernel serves
//! after the quiet ones. Alone, the busy workers have every core.
//!
//! Promises:
//! - a handler runs on a worker that owns its state, made by `make_handler`
//!   once per worker and again after a panic (the panic answers 500);
//! - every request's CPU time in its handler is reported to the queue;
//! - a busy worker takes a quiet request when no quiet worker is free, so no
//!   quiet request waits while a worker is idle (a busy one waits for a busy
//!   worker: that is the point); a refusal to lower a thread's priority (a
//!   sandbox) is said once on stderr and changes nothing else.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::anyhow;
use tokio::sync::oneshot;

use crate::error::Error;
use crate::fairq::{self, Lane};
use crate::http::{Request, Response};

/// One request waiting for a worker.
pub struct Job {
    pub request: Request,
    pub reply: oneshot::Sender<Response>,
}

/// Starts the workers: `quiet` (at least 1) for quiet clients, and
/// [`BUSY_PER_CORE`] per core for busy ones. Answers once every worker has
/// made its state, or with the first error.
pub fn start<F, H>(
    quiet: usize,
    make_handler: F,
) -> anyhow::Result<(fairq::Sender<Job>, Vec<std::thread::JoinHandle<()>>)>
where
    F: Fn() -> anyhow::Result<H> + Send + Sync + 'static,
    H: FnMut(&Request) -> Response,
{
    let quiet = quiet.max(1);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let busy = (BUSY_PER_CORE * cores).min(BUSY_MAX);
    let (jobs, queue) = fairq::channel::<Job>(quiet * 64, quiet * 16)?;
    let queue = Arc::new(queue);
    let make_handler = Arc::new(make_handler);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let mut threads = Vec::with_capacity(quiet + busy);
    let lanes = std::iter::repeat_n(Lane::Quiet, quiet).chain(std::iter::repeat_n(Lane::Busy, busy));
    for (i, lane) in lanes.enumerate() {
        let queue = queue.clone();
        let make = make_handler.clone();
        let ready = ready_tx.clone();
        let name = match lane {
            Lane::Quiet => format!("anonpoll-worker-{i}"),
            Lane::Busy => format!("anonpoll-busy-{i}"),
        };
        threads.push(std::thread::Builder::new().name(name).spawn(move || {
            if lane == Lane::Busy {
                lower_own_priority(BUSY_NICE);
            }
            worker(&queue, lane, &*make, &ready)
        })?);
    }
    drop(ready_tx);
    // Refuse to serve at all if a worker cannot set up its state.
    for _ in 0..threads.len() {
        ready_rx.recv().map_err(|_| anyhow!("a worker thread died while starting"))??;
    }
    Ok((jobs, threads))
}

/// Busy workers per core: enough to keep every core working for the busy
/// clients when nobody else needs it, few enough that they do not outweigh
/// the quiet clients' workers (the kernel shares a core by the summed
/// weights of its threads, and 24 threads at nice 10 outweigh two at nice
/// 0: with polld on one core, a small vote's median was 2.3-2.6 ms with 24
/// busy workers and 0.32-0.34 ms with 4). At most [`BUSY_MAX`] in all.
pub const BUSY_PER_CORE: usize = 2;

/// Busy workers at most, however many cores: each holds a thread, its
/// handler's state and a read connection.
pub const BUSY_MAX: usize = 32;

/// The CPU time this thread has taken.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

/// How much lower the busy workers' priority is than the process's: at
/// nice 10 a thread weighs about a tenth of one at nice 0 (the kernel's
/// table), so a quiet client's worker gets the CPU first and the busy
/// workers share what is left; alone, they have every core.
pub const BUSY_NICE: i32 = 10;

/// Lowers this thread's priority by `by` nice steps (any thread may lower
/// its own priority; raising it back needs a privilege or an RLIMIT_NICE
/// that polld may not have, and two system calls a request, hence two
/// kinds of workers rather than one that changes). A refusal (a sandbox without
/// setpriority) leaves it as it was: everything works, only without the
/// quiet clients' head start.
fn lower_own_priority(by: i32) {
    static SAID: AtomicBool = AtomicBool::new(false);
    crate::priority::shift_own_or_say(by, &SAID, |e| {
        format!("polld: cannot lower the busy workers' priority ({e}); quiet clients get no head start")
    });
}

fn worker<F, H>(queue: &fairq::Receiver<Job>, lane: Lane, make: &F, ready: &std::sync::mpsc::Sender<anyhow::Result<()>>)
where
    F: Fn() -> anyhow::Result<H>,
    H: FnMut(&Request) -> Response,
{
    let mut handler = match make() {
        Ok(h) => {
            let _ = ready.send(Ok(()));
            h
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    // The request answered last, reported as the next is taken.
    let mut finished = None;
    loop {
        let Some((job, done)) = queue.recv_after(lane, finished.take()) else { return };
        let started = thread_cpu();
        let response = match catch_unwind(AssertUnwindSafe(|| handler(&job.request))) {
            Ok(r) => r,
            Err(_) => {
                // The panic message went to stderr through the default hook.
                // Start over with fresh state, since the old may be half-changed.
                match make() {
                    Ok(h) => handler = h,
                    Err(e) => eprintln!("anonpoll: cannot renew a worker after a panic: {e:#}"),
                }
                Response::from_error(&Error::internal(anyhow!("a request handler panicked")))
            }
        };
        finished = Some((done, thread_cpu().saturating_sub(started)));
        // A client that hung up needs no answer.
        let _ = job.reply.send(response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own_nice() -> i32 {
        crate::priority::own().unwrap()
    }

    #[test]
    fn a_busy_worker_lowers_its_own_priority_and_no_other_threads() {
        let before = own_nice();
        let lowered = std::thread::spawn(move || {
            lower_own_priority(BUSY_NICE);
            own_nice()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + BUSY_NICE).min(19));
        assert_eq!(own_nice(), before, "the spawning thread keeps its priority");
    }

    #[test]
    fn each_request_reports_the_cpu_time_it_took() {
        let (jobs, threads) = start(1, || {
            Ok(|_: &Request| {
                // 150 ms of CPU time, however busy the machine.
                let start = thread_cpu();
                while thread_cpu().saturating_sub(start) < Duration::from_millis(150) {
                    std::hint::black_box(0u64);
                }
                Response::new(200)
            })
        })
        .unwrap();
        let client: std::net::IpAddr = "192.0.2.5".parse().unwrap();
        let group = crate::client::ClientGroup::of(client);
        let ask = || {
            let (reply, answer) = oneshot::channel();
            let request = Request {
                method: crate::http::Method::Get,
                path: "/".into(),
                query: None,
                headers: Vec::new(),
                body: crate::http::Body::Bytes(bytes::Bytes::new()),
                client,
            };
            assert!(jobs.try_send(group, Job { request, reply }).is_ok());
            answer.blocking_recv().unwrap()
        };
        // One request of 150 ms of CPU (past BUSY_FROM): the client's next
        // request goes to the busy lane.
        assert_eq!(jobs.lane_of(group), Lane::Quiet);
        assert_eq!(ask().status, 200);
        // Counted as the worker takes its next request (it has none yet).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while jobs.lane_of(group) != Lane::Busy && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(jobs.lane_of(group), Lane::Busy, "the client's CPU time was counted");
        drop(jobs);
        for t in threads {
            t.join().unwrap();
        }
    }
}
