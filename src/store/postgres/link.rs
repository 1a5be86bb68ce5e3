//! A node's connections to PostgreSQL: each made again at its next use
//! after it broke, with backoff ([`Link`]), and the pool of read
//! connections the node's readers share ([`Pool`]).

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use postgres::{IsolationLevel, NoTls, Statement};

use crate::error::Error;

use super::super::engine::{ReadConn, Rows};
use super::rows::PgRows;

/// How long a connection attempt may take.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Longest wait between two connection attempts of one connection.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// The error a request gets while the database cannot be reached.
fn unreachable() -> Error {
    Error::Unavailable { reason: "The database cannot be reached; try again shortly.", retry_after_secs: 5 }
}

/// Statements prepared on one connection, by their text.
pub(super) type Stmts = HashMap<&'static str, Statement>;

/// One connection to the database, made again at its next use after it
/// broke, no sooner than its backoff allows; with its prepared statements.
pub(super) struct Link {
    config: Arc<postgres::Config>,
    client: Option<postgres::Client>,
    statements: HashMap<&'static str, Statement>,
    next_try: Instant,
    backoff: Duration,
}

impl Link {
    pub(super) fn new(config: Arc<postgres::Config>) -> Link {
        Link { config, client: None, statements: HashMap::new(), next_try: Instant::now(), backoff: Duration::ZERO }
    }

    /// The connection, made now if needed. 503 while the database is away.
    fn client(&mut self) -> Result<&mut postgres::Client, Error> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.drop_client();
        }
        if self.client.is_none() {
            if Instant::now() < self.next_try {
                return Err(unreachable());
            }
            match self.config.connect(NoTls) {
                Ok(c) => {
                    self.client = Some(c);
                    self.backoff = Duration::ZERO;
                }
                Err(e) => {
                    self.backoff = (self.backoff * 2).clamp(Duration::from_millis(250), MAX_BACKOFF);
                    self.next_try = Instant::now() + self.backoff;
                    let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
                    eprintln!("anonpoll: cannot connect to PostgreSQL: {e}{cause}");
                    return Err(unreachable());
                }
            }
        }
        self.client.as_mut().ok_or_else(unreachable)
    }

    /// Waits out the backoff before the next connection attempt (the
    /// writer, whose queue would otherwise fail at once while it lasts).
    pub(super) fn wait_for_retry(&self) {
        let now = Instant::now();
        if self.client.is_none() && self.next_try > now {
            std::thread::sleep(self.next_try - now);
        }
    }

    fn drop_client(&mut self) {
        self.client = None;
        self.statements.clear();
    }

    /// Runs `f` on the connection; an error that says the connection is
    /// gone drops it, so the next use connects again.
    pub(super) fn with<T>(
        &mut self,
        f: impl FnOnce(&mut postgres::Client, &mut Stmts) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.client()?;
        let Link { client, statements, .. } = self;
        let client = client.as_mut().ok_or_else(unreachable)?;
        let result = f(client, statements);
        if matches!(result, Err(Error::Unavailable { .. })) || client.is_closed() {
            self.drop_client();
        }
        result
    }

    /// One read, or a few that need not agree.
    fn once(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        self.with(|client, statements| f(&mut PgRows::new(client, statements)))
    }

    /// Reads that see one snapshot.
    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        self.with(|client, statements| {
            let mut tx =
                client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start()?;
            f(&mut PgRows::new(&mut tx, statements))?;
            tx.commit()?;
            Ok(())
        })
    }
}

/// Read connections one node keeps at most. polld's worker threads (32 by
/// default, each with an API and a page session) share them: a read holds
/// one for its few statements only, and PostgreSQL's default of 100
/// connections then serves several nodes (each node: these and its writer).
pub const READ_CONNECTIONS: usize = 16;

/// How long a read waits for a free connection before answering 503.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// A node's read connections, shared by all its readers (see
/// [`READ_CONNECTIONS`]). Connections are made as reads need them and kept.
pub(super) struct Pool {
    config: Arc<postgres::Config>,
    state: Mutex<PoolState>,
    freed: Condvar,
}

struct PoolState {
    idle: Vec<Link>,
    /// Connections lent out now.
    out: usize,
}

impl Pool {
    pub(super) fn new(config: Arc<postgres::Config>) -> Arc<Pool> {
        Arc::new(Pool { config, state: Mutex::new(PoolState { idle: Vec::new(), out: 0 }), freed: Condvar::new() })
    }

    fn take(&self) -> Result<Link, Error> {
        let deadline = Instant::now() + POOL_WAIT;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(link) = state.idle.pop() {
                state.out += 1;
                return Ok(link);
            }
            if state.out < READ_CONNECTIONS {
                state.out += 1;
                return Ok(Link::new(self.config.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Unavailable { reason: "The database is busy; try again.", retry_after_secs: 1 });
            }
            state = self.freed.wait_timeout(state, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    fn give_back(&self, link: Link) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.out = state.out.saturating_sub(1);
        state.idle.push(link);
        drop(state);
        self.freed.notify_one();
    }

    /// Runs `f` on a connection of the pool.
    fn with<T>(&self, f: impl FnOnce(&mut Link) -> Result<T, Error>) -> Result<T, Error> {
        let mut link = self.take()?;
        let out = f(&mut link);
        self.give_back(link);
        out
    }
}

/// A reader's connection: one of the node's pool, borrowed for each read.
pub(super) struct PoolRead(pub(super) Arc<Pool>);

impl ReadConn for PoolRead {
    fn once(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        self.0.with(|link| link.once(f))
    }

    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        self.0.with(|link| link.snapshot(f))
    }
}
