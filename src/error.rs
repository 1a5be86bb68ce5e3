//! The library's one error type. Each variant knows its HTTP status and how it
//! reads as an RFC 9457 problem document; internal details are written to
//! stderr by [`Error::to_problem`]'s caller and never reach the client.

use serde::Serialize;

pub use crate::domain::FieldError;

/// Why a Bearer credential was refused (RFC 6750 section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header at all.
    Missing,
    /// A scheme other than Bearer, or a malformed header.
    Malformed,
    /// A token that is not this poll's.
    InvalidToken,
}

/// How a rate-limited client is told when to come back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimited {
    pub limit: u32,
    pub window_secs: u64,
    pub retry_after_secs: u64,
}

/// Why results are not shown yet to a reader without the admin token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withheld {
    /// `afterVote`: only on the page a voter gets right after voting.
    UntilVote,
    /// `afterClose`: from the day the poll closes (its deadline, if it has one).
    UntilClose { closes_on: Option<crate::day::Day> },
}

/// Why a vote on a poll with `duplicateCheck: invite` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InviteRefusal {
    /// No code was given.
    Missing,
    /// Something was typed that cannot be a code (its shape is public: 20
    /// letters and digits), so saying so tells nothing about any code.
    NotACode,
    /// The code is not one of this poll's, or it has cast its ballot.
    UnknownOrUsed,
}

/// Why a receipt did not open a ballot (web only: no API endpoint takes
/// receipts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiptRefusal {
    /// What was typed cannot be a receipt (its shape is public: 24 letters
    /// and digits), so saying so tells nothing about any ballot.
    NotAReceipt,
    /// No stored ballot of this poll came with this receipt (never, or it
    /// was withdrawn).
    Unknown,
    /// The poll's admin turned `voteChanges` off: receipts no longer open
    /// ballots.
    ChangesOff,
}

#[derive(Debug)]
pub enum Error {
    /// 400: the body is not the JSON (or form) it claims to be.
    Malformed(String),
    /// 401
    Unauthorized(AuthFailure),
    /// 403: the poll's results are not visible to this reader yet.
    ResultsWithheld(Withheld),
    /// 403: a vote on an invite-only poll without a valid unused code (web
    /// only: no API endpoint takes votes).
    InviteRefused(InviteRefusal),
    /// 403: a receipt that does not open a ballot (web only).
    ReceiptRefused(ReceiptRefusal),
    /// 404: unknown, expired or erased poll, or no such path.
    NotFound,
    /// 405: the path exists but not with this method.
    MethodNotAllowed(&'static [&'static str]),
    /// 409: the poll is closed (for actions that need an open poll).
    Closed,
    /// 409: a vote form already sent once, on this node or another (web
    /// only): decided in the ballot's transaction.
    FormSpent,
    /// 409: a change of the questions in more than their texts, on a poll
    /// that has responses; each field it would change, with
    /// [`crate::domain::Problem::FixedByResponses`]. Decided in the
    /// change's transaction.
    HasResponses(Vec<FieldError>),
    /// 409: a vote read against questions whose structure has changed
    /// since (web only): decided in the ballot's transaction.
    PollChanged,
    /// 408: the client took too long to send its request.
    RequestTimeout,
    /// 413
    TooLarge { limit: usize },
    /// 415: the body's media type is not one this endpoint takes.
    UnsupportedMediaType { accepted: &'static [&'static str] },
    /// 422 with per-field errors.
    Invalid(Vec<FieldError>),
    /// 429: too many poll creations from one client.
    RateLimited(RateLimited),
    /// 429: too many votes on one poll from one client (web only: no API
    /// endpoint takes votes, so it shares the creation limit's problem code).
    VotesThrottled { retry_after_secs: u64 },
    /// 429: a `none` poll's ballots from one client group add more counters
    /// a second than its pace allows (`app::PACE_PER_SECOND`); send again in
    /// a second (web only, like [`Error::VotesThrottled`]).
    VotesPaced,
    /// 429: a `network` poll already took a response from this client group
    /// within the last day (`--network-votes-per-day`, 1 by default); the
    /// creator can choose invite codes or no duplicate check (web only).
    VotedFromNetwork { retry_after_secs: u64 },
    /// 503: the write queue is full or storage refuses writes (disk full, locked).
    Unavailable { reason: &'static str, retry_after_secs: u64 },
    /// 500: anything else. The cause is logged, the client sees a generic text.
    Internal(anyhow::Error),
}

