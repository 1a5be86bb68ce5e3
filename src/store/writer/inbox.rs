//! The writer's end of its queue, woken without a lock.
//!
//! Why not std's blocking `recv`: a receiver that sleeps in a std channel
//! is woken through a mutex in the channel that every sender then takes,
//! and among the senders are the busy clients' workers, at nice +10. One of
//! them preempted while it held that mutex held a quiet voter's worker too,
//! for as long as the kernel left it off the CPU: under the audit's load,
//! 440 of 548 times a quiet worker slept inside a request, it slept on
//! that mutex (`perf record -e sched:sched_switch`,
//! bench/results/2026-11-27-issue24-writer).
//!
//! So the writer never sleeps in the channel. It parks its thread, and a
//! sender unparks it after queueing ([`wake`]): an atomic swap, and a futex
//! wake only when the writer sleeps. With no receiver ever registered in
//! it, the channel never takes its mutex on either side.
//!
//! Promises: no job waits while the writer sleeps, since a sender queues
//! before it wakes the writer, and a wake that comes before the park makes
//! the park return at once (the thread's token); a wake that finds nothing
//! (or comes from elsewhere) only costs the writer one more look. When the
//! last sender is gone, the writer's next look says so (`Disconnected`):
//! whoever drops it wakes the writer after.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::Job;

/// The writer thread's end of the queue. Used by that thread only: it is
/// the one that [`wake`] unparks (hence not `Send`: it cannot be moved to
/// another thread once made there).
pub(in crate::store) struct Inbox {
    rx: Receiver<Job>,
    /// A job taken from the queue that starts the next batch.
    held: Option<Job>,
    _this_thread: std::marker::PhantomData<*const ()>,
}

/// Why a look into the inbox found no job.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::store) enum Empty {
    /// Nothing came in time.
    Timeout,
    /// Every sender is gone: the store is closing.
    Closed,
}

impl Inbox {
    pub(super) fn new(rx: Receiver<Job>) -> Inbox {
        Inbox { rx, held: None, _this_thread: std::marker::PhantomData }
    }

    /// A batch: `first`, and whatever else is queued now, `max` jobs at most.
    /// The day's key work ([`Op::Roll`](super::Op::Roll)) goes alone: it
    /// locks every poll, and on several nodes a batch that locked some polls
    /// first would take the rest out of the order every node keeps.
    pub(in crate::store) fn batch(&mut self, first: Job, max: usize) -> Vec<Job> {
        let alone = |job: &Job| matches!(job.op, super::Op::Roll { .. });
        let mut batch = vec![first];
        if alone(&batch[0]) {
            return batch;
        }
        while batch.len() < max.max(1) {
            match self.rx.try_recv() {
                Ok(job) if alone(&job) => {
                    self.held = Some(job);
                    break;
                }
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        batch
    }

    /// The next job, waiting up to `timeout` (for ever with `None`).
    pub(in crate::store) fn recv(&mut self, timeout: Option<Duration>) -> Result<Job, Empty> {
        if let Some(job) = self.held.take() {
            return Ok(job);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            match self.rx.try_recv() {
                Ok(job) => return Ok(job),
                Err(TryRecvError::Disconnected) => return Err(Empty::Closed),
                Err(TryRecvError::Empty) => {}
            }
            match deadline {
                None => std::thread::park(),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Empty::Timeout);
                    }
                    std::thread::park_timeout(left);
                }
            }
        }
    }
}

/// Wakes the writer thread after a job was queued (or its queue closed).
pub(super) fn wake(writer: &Thread) {
    writer.unpark();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    /// A job that nobody waits for.
    fn job() -> Job {
        super::super::tests::job_for_inbox(false)
    }

    #[test]
    fn the_days_key_work_goes_alone() {
        let (tx, rx) = sync_channel(8);
        let mut inbox = Inbox::new(rx);
        let roll = || super::super::tests::job_for_inbox(true);
        let is_roll = |batch: &[Job]| batch.iter().map(|j| matches!(j.op, super::super::Op::Roll { .. })).collect();
        for j in [job(), job(), roll(), job(), roll()] {
            tx.try_send(j).unwrap();
        }
        let mut next = || {
            let first = inbox.recv(Some(Duration::ZERO)).unwrap();
            inbox.batch(first, 10)
        };
        let seen: Vec<Vec<bool>> = (0..4).map(|_| is_roll(&next())).collect();
        assert_eq!(seen, [vec![false, false], vec![true], vec![false], vec![true]]);
        assert!(matches!(inbox.recv(Some(Duration::ZERO)), Err(Empty::Timeout)));
    }

    #[test]
    fn a_job_queued_while_the_writer_sleeps_wakes_it() {
        let (tx, rx) = sync_channel(4);
        let (got_tx, got_rx) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            let mut inbox = Inbox::new(rx);
            // Parked for ever unless woken.
            for _ in 0..3 {
                got_tx.send(inbox.recv(None).is_ok()).unwrap();
            }
            got_tx.send(matches!(inbox.recv(None), Err(Empty::Closed))).unwrap();
        });
        let thread = writer.thread().clone();
        for _ in 0..3 {
            // Let the writer fall asleep first.
            std::thread::sleep(Duration::from_millis(50));
            tx.try_send(job()).unwrap();
            wake(&thread);
            assert!(got_rx.recv_timeout(Duration::from_secs(10)).unwrap(), "the job reached the writer");
        }
        std::thread::sleep(Duration::from_millis(50));
        drop(tx);
        wake(&thread);
        assert!(got_rx.recv_timeout(Duration::from_secs(10)).unwrap(), "a closed queue ends the wait");
        writer.join().unwrap();
    }

    #[test]
    fn a_wait_with_a_timeout_ends_by_it_and_a_stray_wake_does_not_end_it_early() {
        let (tx, rx) = sync_channel::<Job>(4);
        let (t_tx, t_rx) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            let mut inbox = Inbox::new(rx);
            let start = Instant::now();
            let r = inbox.recv(Some(Duration::from_millis(300)));
            t_tx.send((r.err(), start.elapsed())).unwrap();
        });
        // A wake with nothing queued: the writer looks again and sleeps on.
        std::thread::sleep(Duration::from_millis(50));
        wake(writer.thread());
        let (err, waited) = t_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(err, Some(Empty::Timeout));
        assert!(waited >= Duration::from_millis(300), "waited {waited:?}");
        writer.join().unwrap();
        drop(tx);
    }
}
