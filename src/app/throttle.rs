//! The limits a vote meets before it reaches the writer, per client group,
//! by its poll's duplicate check: which budget each vote spends, in which
//! order, and what a refusal answers.
//!
//! - `network` (the default): the vote throttle, `--vote-limit` responses
//!   per client group and poll, refilling over the vote window. A ballot
//!   changed or withdrawn with its receipt spends it too, whatever the
//!   poll's check (each change rewrites a page and truncates the WAL).
//! - `none` (a room of people behind one address): first the pace, the
//!   counters its ballots add to all `none` polls per second
//!   ([`PACE_PER_SECOND`]), then the flood cap, [`FLOOD_CAP_FACTOR`] times
//!   the vote throttle's budget per poll. A ballot the pace refuses spends
//!   none of the flood cap, which takes a window to come back.
//! - `invite`: the wrong codes a client group sent to the poll
//!   ([`WRONG_CODES`] per window), counted as the writer refuses them and
//!   checked here, so that made-up codes do not reach the writer.
//!
//! Why a module of its own: these are rules of the application, the same
//! for every front end, tested here with a clock of the test's own; the
//! budgets themselves (keyed hashes, refilling) are `budgets.rs`.
//!
//! Promises: a refusal is [`Error::VotesThrottled`], whose Retry-After is
//! the time one spent unit takes to come back (at least a second), or
//! [`Error::VotesPaced`]; a client is known only as a keyed hash of its
//! group, in memory (`budgets.rs`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::budgets::{RefillingBudgets, Spend};
use crate::error::Error;
use crate::secret::PollId;

/// Limits of the vote throttle.
#[derive(Clone, Copy, Debug)]
pub struct VoteLimits {
    pub per_window: u32,
    pub window: Duration,
    /// Responses one client group may send to one `network` poll a day
    /// (a budget refilling over 24 hours); 0: no such limit.
    pub per_network_day: u32,
}

impl VoteLimits {
    /// `per_window` responses per `window`, and the default of one response
    /// a day per network on a `network` poll.
    pub fn new(per_window: u32, window: Duration) -> VoteLimits {
        VoteLimits { per_window, window, per_network_day: NETWORK_VOTES_PER_DAY }
    }
}

/// Responses a `network` poll takes from one client group a day, unless
/// polld is told otherwise: one, so that one browser pressing "Answer
/// again" ten times counts once. A room of people behind one address is
/// what `none` (or invite codes) is for; the refusal says so.
pub const NETWORK_VOTES_PER_DAY: u32 = 1;

/// How long a `network` poll remembers a client group's responses.
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A `none` poll (no duplicate check: a room of people behind one address)
/// takes from one client group this many times the vote throttle's budget:
/// 1,000 responses per 10 minutes at the defaults, enough for a lecture
/// hall on one address. Without any cap, one client could hammer a heavy
/// `none` poll and hold the single writer for every other poll.
pub const FLOOD_CAP_FACTOR: u32 = 10;

/// The counters (`Ballot::weight`) one client group's ballots may add to
/// `none` polls per second, all of them together (so that a client cannot
/// multiply it by creating polls), with a burst of one second's worth. The
/// flood cap alone lets 1,000 ballots in at once, and the single
/// writer counts a heavy ballot (20 rankings of 12 options: 1,340
/// counters) in about half a millisecond: 6 client groups hammering such a
/// poll took half of a core from every other poll's votes for seconds
/// (bench/results/2026-11-28-issue24-ninth). At this pace
/// such a client gets 15 heavy ballots a second, and a lecture hall of 300
/// behind one address needs 20 s to answer 20 rankings of 12 options; a
/// poll of ordinary size (a few questions, a few counters each) is paced
/// at thousands of ballots a second, which no room of people reaches. A
/// refusal is a 429 like the throttle's, the form back with what was
/// entered.
pub const PACE_PER_SECOND: u32 = 20_000;