/// An RFC 9457 problem document.
#[derive(Debug, Serialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl Error {
    pub fn internal(e: impl Into<anyhow::Error>) -> Error {
        Error::Internal(e.into())
    }

    /// The seconds a client should wait before it tries again (the
    /// `Retry-After` header of both front ends), where the error says.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Error::RateLimited(r) => Some(r.retry_after_secs),
            Error::VotesThrottled { retry_after_secs }
            | Error::VotedFromNetwork { retry_after_secs }
            | Error::Unavailable { retry_after_secs, .. } => Some(*retry_after_secs),
            Error::VotesPaced => Some(1),
            _ => None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            Error::Malformed(_) => 400,
            Error::Unauthorized(_) => 401,
            Error::ResultsWithheld(_) | Error::InviteRefused(_) | Error::ReceiptRefused(_) => 403,
            Error::NotFound => 404,
            Error::MethodNotAllowed(_) => 405,
            Error::RequestTimeout => 408,
            Error::Closed | Error::FormSpent | Error::HasResponses(_) | Error::PollChanged => 409,
            Error::TooLarge { .. } => 413,
            Error::UnsupportedMediaType { .. } => 415,
            Error::Invalid(_) => 422,
            Error::RateLimited(_)
            | Error::VotesThrottled { .. }
            | Error::VotesPaced
            | Error::VotedFromNetwork { .. } => 429,
            Error::Internal(_) => 500,
            Error::Unavailable { .. } => 503,
        }
    }

    /// A short, stable, machine-readable name of the problem, used as the
    /// fragment of the problem `type` URI.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Malformed(_) => "malformed-body",
            Error::Unauthorized(AuthFailure::Missing) => "token-required",
            Error::Unauthorized(AuthFailure::Malformed) => "bad-authorization",
            Error::Unauthorized(AuthFailure::InvalidToken) => "invalid-token",
            Error::ResultsWithheld(_) => "results-withheld",
            Error::InviteRefused(_) => "invite-refused",
            Error::ReceiptRefused(_) => "receipt-refused",
            Error::NotFound => "not-found",
            Error::MethodNotAllowed(_) => "method-not-allowed",
            Error::RequestTimeout => "request-timeout",
            Error::Closed => "poll-closed",
            Error::FormSpent => "form-spent",
            Error::HasResponses(_) => "poll-has-responses",
            Error::PollChanged => "poll-changed",
            Error::TooLarge { .. } => "body-too-large",
            Error::UnsupportedMediaType { .. } => "unsupported-media-type",
            Error::Invalid(_) => "validation-failed",
            Error::RateLimited(_)
            | Error::VotesThrottled { .. }
            | Error::VotesPaced
            | Error::VotedFromNetwork { .. } => "rate-limited",
            Error::Internal(_) => "internal-error",
            Error::Unavailable { .. } => "unavailable",
        }
    }

    pub fn title(&self) -> &'static str {
        match self {
            Error::Malformed(_) => "Malformed request body",
            Error::Unauthorized(_) => "Unauthorized",
            Error::ResultsWithheld(_) => "Results not visible yet",
            Error::InviteRefused(_) => "Invite code refused",
            Error::ReceiptRefused(_) => "Receipt refused",
            Error::NotFound => "Not found",
            Error::MethodNotAllowed(_) => "Method not allowed",
            Error::RequestTimeout => "Request timeout",
            Error::Closed => "Poll closed",
            Error::FormSpent => "Form already sent",
            Error::HasResponses(_) => "Poll has responses",
            Error::PollChanged => "Poll changed",
            Error::TooLarge { .. } => "Request body too large",
            Error::UnsupportedMediaType { .. } => "Unsupported media type",
            Error::Invalid(_) => "Validation failed",
            Error::RateLimited(_)
            | Error::VotesThrottled { .. }
            | Error::VotesPaced
            | Error::VotedFromNetwork { .. } => "Too many requests",
            Error::Internal(_) => "Internal server error",
            Error::Unavailable { .. } => "Service unavailable",
        }
    }

    /// The problem document for the client. Never includes internal causes.
    pub fn to_problem(&self) -> Problem {
        let detail = match self {
            Error::Malformed(why) => why.clone(),
            Error::Unauthorized(AuthFailure::Missing) => {
                "This action needs the poll's admin token as 'Authorization: Bearer <token>'.".into()
            }
            Error::Unauthorized(AuthFailure::Malformed) => {
                "The Authorization header must use the Bearer scheme: 'Authorization: Bearer <token>'.".into()
            }
            Error::Unauthorized(AuthFailure::InvalidToken) => "The token is not this poll's admin token.".into(),
            Error::ResultsWithheld(Withheld::UntilVote) => "This poll shows its results to each voter on the page \
                 they get right after voting, and to its admin (with the admin token), never to others."
                .into(),
            Error::ResultsWithheld(Withheld::UntilClose { closes_on: Some(day) }) => format!(
                "This poll's results become visible to everyone when it closes, on {day} at the latest; \
                 until then only its admin (with the admin token) can read them."
            ),
            Error::ResultsWithheld(Withheld::UntilClose { closes_on: None }) => {
                "This poll's results become visible to everyone when its admin closes it; until then only its \
                 admin (with the admin token) can read them."
                    .into()
            }
            Error::InviteRefused(InviteRefusal::Missing) => {
                "This poll takes one vote per invite code; the vote must carry one.".into()
            }
            Error::InviteRefused(InviteRefusal::NotACode) => {
                "This is not an invite code: a code has 20 letters and digits (case, spaces and hyphens do not matter)."
                    .into()
            }
            Error::InviteRefused(InviteRefusal::UnknownOrUsed) => {
                "The invite code is not one of this poll's, or it has already been used.".into()
            }
            Error::ReceiptRefused(ReceiptRefusal::NotAReceipt) => {
                "This is not a receipt: a receipt has 24 letters and digits (case, spaces and hyphens do not matter)."
                    .into()
            }
            Error::ReceiptRefused(ReceiptRefusal::Unknown) => {
                "No ballot of this poll has this receipt (it may have been withdrawn).".into()
            }
            Error::ReceiptRefused(ReceiptRefusal::ChangesOff) => {
                "This poll no longer lets voters change or withdraw their ballots.".into()
            }
            Error::NotFound => "No such poll or resource. Polls are erased when they expire or are deleted.".into(),
            Error::MethodNotAllowed(allowed) => format!("Allowed methods: {}.", allowed.join(", ")),
            Error::RequestTimeout => "The request body did not arrive in time.".into(),
            Error::Closed => "The poll is closed and accepts no responses.".into(),
            Error::FormSpent => "This vote form was sent once already; it counts once.".into(),
            Error::HasResponses(errors) => format!(
                "The poll has responses: its questions may now change only in their texts (the title, labels, \
                 options and scale end labels). {} field(s) would change more; see 'errors'. Nothing was changed.",
                errors.len()
            ),
            Error::PollChanged => {
                "The poll's questions changed after this vote was read; it was not counted. Answer them again.".into()
            }
            Error::TooLarge { limit } => format!("The request body exceeds the limit of {limit} bytes."),
            Error::UnsupportedMediaType { accepted } => {
                format!("The request body must be sent as {}.", accepted.join(" or "))
            }
            Error::Invalid(errors) => {
                format!("{} field(s) are invalid; see 'errors'.", errors.len())
            }
            Error::RateLimited(r) => format!(
                "At most {} polls may be created per {} minutes from one client; retry in {} seconds.",
                r.limit,
                r.window_secs / 60,
                r.retry_after_secs
            ),
            Error::VotesThrottled { retry_after_secs } => {
                format!("Too many responses to this poll from one client; retry in {retry_after_secs} seconds.")
            }
            Error::VotesPaced => {
                "Too many long responses to this poll from one client at once; retry in a second.".to_owned()
            }
            Error::VotedFromNetwork { retry_after_secs } => format!(
                "This poll already took a response from this network within a day; retry in {retry_after_secs} seconds."
            ),
            Error::Unavailable { reason, .. } => format!("{reason} Please retry shortly."),
            Error::Internal(_) => "An internal error occurred; it has been logged without request data.".into(),
        };
        Problem {
            kind: problem_type(self.code()),
            title: self.title(),
            status: self.status(),
            detail,
            errors: match self {
                Error::Invalid(errors) | Error::HasResponses(errors) => errors.clone(),
                _ => Vec::new(),
            },
        }
    }
}

