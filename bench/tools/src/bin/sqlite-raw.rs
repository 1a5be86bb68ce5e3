//! Baseline: raw SQLite insert throughput with polld's durability settings
//! (bundled SQLite, WAL, synchronous=FULL), one writer, N rows per transaction.
//! The rows look like a ballot row (poll id, day, choices JSON).
//! Usage: sqlite-raw DB_FILE SECONDS ROWS_PER_TX
//! Prints: `inserts_per_s=<f> transactions=<n> rows=<n> tx_per_s=<f> cpu_us_per_insert=<f>`
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let secs: f64 = args[2].parse().unwrap();
    let per_tx: usize = args[3].parse().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    let mut conn = rusqlite::Connection::open(path).unwrap();
    let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).unwrap();
    conn.execute_batch(
        "PRAGMA synchronous = FULL;
         CREATE TABLE responses (poll_id TEXT NOT NULL, cast_on TEXT NOT NULL, choices TEXT NOT NULL) STRICT;
         CREATE INDEX responses_by_poll ON responses (poll_id);",
    )
    .unwrap();
    let cpu0 = self_cpu_ticks();
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let (mut rows, mut txs) = (0u64, 0u64);
    while Instant::now() < deadline {
        let tx = conn.transaction().unwrap();
        {
            let mut st =
                tx.prepare_cached("INSERT INTO responses (poll_id, cast_on, choices) VALUES (?1, ?2, ?3)").unwrap();
            for i in 0..per_tx {
                st.execute(rusqlite::params!["AbCdEfGhIjKlMn_-", "2026-11-22", format!("[{},null,{}]", i % 4, i % 3)])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        rows += per_tx as u64;
        txs += 1;
    }
    let el = start.elapsed().as_secs_f64();
    let cpu_us = (self_cpu_ticks() - cpu0) as f64 * 1e6 / 100.0 / rows.max(1) as f64;
    println!(
        "inserts_per_s={:.1} transactions={txs} rows={rows} tx_per_s={:.1} cpu_us_per_insert={cpu_us:.1}",
        rows as f64 / el,
        txs as f64 / el
    );
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

/// utime + stime of this process, in clock ticks (USER_HZ, 100 on Linux).
fn self_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}