/// Wrong invite codes (unknown, or used already) one client group may send
/// to a poll per vote window (one comes back every window / N: 30 s at the
/// default 10 minutes). Past it, its votes on the poll are refused before
/// they reach the writer, as the vote throttle refuses them: one form sent
/// again and again with made-up codes would otherwise put about a thousand
/// transactions a second on the single writer, which every other vote
/// waits for. A person who mistypes, or a class behind one address with a
/// few typos, is far below.
pub const WRONG_CODES: u32 = 20;

/// Every budget a vote may spend before the writer, one per rule above.
pub(super) struct VoteBudgets {
    /// The vote throttle: per client group and poll.
    throttle: RefillingBudgets,
    /// The day's responses to a `network` poll: per client group and poll.
    network_day: Option<Arc<RefillingBudgets>>,
    /// How many: `VoteLimits::per_network_day`.
    per_network_day: u32,
    /// The flood cap of `none` polls: per client group and poll.
    flood_cap: RefillingBudgets,
    /// The pace of `none` polls, in counters: per client group over all of them.
    pace: RefillingBudgets,
    /// Invite codes refused by the writer (unknown or used), per client
    /// group and poll: spent as the writer refuses them.
    wrong_codes: Arc<RefillingBudgets>,
}

impl VoteBudgets {
    pub(super) fn new(votes: VoteLimits) -> anyhow::Result<VoteBudgets> {
        Ok(VoteBudgets {
            throttle: RefillingBudgets::new(votes.per_window, votes.window)?,
            network_day: match votes.per_network_day {
                0 => None,
                n => Some(Arc::new(RefillingBudgets::new(n, DAY)?)),
            },
            per_network_day: votes.per_network_day,
            flood_cap: RefillingBudgets::new(votes.per_window.saturating_mul(FLOOD_CAP_FACTOR), votes.window)?,
            pace: RefillingBudgets::new(PACE_PER_SECOND, Duration::from_secs(1))?,
            wrong_codes: Arc::new(RefillingBudgets::new(WRONG_CODES, votes.window)?),
        })
    }

    /// The vote throttle's window: how long a client is remembered (the
    /// privacy page says so).
    pub(super) fn window(&self) -> Duration {
        self.throttle.window()
    }

    /// Responses a `network` poll takes from one client group a day (0: no
    /// such limit).
    pub(super) fn per_network_day(&self) -> u32 {
        self.per_network_day
    }

    /// Lets in-memory keys expire on time on a quiet server too.
    pub(super) fn tick(&self) {
        self.throttle.tick();
        if let Some(day) = &self.network_day {
            day.tick();
        }
        self.flood_cap.tick();
        self.wrong_codes.tick();
        self.pace.tick();
    }

    /// A vote of `client` on a `network` poll, or a ballot it changes or
    /// withdraws: one of the vote throttle's budget for `poll`.
    pub(super) fn throttle(&self, client: IpAddr, poll: &PollId, now: Instant) -> Result<(), Error> {
        spend_one(&self.throttle, client, poll, now)
    }

    /// A vote of `client` on a `network` poll: one of the day's responses
    /// for `poll`, spent at once (so that forms sent together cannot all
    /// pass), then one of the vote throttle's; a vote the throttle refuses
    /// gets the day's response back. The day's response comes back too if
    /// the vote is not stored after all (see [`DaySpent`]).
    ///
    /// When the day's table is full ([`super::budgets::MAX_TRACKED`]
    /// networks and polls in a day), the rule is off for the votes it
    /// cannot track, until the next day's table: the throttle still holds.
    /// Refusing every new network instead would let a spray of addresses
    /// stop every poll's voters for a day.
    pub(super) fn network_vote(&self, client: IpAddr, poll: &PollId, now: Instant) -> Result<Option<DaySpent>, Error> {
        let spent = match &self.network_day {
            None => None,
            Some(day) => match day.try_spend_one_at(client, poll, now) {
                Spend::Spent => Some(DaySpent { budgets: day.clone(), client, poll: poll.clone(), kept: false }),
                Spend::Untracked => None,
                Spend::Refused => {
                    let retry_after_secs = day.wait_for_one_at(client, poll, now).as_secs_f64().ceil() as u64;
                    return Err(Error::VotedFromNetwork { retry_after_secs: retry_after_secs.max(1) });
                }
            },
        };
        // Dropped unkept on a refusal: the day's response comes back.
        self.throttle(client, poll, now)?;
        Ok(spent)
    }

