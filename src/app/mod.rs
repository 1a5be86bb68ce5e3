//! The application: every use case of anonpoll, once.
//!
//! Why: the JSON API (`api`), the web pages (`web`) and `pollctl` (`ctl`)
//! are three ways in to the same actions. Each use case lives here, taking
//! validated domain input (types from `domain`, parsed at the edge) and
//! answering domain output or one typed [`Error`]; the front ends only
//! translate their input (JSON, a form, arguments) into a call and its
//! answer into JSON, a page, or text and an exit code.
//!
//! Promises:
//! - a poll is read only while it lives (`today < expiresOn`); a malformed
//!   id reads as an unknown one (404), so ids cannot be probed by shape;
//! - everything about one poll beyond its public view needs its admin
//!   token, compared in constant time ([`Session::admin`]);
//! - who may read results is decided in one place ([`Session::results`]);
//! - creations share one per-client limit and votes one per-client throttle,
//!   whatever front end they come through; both know a client only in memory.

mod budgets;
mod links;
mod throttle;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use links::Links;
pub use throttle::{FLOOD_CAP_FACTOR, NETWORK_VOTES_PER_DAY, PACE_PER_SECOND, VoteLimits, WRONG_CODES};

use crate::day::Day;
use crate::domain::results::Results;
use crate::domain::{
    Answer, Ballot, DuplicateCheck, FieldError, Key, NewMedia, NewPoll, Poll, PollPatch, ResultsVisibility,
};
use crate::error::{AuthFailure, Error, InviteRefusal, ReceiptRefusal, Withheld};
use crate::http::Quota;
use crate::ratelimit::RateLimiter;
use crate::secret::{AdminToken, InviteCode, InviteHash, MediaId, PollId, Receipt, ReceiptHash};
use crate::store::{MediaBlob, PendingWrite, Reader, Settle, Store};
use throttle::{DaySpent, VoteBudgets};

/// What every worker shares.
pub struct App {
    pub store: Store,
    pub limiter: Arc<RateLimiter>,
    /// What a vote spends before the writer: the vote throttle, the flood
    /// cap and pace of `none` polls, the wrong invite codes (`throttle.rs`).
    votes: VoteBudgets,
    links: Links,
    /// Whether the day's key work last failed, until it next succeeds.
    key_work_failed: std::sync::atomic::AtomicBool,
}

/// A poll just created, with the token to show once.
pub struct Created {
    pub poll: Poll,
    pub token: AdminToken,
    pub quota: Quota,
}

/// What a reader of results presents.
#[derive(Clone, Copy, Debug)]
pub enum Access<'a> {
    /// No credential.
    Anyone,
    /// The admin token, as presented (not yet checked).
    Token(&'a str),
    /// A credential in a form that cannot be a token (e.g. not Bearer).
    Malformed,
    /// Someone who voted on this poll: the web found the one-time form
    /// token they bring already redeemed for it (`web/ballot.rs`), or
    /// [`Session::voter_results`] a ballot for their receipt. Reads the
    /// results of an `afterVote` poll; otherwise counts as `Anyone`.
    Voter,
}

impl<'a> Access<'a> {
    /// From an `Authorization` header as `http::Request::bearer` read it.
    pub fn from_bearer(bearer: Result<&'a str, AuthFailure>) -> Access<'a> {
        match bearer {
            Ok(token) => Access::Token(token),
            Err(AuthFailure::Missing) => Access::Anyone,
            Err(_) => Access::Malformed,
        }
    }
}

/// A vote that passed every check but the commit: built by
/// [`Session::admit_vote`], stored by [`App::cast`].
pub struct Admitted {
    id: PollId,
    /// Who sent it, in memory only (for the wrong codes' budget).
    client: IpAddr,
    ballot: Ballot,
    invite: Option<InviteHash>,
    receipt: Option<Receipt>,
    /// The vote form it came with: its key's day and nonce.
    form: Option<(Day, [u8; 16])>,
    today: Day,
    /// The day's response of a `network` poll it spent, given back unless
    /// the ballot is stored.
    day: Option<DaySpent>,
    /// The structure of the questions it was read against
    /// ([`Poll::restructured`]): the store refuses it if they changed since.
    read_at: u32,
}

impl Admitted {
    /// The vote form this vote came with, spent with its ballot where
    /// several nodes share the database.
    pub fn with_form(self, form: Option<(Day, [u8; 16])>) -> Admitted {
        Admitted { form, ..self }
    }

