//! Open connections from direct clients, by client group: the per-client
//! cap that applies only under pressure, and the shedding of the heaviest
//! clients' connections beyond it.
//!
//! Promises: a client group is kept only under a keyed hash
//! (`keyed::Occupancy`), in memory, while it has a connection open.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::client::ClientGroup;

/// Open connections from direct clients, by client group, for the
/// per-client cap that applies only under pressure.
pub(super) struct Crowd {
    /// Connections one client keeps under pressure.
    cap: usize,
    /// Open connections (all clients) from which the cap applies: seven
    /// eighths of `--max-connections`, so that the last eighth is left for
    /// newcomers while the excess is shed.
    pressure: usize,
    inner: Mutex<CrowdInner>,
}

struct CrowdInner {
    /// The in-memory key that names client groups (no address is kept).
    keys: crate::keyed::Generations<()>,
    open: usize,
    next: u64,
    /// Each client's connections, oldest first, with the signal that shuts
    /// one down.
    clients: std::collections::HashMap<crate::keyed::Key, Vec<(u64, Arc<Notify>)>>,
}

/// One open connection of a direct client; leaves the crowd when dropped.
pub(super) struct Member {
    crowd: Arc<Crowd>,
    key: crate::keyed::Key,
    id: u64,
    pub(super) shed: Arc<Notify>,
}

impl Crowd {
    pub(super) fn new(cap: u32, max_connections: usize) -> anyhow::Result<Arc<Crowd>> {
        let keys = crate::keyed::Generations::new(Duration::MAX, std::time::Instant::now())?;
        Ok(Arc::new(Crowd {
            cap: cap as usize,
            pressure: max_connections.saturating_mul(7) / 8,
            inner: Mutex::new(CrowdInner { keys, open: 0, next: 0, clients: Default::default() }),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CrowdInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection from `client`, unless the server is under pressure
    /// and the client holds its cap already. Under pressure, the heaviest
    /// client's connections beyond the cap are told to shut down (an idle
    /// one closes at once, a busy one after its answer).
    pub(super) fn admit(self: &Arc<Self>, client: ClientGroup) -> Option<Member> {
        let mut inner = self.lock();
        let key = inner.keys.current.key(&[client.as_bytes()]);
        if inner.open >= self.pressure {
            if inner.clients.get(&key).is_some_and(|c| c.len() >= self.cap) {
                return None;
            }
            // The heaviest first; every client's connections beyond the
            // cap go (a notice given twice counts once).
            let mut over: Vec<&Vec<(u64, Arc<Notify>)>> =
                inner.clients.values().filter(|c| c.len() > self.cap).collect();
            over.sort_by_key(|c| std::cmp::Reverse(c.len()));
            for (_, shed) in over.into_iter().flat_map(|c| c.iter().skip(self.cap)) {
                shed.notify_one();
            }
        }
        let (id, shed) = (inner.next, Arc::new(Notify::new()));
        inner.next += 1;
        inner.open += 1;
        inner.clients.entry(key).or_default().push((id, shed.clone()));
        Some(Member { crowd: self.clone(), key, id, shed })
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut inner = self.crowd.lock();
        inner.open = inner.open.saturating_sub(1);
        if let Some(conns) = inner.clients.get_mut(&self.key) {
            conns.retain(|(id, _)| *id != self.id);
            if conns.is_empty() {
                inner.clients.remove(&self.key);
            }
        }
    }
}
