//! CPU and bytes written of polld (and of a PostgreSQL cluster) in windows
//! the caller marks, with the writer's busy spans found at 1 ms resolution:
//! for timing what polld does on its own (a mix after an idle moment), which
//! no request's latency shows.
//!
//!   procwatch POLLD_PID [PGDATA] [--period-us 1000] [--gap-ms 30] [--wal FILE]
//!
//! Reads commands on stdin, one a line: `mark NAME [GAP_MS]` starts a
//! window (and ends the one before; GAP_MS replaces --gap-ms in it), `end`
//! ends it; end of input ends it too. For each
//! window it prints
//!
//!   WINDOW name= secs= writer_ms= polld_ms= pg_ms= pgtop_pid= pgtop_ms=
//!          writer_wchar= writer_write_bytes= polld_write_bytes= pg_write_bytes=
//!          bursts= big_wall_ms= big_cpu_ms= big_start_ms=
//!
//! and one line per burst: `BURST name= start_ms= wall_ms= writer_ms=
//! pgtop_ms=`. CPU is utime + stime: of polld's thread `anonpoll-writer`
//! (`/proc/PID/task/TID/schedstat`, in ns), of the whole of polld
//! (`/proc/PID/stat`, which keeps what ended threads spent; 10 ms ticks),
//! of every process of the cluster (the postmaster, its children's
//! schedstat, and what the postmaster reaped of ended children), and of the
//! cluster's busiest client backend in the window (`pgtop`: the backend of
//! polld's writer when the window holds its work; autovacuum workers and
//! the checkpointer are not client backends). A burst is a run of
//! samples in which the writer thread or `pgtop` ran, ended by `--gap-ms`
//! without either running: the writer's work for one batch or one mix,
//! waits for the disk included (they lie between its CPU). `big_*` is the
//! burst with the most CPU. Bytes: `wchar` (bytes passed to write
//! calls) and `write_bytes` (bytes the thread or process made dirty in the
//! page cache, to go to disk) from `/proc/.../io`. With `--wal FILE` (SQLite's
//! `-wal` file), its size is sampled too: `wal_start`, `wal_max`, and
//! `wal_at_big` (at the big burst's start) in bytes, and in ms from the big
//! burst's start, `wal_peak_ms` (the first sample at its peak: the
//! transaction has written its last frame) and `wal_zero_ms` (the first
//! after it at 0 bytes: the WAL truncated), or -1.
use std::collections::HashMap;
use std::fs::File;
use std::io::BufRead;
use std::os::unix::fs::FileExt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn read_at(f: &File, buf: &mut [u8]) -> Option<usize> {
    f.read_at(buf, 0).ok()
}

/// The first field of a schedstat file: ns on the CPU.
fn schedstat_ns(f: &File) -> Option<u64> {
    let mut b = [0u8; 128];
    let n = read_at(f, &mut b)?;
    std::str::from_utf8(&b[..n]).ok()?.split_whitespace().next()?.parse().ok()
}

/// Fields of /proc/PID/stat after the command: (ppid, utime + stime, cutime + cstime) in ticks.
fn stat_of(pid: u32) -> Option<(u32, u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Some((n(1) as u32, n(11) + n(12), n(13) + n(14)))
}

fn io_of(path: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let get =
        |k: &str| s.lines().find_map(|l| l.strip_prefix(k).and_then(|v| v.trim().parse::<u64>().ok())).unwrap_or(0);
    (get("wchar:"), get("write_bytes:"))
}

/// Whether a process of the cluster serves a client connection (its title
/// names the client's address: `postgres: USER DB 127.0.0.1(PORT) idle`).
fn is_client_backend(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).split(' ').any(|w| w.contains('(') && w.ends_with(')')))
}

struct Pg {
    postmaster: u32,
    files: HashMap<u32, File>,
    last_scan: Instant,
}