    /// A vote of `client` on a `none` poll whose ballot adds `weight`
    /// counters: the pace first, then one of the flood cap's budget for
    /// `poll`.
    pub(super) fn vote_without_check(
        &self,
        client: IpAddr,
        poll: &PollId,
        weight: usize,
        now: Instant,
    ) -> Result<(), Error> {
        // The pace first: a ballot it refuses spends none of the flood
        // cap's budget, which takes a whole window to come back.
        if !self.pace.spend_across_polls_at(client, u32::try_from(weight).unwrap_or(u32::MAX), now) {
            return Err(Error::VotesPaced);
        }
        spend_one(&self.flood_cap, client, poll, now)
    }

    /// Whether `client` may still send an invite code to `poll`: refused
    /// once it sent [`WRONG_CODES`] wrong ones of late. Spends nothing.
    pub(super) fn wrong_codes_left(&self, client: IpAddr, poll: &PollId, now: Instant) -> Result<(), Error> {
        if self.wrong_codes.has_one_left_at(client, poll, now) { Ok(()) } else { Err(refused(&self.wrong_codes)) }
    }

    /// The wrong codes' budgets, for the writer's answer to spend one of
    /// when it refuses a code (it comes after the request has gone on).
    pub(super) fn wrong_codes(&self) -> Arc<RefillingBudgets> {
        self.wrong_codes.clone()
    }
}

/// One of the day's responses a `network` poll spent on an admitted vote.
/// Given back when dropped, unless [`DaySpent::keep`] was called: a vote
/// refused or dropped before the writer, or one the writer did not store,
/// counts nothing and costs nothing of the day.
pub struct DaySpent {
    budgets: Arc<RefillingBudgets>,
    client: IpAddr,
    poll: PollId,
    kept: bool,
}

impl DaySpent {
    /// The vote was stored: the day's response stays spent.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for DaySpent {
    fn drop(&mut self) {
        if !self.kept {
            self.budgets.give_back_one(self.client, &self.poll);
        }
    }
}

/// Spends one of `client`'s budget for `poll` in `budgets`, or answers the
/// refusal.
fn spend_one(budgets: &RefillingBudgets, client: IpAddr, poll: &PollId, now: Instant) -> Result<(), Error> {
    if budgets.spend_one_at(client, poll, now) { Ok(()) } else { Err(refused(budgets)) }
}

