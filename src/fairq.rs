//! The workers' queue, fair between clients.
//!
//! Why: requests wait for a worker in one queue. First come, first served,
//! a few clients that keep many connections busy (the second outside audit:
//! 6 addresses x 8 connections hammering a heavy poll) fill it, and every
//! other client's request waits behind all of theirs (issue 24, item 4). Here
//! each client group ([`ClientGroup`]: an IPv4 address or an IPv6 /64) has
//! its own line, and the workers take from the lines in turn: a client with
//! one request waits for at most one request of each other client, however
//! many they queued.
//!
//! Promises:
//! - bounded: at most `capacity` requests wait in all, and one client group
//!   at most `per_group`; past either, [`Sender::try_send`] refuses at once
//!   (the caller answers 503), so one client's flood fills its own line and
//!   not the queue;
//! - within a client group, first come, first served;
//! - the client groups live only while they have requests waiting, in
//!   memory, never written anywhere;
//! - like a channel: [`Receiver::recv`] blocks until a request comes, and
//!   answers `None` once every [`Sender`] is gone and nothing is left.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::client::ClientGroup;

/// Why a request was not queued; it comes back to the caller.
#[derive(Debug)]
pub enum TrySendError<T> {
    /// The queue, or this client's line, is full.
    Full(T),
    /// No worker takes requests any more.
    Disconnected(T),
}

struct State<T> {
    lines: HashMap<ClientGroup, VecDeque<T>>,
    /// The client groups with requests waiting, in the order they are served.
    turns: VecDeque<ClientGroup>,
    waiting: usize,
    senders: usize,
    receivers: usize,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    arrived: Condvar,
    capacity: usize,
    per_group: usize,
}

impl<T> Inner<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Each change is a few pushes and pops: the state stays consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Queues requests (connection tasks hold clones).
pub struct Sender<T>(Arc<Inner<T>>);

/// Takes requests (the workers share it).
pub struct Receiver<T>(Arc<Inner<T>>);

/// A queue of at most `capacity` waiting requests, `per_group` of them from
/// one client group (both at least 1).
pub fn channel<T>(capacity: usize, per_group: usize) -> (Sender<T>, Receiver<T>) {
    let capacity = capacity.max(1);
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            lines: HashMap::new(),
            turns: VecDeque::new(),
            waiting: 0,
            senders: 1,
            receivers: 1,
        }),
        arrived: Condvar::new(),
        capacity,
        per_group: per_group.clamp(1, capacity),
    });
    (Sender(inner.clone()), Receiver(inner))
}

impl<T> Sender<T> {
    /// Queues `item` in `group`'s line, or gives it back at once.
    pub fn try_send(&self, group: ClientGroup, item: T) -> Result<(), TrySendError<T>> {
        let mut state = self.0.lock();
        if state.receivers == 0 {
            return Err(TrySendError::Disconnected(item));
        }
        if state.waiting >= self.0.capacity {
            return Err(TrySendError::Full(item));
        }
        let per_group = self.0.per_group;
        let line = state.lines.entry(group).or_default();
        if line.len() >= per_group {
            return Err(TrySendError::Full(item));
        }
        line.push_back(item);
        if line.len() == 1 {
            state.turns.push_back(group);
        }
        state.waiting += 1;
        drop(state);
        self.0.arrived.notify_one();
        Ok(())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders -= 1;
        if state.senders == 0 {
            drop(state);
            // Waiting workers see that nothing more will come.
            self.0.arrived.notify_all();
        }
    }
}

impl<T> Receiver<T> {
    /// The next request, taking the client groups in turn; blocks until one
    /// comes. `None` once every sender is gone and nothing is left.
    pub fn recv(&self) -> Option<T> {
        let mut state = self.0.lock();
        loop {
            if let Some(group) = state.turns.pop_front() {
                let (item, more) = match state.lines.get_mut(&group) {
                    Some(line) => (line.pop_front(), !line.is_empty()),
                    None => (None, false),
                };
                if more {
                    // Back to the end of the round.
                    state.turns.push_back(group);
                } else {
                    state.lines.remove(&group);
                }
                if let Some(item) = item {
                    state.waiting -= 1;
                    return Some(item);
                }
                continue;
            }
            if state.senders == 0 {
                return None;
            }
            state = self.0.arrived.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.0.lock().receivers -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn group(s: &str) -> ClientGroup {
        ClientGroup::of(s.parse::<IpAddr>().unwrap())
    }

    #[test]
    fn clients_are_served_in_turn_and_each_in_order() {
        let (tx, rx) = channel(100, 100);
        let (heavy, light, other) = (group("192.0.2.1"), group("192.0.2.2"), group("2001:db8::1"));
        for i in 0..5 {
            tx.try_send(heavy, ("heavy", i)).unwrap();
        }
        tx.try_send(light, ("light", 0)).unwrap();
        tx.try_send(other, ("other", 0)).unwrap();
        tx.try_send(light, ("light", 1)).unwrap();
        let order: Vec<_> = (0..8).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(
            order,
            [
                ("heavy", 0),
                ("light", 0),
                ("other", 0),
                ("heavy", 1),
                ("light", 1),
                ("heavy", 2),
                ("heavy", 3),
                ("heavy", 4)
            ],
            "one of each client in turn, each client's own first come first served"
        );
        // A /64 is one client.
        tx.try_send(group("2001:db8::2"), ("other", 1)).unwrap();
        tx.try_send(group("2001:db8::3"), ("other", 2)).unwrap();
        assert_eq!(rx.recv(), Some(("other", 1)));
        assert_eq!(rx.recv(), Some(("other", 2)));
    }

    #[test]
    fn a_flood_fills_its_own_line_not_the_queue() {
        let (tx, rx) = channel(10, 4);
        let (flood, calm) = (group("198.51.100.1"), group("198.51.100.2"));
        for i in 0..4 {
            tx.try_send(flood, i).unwrap();
        }
        assert!(matches!(tx.try_send(flood, 4), Err(TrySendError::Full(4))), "one client's share is full");
        for i in 0..4 {
            tx.try_send(calm, 10 + i).unwrap();
        }
        tx.try_send(group("198.51.100.3"), 20).unwrap();
        tx.try_send(group("198.51.100.4"), 30).unwrap();
        assert!(matches!(tx.try_send(group("198.51.100.5"), 40), Err(TrySendError::Full(40))), "the queue is full");
        assert_eq!(rx.recv(), Some(0));
        tx.try_send(group("198.51.100.5"), 40).unwrap();
        // Served lines are forgotten.
        while rx.0.lock().waiting > 0 {
            rx.recv().unwrap();
        }
        assert!(rx.0.lock().lines.is_empty() && rx.0.lock().turns.is_empty());
    }

    #[test]
    fn workers_stop_once_every_sender_is_gone_and_the_queue_is_empty() {
        let (tx, rx) = channel(10, 10);
        let rx = Arc::new(rx);
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || {
                    let mut got = 0;
                    while rx.recv().is_some() {
                        got += 1;
                    }
                    got
                })
            })
            .collect();
        let second = tx.clone();
        for i in 0..6 {
            second.try_send(group("192.0.2.9"), i).unwrap();
        }
        drop(second);
        drop(tx);
        let total: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(total, 6, "everything queued is taken before the workers stop");
    }

    #[test]
    fn without_workers_nothing_is_queued() {
        let (tx, rx) = channel(10, 10);
        drop(rx);
        assert!(matches!(tx.try_send(group("192.0.2.1"), 1), Err(TrySendError::Disconnected(1))));
    }
}