impl Pg {
    fn open(pgdata: &str) -> Pg {
        let pm: u32 = std::fs::read_to_string(format!("{pgdata}/postmaster.pid"))
            .expect("postmaster.pid")
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("postmaster pid");
        let mut pg = Pg { postmaster: pm, files: HashMap::new(), last_scan: Instant::now() };
        pg.scan();
        pg
    }

    /// Finds the postmaster's children (new backends, autovacuum workers).
    fn scan(&mut self) {
        let mut live = vec![self.postmaster];
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
                if let Some((ppid, _, _)) = stat_of(pid)
                    && ppid == self.postmaster
                {
                    live.push(pid);
                }
            }
        }
        self.files.retain(|p, _| live.contains(p));
        for p in live {
            if let std::collections::hash_map::Entry::Vacant(v) = self.files.entry(p)
                && let Ok(f) = File::open(format!("/proc/{p}/schedstat"))
            {
                v.insert(f);
            }
        }
        self.last_scan = Instant::now();
    }

    fn sample(&mut self) -> Vec<(u32, u64)> {
        if self.last_scan.elapsed() >= Duration::from_millis(100) {
            self.scan();
        }
        self.files.iter().filter_map(|(p, f)| schedstat_ns(f).map(|ns| (*p, ns))).collect()
    }

    /// Ticks the postmaster reaped of ended children (its own are in its schedstat).
    fn reaped_ticks(&self) -> u64 {
        stat_of(self.postmaster).map_or(0, |(_, _, children)| children)
    }

    fn write_bytes(&self) -> u64 {
        self.files.keys().map(|p| io_of(&format!("/proc/{p}/io")).1).sum()
    }
}

struct Sample {
    at: Duration,
    writer: u64,
    wal: u64,
    pg: Vec<(u32, u64)>,
}

