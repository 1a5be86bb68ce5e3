//! A node's writer thread on PostgreSQL: the batches of the shared
//! [`Writer`] in one transaction each, with the rows of the batch's polls
//! locked in id order, and the mix of a poll in one of its own.
//!
//! PostgreSQL's own steps, and why:
//! - several nodes may write at once: each batch locks the rows of the
//!   polls it touches, in id order, before reading them, and reads them
//!   afresh (a poll's counts are one sealed value, so a node must never
//!   write counts it read before another node's commit); a deadlock or
//!   serialization failure between nodes retries the batch;
//! - a vote form fetched from one node may be sent to two: the batch's
//!   forms are spent in one statement before its votes
//!   (`redeemed_forms`, [`spend_forms`]), each as a keyed hash of its nonce
//!   under the day's form key (the web layer's `mark`), not the nonce;
//!   a form whose vote was then refused is given back.

use std::sync::Arc;
use std::time::Instant;

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::super::seen::Seen;
use super::super::writer::mix::IDLE;
use super::super::writer::{BatchFailed, Empty, FormState, Inbox, Job, Op, Outcome, Writer, WriterConfig, batch_error};
use super::link::{Link, Stmts};
use super::rows::PgRows;
use super::{is_conflict, unavailable_busy};

/// The writer thread of a node: takes what is queued, applies it in one
/// transaction with the rows of its polls locked, writes its ballots
/// shuffled, commits, answers; mixes a poll with new ballots when idle or
/// overdue.
pub(super) fn run(mut link: Link, keys: Arc<Keyring>, seen: Arc<Seen>, mut rx: Inbox, config: WriterConfig) {
    let max_batch = config.max_batch.max(1);
    let mut w = Writer::new(keys, seen);
    w.fresh.look_for_left = config.mix;
    loop {
        let wait = (config.mix && w.fresh.pending()).then_some(IDLE);
        let first = match rx.recv(wait) {
            Ok(job) => job,
            Err(Empty::Timeout) => {
                if std::mem::take(&mut w.fresh.look_for_left) {
                    look_for_left(&mut link, &mut w);
                }
                if let Some(poll) = w.fresh.next(Instant::now(), true) {
                    mix(&mut link, &mut w, &poll);
                }
                continue;
            }
            Err(Empty::Closed) => break,
        };
        let batch = rx.batch(first, max_batch);
        let mut results = commit(&mut link, &mut w, &batch);
        w.advance_keys(&batch, &mut results);
        for (job, result) in batch.into_iter().zip(results) {
            job.answer(result);
        }
        if config.mix
            && let Some(poll) = w.fresh.next(Instant::now(), false)
        {
            mix(&mut link, &mut w, &poll);
        }
    }
    if config.mix {
        for poll in w.fresh.drain() {
            mix(&mut link, &mut w, &poll);
        }
    }
    // The day the key state moved to, noted before the store closes (a
    // `pollctl sweep` writes nothing after its day's work).
    if w.key_day_pending() {
        commit(&mut link, &mut w, &[]);
    }
}

/// Adds the polls a previous run (of any node) left with staged ballots.
fn look_for_left(link: &mut Link, w: &mut Writer) {
    let found = link.with(|client, statements| {
        use super::super::engine::Rows;
        PgRows::new(client, statements).staged_polls()
    });
    match found {
        Ok(polls) => w.fresh.add_left(polls),
        Err(e) => eprintln!("anonpoll: could not look for ballots left unmixed: {e}"),
    }
}

/// Mixes `poll` in a transaction of its own, its row locked.
fn mix(link: &mut Link, w: &mut Writer, poll: &str) {
    let started = Instant::now();
    let mixed = link.with(|client, statements| {
        let mut tx = client.transaction()?;
        tx.execute("SELECT 1 FROM sealed_polls WHERE id = $1 FOR UPDATE", &[&poll])?;
        let mut rows = PgRows::new(&mut tx, statements);
        let mixed = w.mix(&mut rows, poll, Day::today());
        let aborted = rows.aborted;
        drop(rows);
        mixed?;
        if aborted {
            return Err(Error::internal(anyhow::anyhow!("a statement of the mix failed")));
        }
        tx.commit()?;
        Ok(())
    });
    match mixed {
        Ok(()) => w.mixed(poll, Some(started.elapsed())),
        Err(e) => {
            eprintln!("anonpoll: could not mix the ballots of a poll (will retry): {e}");
            w.mixed(poll, None);
        }
    }
}

/// The polls a batch touches, each once, in id order: the order every node
/// locks them in.
fn polls_of(batch: &[Job]) -> Vec<String> {
    let mut ids: Vec<String> = batch.iter().filter_map(|j| j.op.poll()).map(|id| id.as_str().to_owned()).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Tries a batch up to three times when another node's transaction got in
/// its way; every other failure fails the batch at once.
fn commit(link: &mut Link, w: &mut Writer, batch: &[Job]) -> Vec<Result<Outcome, Error>> {
    let polls = polls_of(batch);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match try_commit(link, w, batch, &polls) {
            Ok(results) => return results,
            Err(Retry::Conflict) if attempt < 3 => continue,
            Err(Retry::Conflict) => return batch.iter().map(|_| Err(batch_error(&unavailable_busy()))).collect(),
            Err(Retry::No(BatchFailed(e))) => return batch.iter().map(|_| Err(batch_error(&e))).collect(),
        }
    }
}

