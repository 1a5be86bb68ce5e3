//! Bench-only helper over the anonpoll library.
//!
//!   anonbench populate DB RESPONSES FILLER_POLLS HOT_POLLS IDS_OUT
//!       Creates a fresh database (and its key file beside it): HOT_POLLS
//!       polls (public results, 3 questions of 4 options, the polls every
//!       scenario hits; their ids go to IDS_OUT) and one vote, then
//!       FILLER_POLLS more polls and RESPONSES ballots, all through the
//!       library's store (every byte of a poll is sealed under its own key,
//!       so no bulk SQL can write one), in group commits of up to 20,000.
//!       A tenth of the ballots go to the hot polls.
//!   anonbench cast DB SECONDS THREADS IDS_FILE [KIND [receipts|forms]]
//!       The write path without HTTP: THREADS threads call `Store::cast` in a
//!       loop (group commit does the batching), for SECONDS. KIND `single`
//!       (the default) votes on the hot polls; `multiple`, `ranked` or
//!       `scale` first creates as many polls of 3 questions of that type
//!       (6 options; multiple: 1 to 3 choices; scale 0–10) and votes on them.
//!       `receipts`: each ballot with a fresh receipt (as on a poll with
//!       `voteChanges`); `forms`: with a fresh vote form's nonce, as every
//!       web vote (spent in the ballot's transaction on PostgreSQL).
//!       DB may be a `postgresql://` URL; its key file is then the one named
//!       by the environment variable ANONBENCH_KEYS.
//!   anonbench dbsize DB
//!       Bytes of the database as a reader sees it (page_count * page_size,
//!       WAL included), and the number of stored responses.
use std::time::{Duration, Instant};

use anonpoll::day::Day;
use anonpoll::domain::{Answer, Ballot, NewPoll, Question, QuestionKind};
use anonpoll::secret::{AdminToken, PollId, Receipt};
use anonpoll::store::{Keys, Store, WriterConfig};

/// xorshift64*: enough randomness for ballots, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const QUESTIONS: usize = 3;
const OPTIONS: usize = 4;

fn ballot(rng: &mut Rng) -> Vec<Option<usize>> {
    loop {
        let b: Vec<Option<usize>> =
            (0..QUESTIONS).map(|_| if rng.below(10) == 0 { None } else { Some(rng.below(OPTIONS)) }).collect();
        if b.iter().any(Option::is_some) {
            return b;
        }
    }
}

fn bench_poll(title: &str) -> NewPoll {
    let v = serde_json::json!({
        "title": title, "lang": "en", "expiryDays": 365, "resultsPublic": true,
        "questions": (0..QUESTIONS).map(|q| serde_json::json!({
            "type": "single", "label": format!("Question {} of the benchmark poll?", q + 1),
            "options": (0..OPTIONS).map(|o| format!("Option {}", o + 1)).collect::<Vec<_>>()
        })).collect::<Vec<_>>()
    });
    NewPoll::from_json(&v).unwrap_or_else(|e| panic!("invalid bench poll: {e:?}"))
}

/// A poll of 3 questions of `kind` (6 options; multiple: 1 to 3 choices;
/// scale 0–10), for the typed vote rows.
fn typed_poll(kind: QuestionKind) -> NewPoll {
    let q = |i: usize| {
        let mut q = serde_json::json!({"type": kind.as_str(), "label": format!("Typed question {i}?")});
        match kind {
            QuestionKind::Scale => {
                q["scaleMin"] = 0.into();
                q["scaleMax"] = 10.into();
            }
            _ => q["options"] = (0..6).map(|o| format!("Option {o}")).collect::<Vec<_>>().into(),
        }
        if kind == QuestionKind::Multiple {
            q["maxChoices"] = 3.into();
        }
        q
    };
    let v = serde_json::json!({
        "title": "Typed benchmark poll", "lang": "en", "expiryDays": 365, "resultsPublic": true,
        "questions": (0..QUESTIONS).map(q).collect::<Vec<_>>()
    });
    NewPoll::from_json(&v).unwrap_or_else(|e| panic!("invalid typed bench poll: {e:?}"))
}

/// A random valid answer to `q`: single and scale pick one value, multiple
/// 1–3 options, ranked ranks 1–6 options.
fn typed_answer(rng: &mut Rng, q: &Question) -> Answer {
    let n = q.options.len();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    match q.kind {
        QuestionKind::Single => Answer::Choice(rng.below(n)),
        QuestionKind::Multiple => {
            let mut chosen = order[..1 + rng.below(3)].to_vec();
            chosen.sort_unstable();
            Answer::Choices(chosen)
        }
        QuestionKind::Ranked => {
            let mut ranks = vec![None; n];
            for (r, &o) in order[..1 + rng.below(n)].iter().enumerate() {
                ranks[o] = u8::try_from(r + 1).ok();
            }
            Answer::Ranks(ranks)
        }
        QuestionKind::Scale => Answer::Value(u8::try_from(rng.below(11)).unwrap_or(0)),
    }
}