/// Every problem code with its status, for the API reference. A unit test
/// checks that each variant's code is listed.
pub const PROBLEM_CODES: [(&str, u16); 20] = [
    ("malformed-body", 400),
    ("token-required", 401),
    ("bad-authorization", 401),
    ("invalid-token", 401),
    ("results-withheld", 403),
    ("invite-refused", 403),
    ("receipt-refused", 403),
    ("form-spent", 409),
    ("poll-has-responses", 409),
    ("poll-changed", 409),
    ("not-found", 404),
    ("method-not-allowed", 405),
    ("request-timeout", 408),
    ("poll-closed", 409),
    ("body-too-large", 413),
    ("unsupported-media-type", 415),
    ("validation-failed", 422),
    ("rate-limited", 429),
    ("internal-error", 500),
    ("unavailable", 503),
];

/// Problem type URIs are relative references into the API reference, stable
/// across deployments (RFC 9457 section 3.1.1 allows relative URIs).
fn problem_type(code: &str) -> String {
    format!("/api#problem-{code}")
}

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Error {
        Error::Internal(e)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Internal(e) => write!(f, "internal error: {e:#}"),
            other => write!(f, "{}: {}", other.status(), other.to_problem().detail),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_listed_code_and_status() {
        let all = [
            Error::Malformed("x".into()),
            Error::Unauthorized(AuthFailure::Missing),
            Error::Unauthorized(AuthFailure::Malformed),
            Error::Unauthorized(AuthFailure::InvalidToken),
            Error::ResultsWithheld(Withheld::UntilVote),
            Error::ResultsWithheld(Withheld::UntilClose { closes_on: None }),
            Error::InviteRefused(InviteRefusal::Missing),
            Error::InviteRefused(InviteRefusal::NotACode),
            Error::InviteRefused(InviteRefusal::UnknownOrUsed),
            Error::ReceiptRefused(ReceiptRefusal::NotAReceipt),
            Error::ReceiptRefused(ReceiptRefusal::Unknown),
            Error::ReceiptRefused(ReceiptRefusal::ChangesOff),
            Error::NotFound,
            Error::MethodNotAllowed(&["GET"]),
            Error::RequestTimeout,
            Error::Closed,
            Error::FormSpent,
            Error::HasResponses(vec![FieldError::new(
                crate::domain::Key::Questions,
                crate::domain::Problem::FixedByResponses,
            )]),
            Error::PollChanged,
            Error::TooLarge { limit: 1 },
            Error::UnsupportedMediaType { accepted: &["application/json"] },
            Error::Invalid(vec![FieldError::new(crate::domain::Key::Title, crate::domain::Problem::Blank)]),
            Error::RateLimited(RateLimited { limit: 1, window_secs: 3600, retry_after_secs: 5 }),
            Error::VotesThrottled { retry_after_secs: 5 },
            Error::VotesPaced,
            Error::VotedFromNetwork { retry_after_secs: 5 },
            Error::internal(anyhow::anyhow!("secret internal detail")),
            Error::Unavailable { reason: "Storage is full.", retry_after_secs: 1 },
        ];
        let mut codes: Vec<&str> = all.iter().map(Error::code).collect();
        codes.dedup();
        assert_eq!(codes.len(), PROBLEM_CODES.len());
        for e in &all {
            assert!(PROBLEM_CODES.contains(&(e.code(), e.status())), "{} is not listed", e.code());
            let p = e.to_problem();
            assert_eq!(p.status, e.status());
            assert!(!p.detail.contains("secret internal detail"));
            // Every 429 and 503 says when to come back (RFC 9110 §10.2.3);
            // nothing else does.
            let busy = matches!(e.status(), 429 | 503);
            assert_eq!(e.retry_after_secs().is_some(), busy, "{}", e.code());
            let r = crate::http::Response::from_error(e);
            assert_eq!(r.header("Retry-After").is_some(), busy, "{}", e.code());
        }
    }
}
