//! The addresses of pages that other pages link to, beside those of
//! `app::Links` (share, results, admin): a voter's own ballot, and the
//! results an `afterVote` voter is sent to.
//!
//! Promises: one spelling of each address (`docs/WEB.md`); the one-time
//! form token in `after_vote_path` is the only thing of a voter a URL
//! carries, and it opens nothing but those results.

use crate::app::Links;
use crate::domain::Poll;
use crate::secret::PollId;

/// The own-ballot page's path for `id` (`/p/{id}/ballot`).
pub fn own_ballot_path(id: &PollId) -> String {
    format!("/p/{id}/ballot")
}

/// The query parameter that carries a voter's redeemed one-time form token
/// to the results of an `afterVote` poll (`docs/WEB.md`).
pub const VOTED: &str = "voted";

/// The address a voter is sent to right after voting on an `afterVote` poll.
pub fn after_vote_path(poll: &Poll, ballot: &str) -> String {
    format!("{}?{VOTED}={ballot}", Links::results_path(&poll.id))
}