    /// This vote as read against the questions the voter was shown, which
    /// had changed structure `read_at` times ([`Poll::restructured`], as the
    /// vote form carries it): refused by the store if that is not what they
    /// are now. Without it, the questions the vote was admitted against.
    pub fn read_at(self, read_at: u32) -> Admitted {
        Admitted { read_at, ..self }
    }

    /// The receipt the voter gets with this ballot (a poll with
    /// `voteChanges`): to show them once it is stored, never to keep.
    pub fn receipt(&self) -> Option<&Receipt> {
        self.receipt.as_ref()
    }
}

/// Invite codes just issued: their texts (shown this once, never stored)
/// and the poll's counts after issuing.
pub struct Issued {
    pub codes: Vec<InviteCode>,
    pub status: InviteStatus,
}

/// A poll's invite codes: how many were issued and how many cast a ballot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InviteStatus {
    pub issued: u64,
    pub used: u64,
}

/// Most invite codes issued in one call (the poll's total is bounded by
/// [`crate::store::MAX_INVITES`]).
pub const INVITES_PER_CALL: u64 = 1_000;

impl App {
    pub fn new(store: Store, limiter: Arc<RateLimiter>, votes: VoteLimits, base_url: &str) -> anyhow::Result<App> {
        Ok(App {
            store,
            limiter,
            votes: VoteBudgets::new(votes)?,
            links: Links::new(base_url),
            key_work_failed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// For tools that neither create polls nor take votes (`pollctl`).
    pub fn offline(store: Store, base_url: &str) -> anyhow::Result<App> {
        let limiter = Arc::new(RateLimiter::new(0, Duration::from_secs(3600))?);
        App::new(
            store,
            limiter,
            VoteLimits { per_window: 0, window: Duration::from_secs(600), per_network_day: 0 },
            base_url,
        )
    }

    pub fn links(&self) -> &Links {
        &self.links
    }

    /// The vote throttle's window (the privacy page says how long a client
    /// is remembered).
    pub fn vote_window(&self) -> Duration {
        self.votes.window()
    }

    /// Lets in-memory keys expire on time on a quiet server too (a timer
    /// calls this).
    pub fn tick(&self) {
        self.limiter.tick();
        self.votes.tick();
    }

    /// Drops the data keys the store's readers remembered for
    /// [`crate::store::MEMO_TTL`] or longer ([`Store::expire_key_memos`]; a
    /// timer calls this every [`crate::store::MEMO_SWEEP`]).
    pub fn expire_key_memos(&self) {
        self.store.expire_key_memos();
    }

    /// The day's key work when the key state is behind `today`
    /// (`Store::sweep`): erases what expired, re-wraps every live poll's
    /// key under its lease, sets aside any poll whose row cannot be read,
    /// and moves the key state to `today`. Nothing to do when it is not
    /// behind. A failure is kept, for `/healthz` to report
    /// ([`Session::healthy`]) until the work next succeeds.
    pub fn roll_keys(&self, today: Day) -> Result<(), Error> {
        if self.store.keys().day() >= today {
            return Ok(());
        }
        let done = self.store.sweep(today);
        self.key_work_failed.store(done.is_err(), std::sync::atomic::Ordering::Relaxed);
        if let Ok(report) = &done {
            eprintln!(
                "polld: key state moved to {}; {} poll(s) re-wrapped, {} erased{}",
                report.key_day,
                report.polls_rewrapped,
                report.polls_erased,
                match report.polls_set_aside.len() {
                    0 => String::new(),
                    n => format!(", {n} set aside (pollctl check)"),
                }
            );
        }
        done.map(drop)
    }

    /// Whether a `network` poll takes a single response a day from one
    /// network (the default): a second vote from the same device is then
    /// refused, so the pages do not offer one.
    pub fn one_response_a_day_per_network(&self) -> bool {
        self.votes.per_network_day() == 1
    }

    /// The responses a `network` poll takes from one network a day
    /// (`--network-votes-per-day`; 0: no such rule): what the pages and the
    /// OpenAPI document say of the rule.
    pub fn network_votes_per_day(&self) -> u32 {
        self.votes.per_network_day()
    }

    /// A per-worker session with its own read connection.
    pub fn session(self: &Arc<App>) -> anyhow::Result<Session> {
        Ok(Session { app: self.clone(), reader: self.store.reader()? })
    }

    /// Stores an admitted vote; the answer comes once it is committed.
    /// `then` learns whether it was stored first, even if nobody waits for
    /// the answer any more (the vote form's token is settled by it).
    pub fn cast(&self, mut vote: Admitted, then: Option<Settle>) -> Result<PendingWrite, Error> {
        // The day's response of a `network` poll stays spent only if the
        // ballot is stored (dropped unkept, it comes back).
        let then = match vote.day.take() {
            None => then,
            Some(day) => Some(Settle::new(move |stored| {
                if stored {
                    day.keep();
                }
                if let Some(then) = then {
                    then.run(stored);
                }
            })),
        };
        // A code the writer refuses spends one of the client's wrong codes.
        let then = match vote.invite {
            None => then,
            Some(_) => {
                let (wrong_codes, client, id) = (self.votes.wrong_codes(), vote.client, vote.id.clone());
                Some(Settle::new(move |stored| {
                    if !stored {
                        wrong_codes.spend_one(client, &id);
                    }
                    if let Some(then) = then {
                        then.run(stored);
                    }
                }))
            }
        };
        self.store.cast_read_at(
            &vote.id,
            (vote.ballot, Some(vote.read_at)),
            (vote.invite, vote.receipt.as_ref().map(Receipt::hash), vote.form),
            vote.today,
            then,
        )
    }

    /// Erases a poll and everything of it.
    pub fn delete(&self, poll: &Poll) -> Result<(), Error> {
        self.store.delete_poll(&poll.id)
    }

    /// Attaches a cleaned file to a poll, replacing what its slot held.
    pub fn attach_media(&self, poll: &Poll, media: NewMedia, today: Day) -> Result<(), Error> {
        if media.slot.question().is_some_and(|q| q >= poll.questions.len()) {
            return Err(Error::Invalid(vec![FieldError::new(Key::Media, crate::domain::Problem::NoSuchQuestion)]));
        }
        self.store.attach_media(&poll.id, media, today)
    }

    /// Erases one file of a poll; `Error::NotFound` if it has none such.
    pub fn detach_media(&self, poll: &Poll, media: &MediaId, today: Day) -> Result<(), Error> {
        self.store.detach_media(&poll.id, media, today)
    }
}

/// What `/healthz` says of a node that serves ([`Session::healthy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fitness {
    /// The key state's day.
    pub key_day: Day,
    /// The key state is behind today because the day's key work failed.
    pub key_work_failed: bool,
}

/// One worker's way in to the use cases: the shared [`App`] and a read
/// connection of its own.
pub struct Session {
    app: Arc<App>,
    reader: Reader,
}

impl Session {
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    pub fn links(&self) -> &Links {
        &self.app.links
    }

    /// Creates a poll for `client`, within the creation limit that the API
    /// and the web form share. Only the web form brings media.
    pub fn create(&mut self, client: IpAddr, poll: &NewPoll, media: &[NewMedia], today: Day) -> Result<Created, Error> {
        poll.check_on(today).map_err(Error::Invalid)?;
        let quota = self.app.limiter.try_acquire(client).map_err(Error::RateLimited)?;
        let id = PollId::generate()?;
        let token = AdminToken::generate()?;
        if let Err(e) = self.app.store.create_poll(&id, &token.hash(), poll, media, today) {
            self.app.limiter.refund(client);
            return Err(e);
        }
        let poll =
            self.reader.poll(&id, today)?.ok_or_else(|| Error::internal(anyhow::anyhow!("new poll vanished")))?;
        Ok(Created { poll, token, quota })
    }

    /// The live poll with id `id` (as given: a malformed id is unknown).
    /// Whether this node is fit to serve (`GET /healthz`): an error unless
    /// its database answers now (a load balancer sends no traffic to a node
    /// whose database is away). Its key state comes with the answer, and
    /// whether it is behind the day because the day's key work failed:
    /// then deleted polls stay readable in copies longer than the lease
    /// promises, and the operator must know; but the node still serves
    /// well, and a failure common to every node (the key files' disk) must
    /// not take them all out of a balancer's rotation.
    pub fn healthy(&mut self, today: Day) -> Result<Fitness, Error> {
        self.reader.ping()?;
        let key_day = self.app.store.keys().day();
        let failed = self.app.key_work_failed.load(std::sync::atomic::Ordering::Relaxed);
        Ok(Fitness { key_day, key_work_failed: failed && key_day < today })
    }

    pub fn poll(&mut self, id: &str, today: Day) -> Result<Poll, Error> {
        let id = PollId::parse(id).ok_or(Error::NotFound)?;
        self.reader.poll(&id, today)?.ok_or(Error::NotFound)
    }

    /// The live poll `id`, once `token` is found to be its admin token.
    pub fn admin(&mut self, id: &str, token: &str, today: Day) -> Result<Poll, Error> {
        let poll = self.poll(id, today)?;
        check_token(&poll, token)?;
        Ok(poll)
    }

    /// The poll as it is now (after a change), or `Error::NotFound`.
    pub fn reload(&mut self, poll: &Poll, today: Day) -> Result<Poll, Error> {
        self.reader.poll(&poll.id, today)?.ok_or(Error::NotFound)
    }

    /// The results of `poll` for a reader presenting `access`, by the
    /// poll's [`ResultsVisibility`]: results open to this reader need no
    /// credential (one is not even looked at); otherwise only the admin
    /// token reads them, and anyone else learns when they will be visible.
    pub fn results(&mut self, poll: &Poll, access: Access) -> Result<Results, Error> {
        if !results_open(poll, access) {
            match access {
                Access::Token(token) => check_token(poll, token)?,
                Access::Malformed => return Err(Error::Unauthorized(AuthFailure::Malformed)),
                Access::Anyone | Access::Voter => return Err(withheld(poll)),
            }
        }
        // The counts read with the poll, when this request just read it.
        let tallies = self.reader.tallies_as_read(poll)?;
        Ok(Results::of(poll, &tallies))
    }

    /// The results of `poll` for a reader who brings back the receipt
    /// `text` (as typed) of one of its ballots: the proof of a vote a voter
    /// keeps (the form token that opened the results after voting lasts a
    /// day or two, in one process's memory). Read as a voter's results
    /// ([`Access::Voter`]) once the receipt opens a ballot of the poll, open
    /// or closed: the ballot is only looked at, never shown here. Refused
    /// like a receipt on the ballot page otherwise (not a receipt, unknown
    /// or withdrawn, or a poll without `voteChanges`, whose receipts open
    /// nothing).
    pub fn voter_results(&mut self, poll: &Poll, text: &str) -> Result<Results, Error> {
        if !poll.vote_changes {
            return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
        }
        let receipt = Receipt::parse(text).ok_or(Error::ReceiptRefused(ReceiptRefusal::NotAReceipt))?;
        if self.reader.own_ballot(poll, &receipt.hash())?.is_none() {
            return Err(Error::ReceiptRefused(ReceiptRefusal::Unknown));
        }
        self.results(poll, Access::Voter)
    }

    /// The results of `poll` as its voter sees them, with `vote` counted:
    /// what the page answering that vote shows once it is stored. Read
    /// before the ballot goes to the writer (on this session's thread), so
    /// votes stored meanwhile by others may be missing, never this one.
    pub fn results_with(&mut self, poll: &Poll, vote: &Admitted) -> Result<Results, Error> {
        if !results_open(poll, Access::Voter) {
            return Err(withheld(poll));
        }
        let mut tallies = self.reader.tallies_as_read(poll)?;
        crate::store::count_ballot(&mut tallies, &poll.questions, &vote.ballot, vote.today)?;
        Ok(Results::of(poll, &tallies))
    }

    /// Every ballot of `poll`, for its admin `token` only, in no order of
    /// arrival and without days: the admin's ballot export.
    pub fn ballots(&mut self, poll: &Poll, token: &str) -> Result<Vec<Ballot>, Error> {
        check_token(poll, token)?;
        self.reader.ballots(poll)
    }

    /// Applies a validated patch to `poll` (checked against its language and
    /// questions) and answers the poll as it is afterwards.
    pub fn patch(&mut self, poll: &Poll, patch: &PollPatch, today: Day) -> Result<Poll, Error> {
        patch.check_against(&poll.shape(), today).map_err(Error::Invalid)?;
        self.app.store.patch_poll(&poll.id, patch, today)?;
        self.reload(poll, today)
    }

    /// A media item of a live poll, with the bytes `pick` asks for (see
    /// [`Reader::media`]).
    pub fn media(
        &mut self,
        id: &MediaId,
        today: Day,
        pick: impl FnOnce(&MediaBlob) -> Option<(u64, usize)>,
    ) -> Result<Option<(MediaBlob, Vec<u8>)>, Error> {
        self.reader.media(id, today, pick)
    }

    /// This session, made fit for reading media a piece at a time (see
    /// [`Reader::for_media_streams`]).
    pub fn for_media_streams(mut self) -> Result<Session, Error> {
        self.reader.for_media_streams()?;
        Ok(self)
    }

    /// More bytes of a media item being sent, if its poll is still live and
    /// the item still the same (see [`Reader::media_more`]).
    pub fn media_more(
        &mut self,
        item: &crate::domain::MediaItem,
        offset: u64,
        len: usize,
        today: Day,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.reader.media_more(item, offset, len, today)
    }

    /// Checks a vote of `client` on `poll`: the poll is open, the answers fit
    /// its questions, and the poll's duplicate check lets it through: the
    /// client within the vote throttle (`network`, counted against it from
    /// here on), an invite code given (`invite`; whether it is one of the
    /// poll's and unused is decided in the ballot's transaction), or
    /// nothing (`none`).
    pub fn admit_vote(
        &self,
        client: IpAddr,
        poll: &Poll,
        answers: Vec<Option<Answer>>,
        invite: Option<&str>,
        today: Day,
    ) -> Result<Admitted, Error> {
        if poll.closed {
            return Err(Error::Closed);
        }
        let ballot = Ballot::new(&poll.questions, answers)
            .map_err(|p| Error::Invalid(vec![FieldError::new(Key::Choices, p)]))?;
        let votes = &self.app.votes;
        let mut day = None;
        let invite = match poll.duplicate_check {
            DuplicateCheck::Network => {
                day = votes.network_vote(client, &poll.id, Instant::now())?;
                None
            }
            DuplicateCheck::Invite => match invite.map(str::trim).filter(|s| !s.is_empty()) {
                None => return Err(Error::InviteRefused(InviteRefusal::Missing)),
                Some(text) => {
                    // Too many wrong codes of late: refused before the writer.
                    votes.wrong_codes_left(client, &poll.id, Instant::now())?;
                    Some(InviteCode::parse(text).ok_or(Error::InviteRefused(InviteRefusal::NotACode))?.hash())
                }
            },
            DuplicateCheck::None => {
                votes.vote_without_check(client, &poll.id, ballot.weight(), Instant::now())?;
                None
            }
        };
        // Drawn afresh, from nothing the voter or the admin holds.
        let receipt = if poll.vote_changes { Some(Receipt::generate()?) } else { None };
        let read_at = poll.restructured;
        Ok(Admitted { id: poll.id.clone(), client, ballot, invite, receipt, form: None, today, day, read_at })
    }

    /// The ballot of `poll` that came with the receipt `text` (as typed),
    /// while the poll is open and lets voters change their ballots.
    pub fn own_ballot(&mut self, poll: &Poll, text: &str) -> Result<(Receipt, Ballot), Error> {
        let receipt = receipt_for(poll, text)?;
        let ballot =
            self.reader.own_ballot(poll, &receipt.hash())?.ok_or(Error::ReceiptRefused(ReceiptRefusal::Unknown))?;
        Ok((receipt, ballot))
    }

    /// Replaces the ballot that came with the receipt `text` by `answers`
    /// (checked against the poll's questions like a new vote) and answers
    /// the ballot as now stored. The counters follow exactly; the receipt
    /// stays the same.
    pub fn change_ballot(
        &mut self,
        client: IpAddr,
        poll: &Poll,
        text: &str,
        answers: Vec<Option<Answer>>,
        today: Day,
    ) -> Result<Ballot, Error> {
        let ballot = Ballot::new(&poll.questions, answers)
            .map_err(|p| Error::Invalid(vec![FieldError::new(Key::Choices, p)]))?;
        let receipt = self.before_amend(client, poll, text)?;
        self.app.store.amend(&poll.id, receipt.hash(), Some(ballot.clone()), today)?;
        Ok(ballot)
    }

    /// Erases the ballot that came with the receipt `text`, and takes it out
    /// of every counter. (On a poll with invite codes, the code that cast it
    /// stays spent: nothing tells which code that was.) Answers the
    /// receipt's hash, so the web can close what the vote's form opened.
    pub fn withdraw_ballot(
        &mut self,
        client: IpAddr,
        poll: &Poll,
        text: &str,
        today: Day,
    ) -> Result<ReceiptHash, Error> {
        let receipt = self.before_amend(client, poll, text)?;
        self.app.store.amend(&poll.id, receipt.hash(), None, today)?;
        Ok(receipt.hash())
    }

    /// What a change or withdrawal checks before it reaches the writer: the
    /// receipt opens a ballot now (a read: an unknown receipt costs the
    /// writer nothing), and the client is within the vote throttle, which
    /// each change counts against like a vote (every change rewrites a page
    /// and truncates the WAL, so it must not come in floods).
    fn before_amend(&mut self, client: IpAddr, poll: &Poll, text: &str) -> Result<Receipt, Error> {
        let (receipt, _) = self.own_ballot(poll, text)?;
        self.app.votes.throttle(client, &poll.id, Instant::now())?;
        Ok(receipt)
    }

    /// Issues `count` (1 to [`INVITES_PER_CALL`]) new invite codes for
    /// `poll`, for its admin `token`. The codes exist only in the answer.
    pub fn issue_invites(&mut self, poll: &Poll, token: &str, count: u64, today: Day) -> Result<Issued, Error> {
        check_token(poll, token)?;
        if !(1..=INVITES_PER_CALL).contains(&count) {
            let problem = crate::domain::Problem::IntegerRange { min: 1, max: INVITES_PER_CALL as usize };
            return Err(Error::Invalid(vec![FieldError::new(Key::Count, problem)]));
        }
        let codes = (0..count).map(|_| InviteCode::generate()).collect::<anyhow::Result<Vec<_>>>()?;
        let (issued, used) =
            self.app.store.issue_invites(&poll.id, codes.iter().map(InviteCode::hash).collect(), today)?;
        Ok(Issued { codes, status: InviteStatus { issued, used } })
    }

    /// How many invite codes `poll` has, and how many were used, for its
    /// admin `token`.
    pub fn invite_status(&mut self, poll: &Poll, token: &str) -> Result<InviteStatus, Error> {
        check_token(poll, token)?;
        let (issued, used) = self.reader.invite_counts(poll)?;
        Ok(InviteStatus { issued, used })
    }
}

/// The receipt typed as `text`, if `poll` takes receipts now: open (a
/// receipt is refused once voting has ended, even to look: the ballot's
/// part is over) and with `voteChanges` on. The store checks both again in
/// the write's transaction.
fn receipt_for(poll: &Poll, text: &str) -> Result<Receipt, Error> {
    receipts_open(poll)?;
    Receipt::parse(text).ok_or(Error::ReceiptRefused(ReceiptRefusal::NotAReceipt))
}

/// Whether `poll` takes receipts now (see `receipt_for`): the web asks
/// before it even offers the receipt form.
pub fn receipts_open(poll: &Poll) -> Result<(), Error> {
    if poll.closed {
        return Err(Error::Closed);
    }
    if !poll.vote_changes {
        return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
    }
    Ok(())
}

/// Whether `access` reads the results of `poll` without the admin token.
fn results_open(poll: &Poll, access: Access) -> bool {
    poll.results_open_to_all() || (poll.visibility == ResultsVisibility::AfterVote && matches!(access, Access::Voter))
}

/// What a reader without the token is told of results not open to them.
fn withheld(poll: &Poll) -> Error {
    match poll.visibility {
        ResultsVisibility::AfterVote => Error::ResultsWithheld(Withheld::UntilVote),
        ResultsVisibility::AfterClose => Error::ResultsWithheld(Withheld::UntilClose { closes_on: poll.closes_on }),
        ResultsVisibility::Public | ResultsVisibility::Private => Error::Unauthorized(AuthFailure::Missing),
    }
}

/// Checks a presented admin token (from a header, a form or the command
/// line) against the poll's stored hash, in constant time.
pub fn check_token(poll: &Poll, token: &str) -> Result<(), Error> {
    if poll.token_hash.matches(token) { Ok(()) } else { Err(Error::Unauthorized(AuthFailure::InvalidToken)) }
}

#[cfg(test)]
mod tests;

/// The store's queued write is what a deferred answer waits for
/// ([`crate::http::Pending`]): the contract knows neither side, the
/// application joins them.
impl crate::http::Pending for PendingWrite {
    fn wait(self: Box<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Error>> + Send>> {
        Box::pin((*self).committed())
    }

    fn wait_blocking(self: Box<Self>) -> Result<(), Error> {
        (*self).committed_blocking()
    }
}