fn remove_db(path: &str) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

fn populate(db: &str, responses: usize, fillers: usize, hot: usize, ids_out: &str) -> anyhow::Result<()> {
    let t0 = Instant::now();
    remove_db(db);
    let _ = std::fs::remove_file(std::path::Path::new(db).with_extension("keys"));
    let today = Day::today();
    // Everything through the store (every byte of a poll is sealed under its
    // own key: no SQL can write a poll any more), in large group commits.
    let path = std::path::Path::new(db);
    let config = WriterConfig { queue_capacity: 1 << 20, max_batch: 20_000, ..WriterConfig::default() };
    // The key file beside the database, where count.sh and compare.sh copy
    // it from (polld still takes a key file found there, with a warning).
    let store = Store::open_db(path, &Keys::at(&path.with_extension("keys")), config)?;
    let poll = bench_poll("Benchmark poll");
    let create = |n: usize, title: &str| -> anyhow::Result<Vec<String>> {
        // Many at once, so that the group commit batches them.
        let chunks: Vec<Vec<usize>> =
            (0..n).collect::<Vec<_>>().chunks(n.div_ceil(32).max(1)).map(<[usize]>::to_vec).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let (store, title) = (store.clone(), title.to_owned());
                std::thread::spawn(move || -> anyhow::Result<Vec<String>> {
                    chunk
                        .iter()
                        .map(|i| {
                            let id = PollId::generate()?;
                            store.create_poll(
                                &id,
                                &AdminToken::generate()?.hash(),
                                &bench_poll(&format!("{title} {i}")),
                                &[],
                                today,
                            )?;
                            Ok(id.as_str().to_owned())
                        })
                        .collect()
                })
            })
            .collect();
        let mut ids = Vec::with_capacity(n);
        for h in handles {
            ids.extend(h.join().map_err(|_| anyhow::anyhow!("a creating thread panicked"))??);
        }
        Ok(ids)
    };
    let mut ids = create(hot, "Benchmark poll")?;
    std::fs::write(ids_out, ids.join("\n") + "\n")?;
    store.record_response(&ids[0], &[Some(0), Some(1), None])?;
    ids.extend(create(fillers, "Filler poll")?);
    let ids: Vec<PollId> = ids.iter().map(|i| PollId::parse(i).expect("a poll id")).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let hot_share = if fillers == 0 { responses } else { responses / 10 };
    let mut pending = Vec::new();
    for n in 0..responses {
        let p = if n < hot_share { n % hot } else { hot + rng.below(fillers) };
        let b = Ballot::of_choices(&poll.questions, &ballot(&mut rng)).map_err(|e| anyhow::anyhow!("{e}"))?;
        pending.push(store.cast_later(&ids[p], b, (None, None, None), today, None)?);
        if pending.len() >= 100_000 {
            for w in pending.drain(..) {
                w.committed_blocking()?;
            }
        }
    }
    for w in pending {
        w.committed_blocking()?;
    }
    drop(store); // the writer mixes what is staged, commits and stops
    let conn = rusqlite::Connection::open(db)?;
    let _: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    let stored: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0))?;
    let polls: i64 = conn.query_row("SELECT count(*) FROM sealed_polls", [], |r| r.get(0))?;
    println!(
        "populated {db}: polls={polls} responses={stored} bytes={} seconds={:.1}",
        std::fs::metadata(db)?.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// How `cast` submits each ballot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Proof {
    /// `Store::cast`, nothing with the ballot.
    None,
    /// A fresh receipt, as on a poll with `voteChanges` (its key drawn
    /// from the receipt's hash), through the queue the web's votes take.
    Receipt,
    /// A fresh vote form's day and nonce, as every vote of the web's form
    /// brings: on PostgreSQL the writer spends it in the ballot's
    /// transaction (`redeemed_forms`); SQLite's store ignores it.
    Form,
}