enum Retry {
    Conflict,
    No(BatchFailed),
}

fn try_commit(
    link: &mut Link,
    w: &mut Writer,
    batch: &[Job],
    polls: &[String],
) -> Result<Vec<Result<Outcome, Error>>, Retry> {
    // What this node remembers of a poll may be stale: another node may
    // have counted votes since.
    w.forget_polls();
    link.wait_for_retry();
    let mut conflict = false;
    let out = link.with(|client, statements| match apply(client, statements, w, batch, polls) {
        Ok(applied) => Ok(applied),
        Err(e) => {
            conflict = is_conflict(&e);
            Err(Error::from(e))
        }
    });
    match out {
        Ok(Ok(results)) => {
            w.committed();
            Ok(results)
        }
        Ok(Err(failed)) => {
            w.rolled_back();
            Err(Retry::No(failed))
        }
        Err(_) if conflict => {
            w.rolled_back();
            Err(Retry::Conflict)
        }
        Err(e) => {
            w.rolled_back();
            Err(Retry::No(BatchFailed::new(batch.len(), e)))
        }
    }
}

/// Spends the forms of the batch's votes in one statement: each such vote's
/// form is [`FormState::Taken`] if this statement spent it, else
/// [`FormState::Spent`] (another node, or an earlier vote of this batch,
/// had it). One round trip per batch instead of one per vote, and no
/// savepoint in the ballots' transaction.
fn spend_forms(
    tx: &mut postgres::Transaction,
    statements: &mut Stmts,
    batch: &[Job],
) -> Result<Vec<FormState>, postgres::Error> {
    let mut states = vec![FormState::Unchecked; batch.len()];
    let mut forms: Vec<(String, &[u8])> = batch
        .iter()
        .filter_map(|job| match &job.op {
            Op::Cast { form: Some((day, mark)), .. } => Some((day.to_string(), &mark[..])),
            _ => None,
        })
        .collect();
    if forms.is_empty() {
        return Ok(states);
    }
    // Written in no order of arrival, as the ballots are.
    rand::seq::SliceRandom::shuffle(forms.as_mut_slice(), &mut rand::rng());
    let (days, marks): (Vec<String>, Vec<&[u8]>) = forms.into_iter().unzip();
    const SPEND: &str = "INSERT INTO redeemed_forms (day, mark) SELECT * FROM unnest($1::text[], $2::bytea[])
                         ON CONFLICT DO NOTHING RETURNING day, mark";
    let statement = match statements.get(SPEND) {
        Some(s) => s.clone(),
        None => {
            let s = tx.prepare(SPEND)?;
            statements.insert(SPEND, s.clone());
            s
        }
    };
    let mut fresh = std::collections::HashSet::new();
    for row in tx.query(&statement, &[&days, &marks])? {
        fresh.insert((row.try_get::<_, String>(0)?, row.try_get::<_, Vec<u8>>(1)?));
    }
    for (state, job) in states.iter_mut().zip(batch) {
        if let Op::Cast { form: Some((day, mark)), .. } = &job.op {
            *state = if fresh.remove(&(day.to_string(), mark.to_vec())) { FormState::Taken } else { FormState::Spent };
        }
    }
    Ok(states)
}

/// One attempt at a batch: its polls locked in id order, applied, its
/// ballots written, committed.
fn apply(
    client: &mut postgres::Client,
    statements: &mut Stmts,
    w: &mut Writer,
    batch: &[Job],
    polls: &[String],
) -> Result<Result<Vec<Result<Outcome, Error>>, BatchFailed>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT 1 FROM sealed_polls WHERE id = ANY($1) ORDER BY id FOR UPDATE", &[&polls])?;
    let forms = spend_forms(&mut tx, statements, batch)?;
    let mut rows = PgRows::new(&mut tx, statements);
    let applied = w.apply_batch(&mut rows, batch, &forms);
    // A statement that failed outside a savepoint has aborted the
    // transaction: PostgreSQL would answer the COMMIT with a rollback, and
    // every job's success would be a lie.
    let aborted = rows.aborted;
    drop(rows);
    match applied {
        Ok(_) if aborted => Ok(Err(BatchFailed::new(
            batch.len(),
            Error::Unavailable { reason: "Storage refused the write; nothing was written.", retry_after_secs: 5 },
        ))),
        Ok((results, _erased)) => {
            // A form spent for a vote that was then refused (closed poll,
            // say) is given back: only a stored ballot spends its form.
            for ((job, state), result) in batch.iter().zip(&forms).zip(&results) {
                if let (Op::Cast { form: Some((day, mark)), .. }, FormState::Taken, Err(_)) = (&job.op, state, result) {
                    tx.execute(
                        "DELETE FROM redeemed_forms WHERE day = $1 AND mark = $2",
                        &[&day.to_string(), &&mark[..]],
                    )?;
                }
            }
            tx.commit()?;
            Ok(Ok(results))
        }
        Err(failed) => Ok(Err(failed)),
    }
}