/// A vote refused by `budgets`: send again once one unit is back.
fn refused(budgets: &RefillingBudgets) -> Error {
    let retry_after_secs = budgets.refill_interval().as_secs_f64().ceil() as u64;
    Error::VotesThrottled { retry_after_secs: retry_after_secs.max(1) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    /// What a check answered, as the front ends tell it apart.
    #[derive(Debug, PartialEq)]
    enum Verdict {
        In,
        /// The throttle's 429, with its Retry-After in seconds.
        Throttled(u64),
        /// The pace's 429.
        Paced,
    }

    fn verdict(result: Result<(), Error>) -> Verdict {
        match result {
            Ok(()) => Verdict::In,
            Err(Error::VotesThrottled { retry_after_secs }) => Verdict::Throttled(retry_after_secs),
            Err(Error::VotesPaced) => Verdict::Paced,
            Err(other) => panic!("not a limit's answer: {other:?}"),
        }
    }

    fn ip(s: &str) -> IpAddr {
        IpAddr::from_str(s).unwrap()
    }

    fn poll(id: &str) -> PollId {
        PollId::parse(id).unwrap()
    }

    /// Budgets of `per_window` votes per 10 minutes, and the instant the
    /// test counts from.
    fn budgets(per_window: u32) -> (VoteBudgets, Instant) {
        let votes =
            VoteBudgets::new(VoteLimits { per_window, window: Duration::from_secs(600), per_network_day: 0 }).unwrap();
        (votes, Instant::now())
    }

    fn secs(t0: Instant, s: u64) -> Instant {
        t0 + Duration::from_secs(s)
    }

    #[test]
    fn the_vote_throttle_is_a_budget_per_client_group_and_poll() {
        let (votes, t0) = budgets(3);
        let (a, b) = (poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"));
        let throttle = |client: &str, poll: &PollId| verdict(votes.throttle(ip(client), poll, t0));
        for _ in 0..3 {
            assert_eq!(throttle("192.0.2.1", &a), Verdict::In);
        }
        // One back every 600 s / 3.
        assert_eq!(throttle("192.0.2.1", &a), Verdict::Throttled(200), "the fourth at once");
        assert_eq!(throttle("192.0.2.1", &b), Verdict::In, "another poll has a budget of its own");
        assert_eq!(throttle("192.0.2.2", &a), Verdict::In, "another address has a budget of its own");
        // An IPv6 client group is its /64.
        for _ in 0..3 {
            assert_eq!(throttle("2001:db8::1", &a), Verdict::In);
        }
        assert_eq!(throttle("2001:db8::2", &a), Verdict::Throttled(200), "the same /64");
        assert_eq!(throttle("2001:db8:0:1::1", &a), Verdict::In, "another /64");
    }

    #[test]
    fn a_spent_vote_comes_back_after_the_window_over_the_budget() {
        let (votes, t0) = budgets(3);
        let a = poll("AAAAAAAAAAAAAAAA");
        let throttle = |at: Instant| verdict(votes.throttle(ip("192.0.2.1"), &a, at));
        for _ in 0..3 {
            assert_eq!(throttle(t0), Verdict::In);
        }
        assert_eq!(throttle(secs(t0, 199)), Verdict::Throttled(200), "not yet back");
        assert_eq!(throttle(secs(t0, 200)), Verdict::In, "one back after 600 s / 3");
        assert_eq!(throttle(secs(t0, 201)), Verdict::Throttled(200), "and only one");
        // A whole window after its last use, the budget is whole again:
        // three at once, not more.
        for _ in 0..3 {
            assert_eq!(throttle(secs(t0, 800)), Verdict::In);
        }
        assert_eq!(throttle(secs(t0, 800)), Verdict::Throttled(200));
    }

    #[test]
    fn the_retry_after_is_the_refill_time_rounded_up_and_at_least_a_second() {
        let a = poll("AAAAAAAAAAAAAAAA");
        // 600 s / 7 = 85.7 s.
        let (votes, t0) = budgets(7);
        for _ in 0..7 {
            assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::In);
        }
        assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::Throttled(86));
        // 600 s / 1,000 = 0.6 s.
        let (votes, t0) = budgets(1_000);
        for _ in 0..1_000 {
            assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::In);
        }
        assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::Throttled(1));
        // A window shorter than a second counts as one, for the privacy
        // page's "remembered for" as for the refill.
        let votes = VoteBudgets::new(VoteLimits { per_window: 1, window: Duration::ZERO, per_network_day: 0 }).unwrap();
        assert_eq!(votes.window(), Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::In);
        assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::Throttled(1));
    }

    #[test]
    fn a_poll_without_duplicate_check_takes_ten_times_the_budget_apart_from_the_throttle() {
        let (votes, t0) = budgets(2);
        let (a, b) = (poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"));
        let unchecked = |poll: &PollId| verdict(votes.vote_without_check(ip("192.0.2.1"), poll, 1, t0));
        // The throttle's budget spent first takes nothing of the flood cap.
        for _ in 0..2 {
            assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::In);
        }
        assert_eq!(verdict(votes.throttle(ip("192.0.2.1"), &a, t0)), Verdict::Throttled(300));
        // Ten budgets of 2 (the API's description and the creation form
        // say "ten times"), one back every 600 s / 20.
        for i in 0..20 {
            assert_eq!(unchecked(&a), Verdict::In, "vote {i}");
        }
        assert_eq!(unchecked(&a), Verdict::Throttled(30));
        assert_eq!(unchecked(&b), Verdict::In, "another poll has a flood cap of its own");
        assert_eq!(verdict(votes.vote_without_check(ip("192.0.2.2"), &a, 1, t0)), Verdict::In, "another address");
        assert_eq!(verdict(votes.vote_without_check(ip("192.0.2.1"), &a, 1, secs(t0, 30))), Verdict::In, "one back");
    }

    #[test]
    fn the_pace_counts_a_client_groups_counters_per_second_over_all_its_polls() {
        let (votes, t0) = budgets(100);
        let polls = [poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"), poll("CCCCCCCCCCCCCCCC")];
        // 20 rankings of 12 options: 1,340 counters. 20,000 a second let 14
        // in at once (18,760), whichever poll they go to.
        let heavy = |poll: &PollId, at: Instant| verdict(votes.vote_without_check(ip("192.0.2.1"), poll, 1_340, at));
        for i in 0..14 {
            assert_eq!(heavy(&polls[i % 2], t0), Verdict::In, "ballot {i}");
        }
        assert_eq!(heavy(&polls[2], t0), Verdict::Paced, "a third poll shares the pace");
        assert_eq!(heavy(&polls[0], t0), Verdict::Paced);
        // What is left, 1,240 counters, is spent by a lighter ballot, to the
        // last counter.
        let (other, client) = (budgets(100).0, ip("192.0.2.1"));
        for _ in 0..14 {
            assert_eq!(verdict(other.vote_without_check(client, &polls[0], 1_340, t0)), Verdict::In);
        }
        assert_eq!(verdict(other.vote_without_check(client, &polls[1], 1_240, t0)), Verdict::In);
        assert_eq!(verdict(other.vote_without_check(client, &polls[2], 1, t0)), Verdict::Paced);
        // 1,240 left; 100 more come back in 5 ms.
        assert_eq!(heavy(&polls[0], t0 + Duration::from_millis(4)), Verdict::Paced);
        assert_eq!(heavy(&polls[0], t0 + Duration::from_millis(6)), Verdict::In);
        // Another client group has a pace of its own.
        assert_eq!(verdict(votes.vote_without_check(ip("192.0.2.2"), &polls[0], 1_340, t0)), Verdict::In);
        // A ballot heavier than a second's worth passes when the pace is
        // whole, and takes all of it.
        let client = ip("192.0.2.3");
        assert_eq!(verdict(votes.vote_without_check(client, &polls[0], usize::MAX, t0)), Verdict::In);
        assert_eq!(verdict(votes.vote_without_check(client, &polls[0], 1, t0)), Verdict::Paced);
        assert_eq!(verdict(votes.vote_without_check(client, &polls[0], 20_000, secs(t0, 1))), Verdict::In);
    }

    #[test]
    fn a_ballot_the_pace_refuses_spends_none_of_the_flood_cap() {
        // A flood cap of 10 per 10 minutes.
        let (votes, t0) = budgets(1);
        let a = poll("AAAAAAAAAAAAAAAA");
        let vote = |weight: usize, at: Instant| verdict(votes.vote_without_check(ip("192.0.2.1"), &a, weight, at));
        assert_eq!(vote(20_000, t0), Verdict::In, "the whole pace, one of the flood cap");
        for _ in 0..30 {
            assert_eq!(vote(1, t0), Verdict::Paced);
        }
        // A second later the pace is whole again, and the flood cap still
        // has its other 9.
        for i in 0..9 {
            assert_eq!(vote(1, secs(t0, 1)), Verdict::In, "vote {i}");
        }
        assert_eq!(vote(1, secs(t0, 1)), Verdict::Throttled(60));
    }

    #[test]
    fn wrong_invite_codes_are_counted_per_client_group_and_poll_and_checked_without_spending() {
        let (votes, t0) = budgets(100);
        let (a, b) = (poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"));
        let client = ip("192.0.2.1");
        let left = |poll: &PollId, at: Instant| verdict(votes.wrong_codes_left(client, poll, at));
        for _ in 0..50 {
            assert_eq!(left(&a, t0), Verdict::In, "asking spends nothing");
        }
        // The writer refuses 20 codes.
        let wrong_codes = votes.wrong_codes();
        for i in 0..20 {
            assert_eq!(left(&a, t0), Verdict::In, "after {i} wrong codes");
            assert!(wrong_codes.spend_one_at(client, &a, t0));
        }
        // One back every 600 s / 20.
        assert_eq!(left(&a, t0), Verdict::Throttled(30));
        assert_eq!(left(&b, t0), Verdict::In, "another poll");
        assert_eq!(verdict(votes.wrong_codes_left(ip("192.0.2.2"), &a, t0)), Verdict::In, "another address");
        assert_eq!(verdict(votes.throttle(client, &a, t0)), Verdict::In, "the vote throttle is apart");
        assert_eq!(left(&a, secs(t0, 29)), Verdict::Throttled(30));
        assert_eq!(left(&a, secs(t0, 30)), Verdict::In);
    }

    /// A `network` poll takes one response a day from a client group (the
    /// default), apart for each poll and each group; it comes back after a
    /// day; a vote the throttle refuses spends none of it; 0 lifts it.
    #[test]
    fn a_network_poll_takes_one_response_a_day_from_a_client_group() {
        let limits = VoteLimits::new(3, Duration::from_secs(600));
        assert_eq!(limits.per_network_day, NETWORK_VOTES_PER_DAY);
        let votes = VoteBudgets::new(limits).unwrap();
        let t0 = Instant::now();
        let (a, b) = (poll("AAAAAAAAAAAAAAAA"), poll("BBBBBBBBBBBBBBBB"));
        // A vote whose ballot is stored keeps its day's response.
        let vote = |client: &str, poll: &PollId, at: Instant| {
            votes.network_vote(ip(client), poll, at).map(|spent| spent.map(DaySpent::keep))
        };
        assert!(vote("192.0.2.1", &a, t0).is_ok());
        let again = vote("192.0.2.1", &a, secs(t0, 60));
        // Retry-After: the time left until the day's response is back.
        assert!(matches!(again, Err(Error::VotedFromNetwork { retry_after_secs: 86_340 })), "{again:?}");
        // Another address, another poll: each its own.
        assert!(vote("192.0.2.2", &a, secs(t0, 60)).is_ok());
        assert!(vote("192.0.2.1", &b, secs(t0, 60)).is_ok());
        assert!(vote("192.0.2.1", &a, secs(t0, 86_401)).is_ok(), "a day later it is back");
        // A vote not stored after all (refused later, or not written) gives
        // its day's response back when it is dropped unkept.
        let dropped = votes.network_vote(ip("192.0.2.3"), &a, t0).unwrap();
        assert!(dropped.is_some());
        assert!(
            matches!(votes.network_vote(ip("192.0.2.3"), &a, t0), Err(Error::VotedFromNetwork { .. })),
            "spent at once"
        );
        drop(dropped);
        assert!(vote("192.0.2.3", &a, t0).is_ok(), "given back");
        // The throttle refuses before the day is spent: a group whose throttle
        // is empty still has its day's response once the throttle refills.
        let tight =
            VoteBudgets::new(VoteLimits { per_window: 1, window: Duration::from_secs(600), per_network_day: 1 })
                .unwrap();
        let c = poll("CCCCCCCCCCCCCCCC");
        assert!(tight.throttle(ip("198.51.100.9"), &c, t0).is_ok(), "a change through a receipt spends the throttle");
        assert!(matches!(tight.network_vote(ip("198.51.100.9"), &c, t0), Err(Error::VotesThrottled { .. })));
        assert!(
            tight.network_vote(ip("198.51.100.9"), &c, secs(t0, 601)).is_ok(),
            "the day was not spent by the refusal"
        );
        // Lifted: the throttle alone.
        let lifted =
            VoteBudgets::new(VoteLimits { per_window: 3, window: Duration::from_secs(600), per_network_day: 0 })
                .unwrap();
        for _ in 0..3 {
            assert!(matches!(lifted.network_vote(ip("192.0.2.1"), &a, t0), Ok(None)));
        }
        assert!(matches!(lifted.network_vote(ip("192.0.2.1"), &a, t0), Err(Error::VotesThrottled { .. })));
    }
}