fn cast(db: &str, secs: f64, threads: usize, ids_file: &str, kind: QuestionKind, proof: Proof) -> anyhow::Result<()> {
    let mut ids: Vec<String> = std::fs::read_to_string(ids_file)?.lines().map(str::to_owned).collect();
    // A SQLite file, or a `postgresql://` URL with its key file in
    // ANONBENCH_KEYS (a PostgreSQL database has no "beside").
    let path = std::path::Path::new(db);
    let mut keys = Keys::at(&path.with_extension("keys"));
    if let Some(k) = std::env::var_os("ANONBENCH_KEYS").filter(|k| !k.is_empty()) {
        keys.path = k.into();
    }
    let store = Store::open_db(path, &keys, WriterConfig::default())?;
    let poll = if kind == QuestionKind::Single { bench_poll("Store::cast benchmark poll") } else { typed_poll(kind) };
    if kind != QuestionKind::Single {
        let today = Day::today();
        ids = (0..ids.len())
            .map(|_| {
                let id = PollId::generate()?;
                store.create_poll(&id, &AdminToken::generate()?.hash(), &poll, &[], today)?;
                Ok(id.as_str().to_owned())
            })
            .collect::<anyhow::Result<_>>()?;
    }
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let cpu0 = self_cpu_ticks();
    let writer0 = writer_ticks();
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            let id = PollId::parse(&ids[t % ids.len()]).expect("poll id");
            let questions = poll.questions.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x1234_5678 + t as u64 * 7919);
                let mut lat = Vec::new();
                let mut errors = 0u64;
                let today = Day::today();
                while Instant::now() < deadline {
                    let t0 = Instant::now();
                    // Checked as polld checks a vote before queueing it.
                    let answers = if kind == QuestionKind::Single {
                        ballot(&mut rng).into_iter().map(|c| c.map(Answer::Choice)).collect()
                    } else {
                        questions.iter().map(|q| Some(typed_answer(&mut rng, q))).collect()
                    };
                    let ballot = Ballot::new(&questions, answers).expect("a ballot of the bench poll");
                    let done = match proof {
                        Proof::Receipt => Receipt::generate()
                            .map_err(anonpoll::error::Error::from)
                            .and_then(|r| store.cast_later(&id, ballot, (None, Some(r.hash()), None), today, None))
                            .and_then(|pending| pending.committed_blocking()),
                        Proof::Form => {
                            // From the OS, as polld's are: the thread's seeded
                            // generator repeats from run to run, and a form
                            // spent by the last run would be refused.
                            let mut nonce = [0u8; 16];
                            anonpoll::secret::random_bytes(&mut nonce)
                                .map_err(anonpoll::error::Error::internal)
                                .and_then(|()| {
                                    store.cast_later(&id, ballot, (None, None, Some((today, nonce))), today, None)
                                })
                                .and_then(|pending| pending.committed_blocking())
                        }
                        Proof::None => store.cast(&id, ballot, today),
                    };
                    if done.is_err() {
                        errors += 1;
                    }
                    lat.push(t0.elapsed().as_micros() as u32);
                }
                (lat, errors)
            })
        })
        .collect();
    let mut lat = Vec::new();
    let mut errors = 0;
    for h in handles {
        let (l, e) = h.join().expect("thread");
        lat.extend(l);
        errors += e;
    }
    let el = start.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |p: f64| lat.get(((lat.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(0) as f64 / 1000.0;
    let cpu_us = (self_cpu_ticks() - cpu0) as f64 * 1e6 / 100.0 / lat.len().max(1) as f64;
    let writer_us = (writer_ticks() - writer0) as f64 * 1e6 / 100.0 / lat.len().max(1) as f64;
    let hwm = std::fs::read_to_string("/proc/self/status")?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().trim_end_matches(" kB").trim().to_owned()))
        .unwrap_or_default();
    println!(
        "RESULT rps={:.1} p50_ms={:.3} p99_ms={:.3} requests={} errors={errors} cpu_us_per_op={cpu_us:.1} writer_cpu_us_per_op={writer_us:.1} rss_kb={hwm}",
        (lat.len() as u64 - errors) as f64 / el,
        pct(0.5),
        pct(0.99),
        lat.len()
    );
    Ok(())
}

/// utime + stime of this process, in clock ticks (USER_HZ, 100 on Linux).
fn self_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the ")": state is field 3, utime 14 and stime 15 (1-based).
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

/// CPU ticks of the store's writer thread (named "anonpoll-writer"): the
/// write path's own cost, without the load threads' wake-ups.
fn writer_ticks() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0 };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == "anonpoll-writer" {
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            let f: Vec<&str> = rest.split_whitespace().collect();
            return f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
                + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    0
}

fn dbsize(db: &str) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let responses: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0))?;
    let polls: i64 = conn.query_row("SELECT count(*) FROM sealed_polls", [], |r| r.get(0))?;
    println!("bytes={} responses={responses} polls={polls}", pages * size);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let usage = "usage: anonbench populate DB RESPONSES FILLER_POLLS HOT_POLLS IDS_OUT | cast DB SECONDS THREADS IDS_FILE [single|multiple|ranked|scale] [receipts|forms] | dbsize DB";
    match a.get(1).map(String::as_str) {
        Some("populate") if a.len() == 7 => populate(&a[2], a[3].parse()?, a[4].parse()?, a[5].parse()?, &a[6]),
        Some("cast") if (6..=8).contains(&a.len()) => {
            let kind = a.get(6).map_or(Some(QuestionKind::Single), |k| QuestionKind::from_code(k));
            let kind = kind.ok_or_else(|| anyhow::anyhow!("{usage}"))?;
            let proof = match a.get(7).map(String::as_str) {
                None => Proof::None,
                Some("receipts") => Proof::Receipt,
                Some("forms") => Proof::Form,
                Some(_) => anyhow::bail!("{usage}"),
            };
            cast(&a[2], a[3].parse()?, a[4].parse()?, &a[5], kind, proof)
        }
        Some("dbsize") if a.len() == 3 => dbsize(&a[2]),
        _ => anyhow::bail!("{usage}"),
    }
}