struct Window {
    name: String,
    /// Gap that ends a burst in this window.
    gap: Duration,
    start: Instant,
    samples: Vec<Sample>,
    polld_ticks: u64,
    writer_io: (u64, u64),
    polld_io: (u64, u64),
    pg_reaped: u64,
    pg_write_bytes: u64,
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let usage = "procwatch POLLD_PID [PGDATA] [--period-us 1000] [--gap-ms 30] [--wal FILE]";
    let mut wal: Option<String> = None;
    let pid: u32 = a.get(1).and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("{usage}"));
    let mut pgdata = None;
    let mut period = Duration::from_micros(1000);
    let mut gap = Duration::from_millis(30);
    let mut i = 2;
    while i < a.len() {
        match a[i].as_str() {
            "--period-us" => {
                period = Duration::from_micros(a[i + 1].parse().expect("period"));
                i += 1;
            }
            "--wal" => {
                wal = Some(a[i + 1].clone());
                i += 1;
            }
            "--gap-ms" => {
                gap = Duration::from_millis(a[i + 1].parse().expect("gap"));
                i += 1;
            }
            p => pgdata = Some(p.to_owned()),
        }
        i += 1;
    }
    let hz = 100u64; // CLK_TCK on Linux
    let writer_tid = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("polld's tasks")
        .flatten()
        .find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "anonpoll-writer"))
        .and_then(|t| t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .expect("polld has no anonpoll-writer thread");
    let writer_path = format!("/proc/{pid}/task/{writer_tid}");
    let writer = File::open(format!("{writer_path}/schedstat")).expect("writer schedstat");
    let mut pg = pgdata.as_deref().map(Pg::open);

    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    let wal_size = || wal.as_deref().map_or(0, |w| std::fs::metadata(w).map_or(0, |m| m.len()));
    let polld_ticks = || stat_of(pid).map_or(0, |(_, t, _)| t);
    let open_window = |name: String, gap: Duration, pg: &Option<Pg>| Window {
        name,
        gap,
        start: Instant::now(),
        samples: Vec::with_capacity(4096),
        polld_ticks: polld_ticks(),
        writer_io: io_of(&format!("{writer_path}/io")),
        polld_io: io_of(&format!("/proc/{pid}/io")),
        pg_reaped: pg.as_ref().map_or(0, Pg::reaped_ticks),
        pg_write_bytes: pg.as_ref().map_or(0, Pg::write_bytes),
    };
    let mut window: Option<Window> = None;
    let close = |w: Window, pg: &Option<Pg>, last: &Sample| {
        let secs = w.start.elapsed().as_secs_f64();
        let ms = |ns: u64| ns as f64 / 1e6;
        let first = &w.samples[0];
        let writer_ns = last.writer.saturating_sub(first.writer);
        let base: HashMap<u32, u64> = first.pg.iter().copied().collect();
        let mut per: HashMap<u32, u64> = HashMap::new();
        for (p, ns) in &last.pg {
            per.insert(*p, ns.saturating_sub(*base.get(p).unwrap_or(&0)));
        }
        // Children that came and went within the window are in the reaped ticks.
        let reaped = pg.as_ref().map_or(0, Pg::reaped_ticks).saturating_sub(w.pg_reaped);
        let pg_ns: u64 = per.values().sum::<u64>() + reaped * 1_000_000_000 / hz;
        // The busiest client backend ("postgres: USER DB HOST(PORT) ..."),
        // not an autovacuum worker or the checkpointer.
        let (top_pid, _) = per
            .iter()
            .filter(|(p, _)| is_client_backend(**p))
            .max_by_key(|(_, ns)| **ns)
            .map_or((0, 0), |(p, ns)| (*p, *ns));
        let top_at = |s: &Sample| s.pg.iter().find(|(p, _)| *p == top_pid).map_or(0, |(_, ns)| *ns);
        // Bursts: samples where the writer or pgtop ran, joined across gaps
        // shorter than `gap`.
        let mut bursts: Vec<(Duration, Duration, u64, u64)> = Vec::new(); // start, end, writer ns, top ns
        let mut cur: Option<(Duration, Duration, u64, u64)> = None;
        for pair in w.samples.windows(2) {
            let (p, s) = (&pair[0], &pair[1]);
            let dw = s.writer.saturating_sub(p.writer);
            let dt = top_at(s).saturating_sub(top_at(p));
            if dw == 0 && dt == 0 {
                continue;
            }
            match &mut cur {
                Some(c) if s.at.saturating_sub(c.1) <= w.gap => {
                    c.1 = s.at;
                    c.2 += dw;
                    c.3 += dt;
                }
                _ => {
                    if let Some(c) = cur.take() {
                        bursts.push(c);
                    }
                    cur = Some((p.at, s.at, dw, dt));
                }
            }
        }
        bursts.extend(cur);
        let (wchar, wbytes) = io_of(&format!("{writer_path}/io"));
        let (_, pbytes) = io_of(&format!("/proc/{pid}/io"));
        let pg_bytes = pg.as_ref().map_or(0, Pg::write_bytes).saturating_sub(w.pg_write_bytes);
        let big = bursts.iter().max_by_key(|b| b.2 + b.3);
        let (mut peak_ms, mut zero_ms) = (-1.0, -1.0);
        if let Some(b) = big {
            let max = w.samples.iter().map(|s| s.wal).max().unwrap_or(0);
            let after: Vec<&Sample> = w.samples.iter().filter(|s| s.at >= b.0).collect();
            if max > 0
                && let Some(i) = after.iter().position(|s| s.wal == max)
            {
                peak_ms = (after[i].at - b.0).as_secs_f64() * 1e3;
                if let Some(z) = after[i..].iter().find(|s| s.wal == 0) {
                    zero_ms = (z.at - b.0).as_secs_f64() * 1e3;
                }
            }
        }
        println!(
            "WINDOW name={} secs={:.3} writer_ms={:.2} polld_ms={} pg_ms={:.2} pgtop_pid={} pgtop_ms={:.2} \
             writer_wchar={} writer_write_bytes={} polld_write_bytes={} pg_write_bytes={} bursts={} \
             big_wall_ms={:.1} big_cpu_ms={:.2} big_start_ms={:.1} wal_start={} wal_max={} wal_at_big={} wal_peak_ms={:.1} wal_zero_ms={:.1} samples={}",
            w.name,
            secs,
            ms(writer_ns),
            polld_ticks().saturating_sub(w.polld_ticks) * 1000 / hz,
            ms(pg_ns),
            top_pid,
            ms(*per.get(&top_pid).unwrap_or(&0)),
            wchar.saturating_sub(w.writer_io.0),
            wbytes.saturating_sub(w.writer_io.1),
            pbytes.saturating_sub(w.polld_io.1),
            pg_bytes,
            bursts.len(),
            big.map_or(0.0, |b| (b.1 - b.0).as_secs_f64() * 1e3),
            big.map_or(0.0, |b| ms(b.2 + b.3)),
            big.map_or(0.0, |b| b.0.as_secs_f64() * 1e3),
            first.wal,
            w.samples.iter().map(|s| s.wal).max().unwrap_or(0),
            big.and_then(|b| w.samples.iter().find(|s| s.at >= b.0)).map_or(0, |s| s.wal),
            peak_ms,
            zero_ms,
            w.samples.len(),
        );
        for b in &bursts {
            println!(
                "BURST name={} start_ms={:.1} wall_ms={:.1} writer_ms={:.3} pgtop_ms={:.3}",
                w.name,
                b.0.as_secs_f64() * 1e3,
                (b.1 - b.0).as_secs_f64() * 1e3,
                ms(b.2),
                ms(b.3)
            );
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
    };
    loop {
        let mut ended = false;
        loop {
            match rx.try_recv() {
                Ok(line) => {
                    let line = line.trim().to_owned();
                    let s = Sample {
                        at: window.as_ref().map_or(Duration::ZERO, |w| w.start.elapsed()),
                        writer: schedstat_ns(&writer).unwrap_or(0),
                        wal: wal_size(),
                        pg: pg.as_mut().map_or_else(Vec::new, Pg::sample),
                    };
                    if let Some(mut w) = window.take() {
                        w.samples.push(Sample { at: s.at, writer: s.writer, wal: s.wal, pg: s.pg.clone() });
                        close(w, &pg, &s);
                    }
                    if let Some(rest) = line.strip_prefix("mark ") {
                        // `mark NAME [GAP_MS]`: this window's gap, else --gap-ms.
                        let mut words = rest.split_whitespace();
                        let name = words.next().unwrap_or("window").to_owned();
                        let g = words.next().and_then(|g| g.parse().ok()).map_or(gap, Duration::from_millis);
                        let mut w = open_window(name, g, &pg);
                        w.samples.push(Sample {
                            at: Duration::ZERO,
                            writer: schedstat_ns(&writer).unwrap_or(0),
                            wal: wal_size(),
                            pg: pg.as_mut().map_or_else(Vec::new, Pg::sample),
                        });
                        window = Some(w);
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    ended = true;
                    break;
                }
            }
        }
        if ended {
            if let Some(mut w) = window.take() {
                let s = Sample {
                    at: w.start.elapsed(),
                    writer: schedstat_ns(&writer).unwrap_or(0),
                    wal: wal_size(),
                    pg: pg.as_mut().map_or_else(Vec::new, Pg::sample),
                };
                w.samples.push(Sample { at: s.at, writer: s.writer, wal: s.wal, pg: s.pg.clone() });
                close(w, &pg, &s);
            }
            return;
        }
        if let Some(w) = window.as_mut() {
            let at = w.start.elapsed();
            let writer_ns = schedstat_ns(&writer).unwrap_or(0);
            let pgs = pg.as_mut().map_or_else(Vec::new, Pg::sample);
            w.samples.push(Sample { at, writer: writer_ns, wal: wal_size(), pg: pgs });
        }
        std::thread::sleep(period);
    }
}
