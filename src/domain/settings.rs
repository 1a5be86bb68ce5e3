//! A poll's settings beyond its questions: who reads the results and when
//! (`resultsVisibility`), the day voting ends (`closesOn`) and whether the
//! share page shuffles the options (`shuffleOptions`).
//!
//! Why a module of its own: these settings are given at creation and changed
//! by PATCH, and their rules relate to the day the request is made (a
//! deadline is after today and before the poll's expiry). Parsing them
//! and checking them against the day happen here once, for the API, the web
//! forms and `pollctl` alike.
//!
//! Promises: the specification's `resultsPublic` keeps its meaning: `true`
//! is [`ResultsVisibility::Public`], `false` is [`ResultsVisibility::Private`],
//! and a body that gives both fields must make them agree.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Errors;
use super::problem::{Choices, Key, Problem};
use crate::day::Day;

/// Who may read a poll's results, and from when. The admin token always may.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResultsVisibility {
    /// Anyone with the link, at any time.
    Public,
    /// Each voter, on the page they get right after voting; nobody else.
    AfterVote,
    /// Anyone, once the poll is closed (by its admin or its deadline).
    AfterClose,
    /// Only the admin.
    #[default]
    Private,
}

impl ResultsVisibility {
    pub const ALL: [ResultsVisibility; 4] = [
        ResultsVisibility::Public,
        ResultsVisibility::AfterVote,
        ResultsVisibility::AfterClose,
        ResultsVisibility::Private,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResultsVisibility::Public => "public",
            ResultsVisibility::AfterVote => "afterVote",
            ResultsVisibility::AfterClose => "afterClose",
            ResultsVisibility::Private => "private",
        }
    }

    pub fn codes() -> Vec<&'static str> {
        ResultsVisibility::ALL.iter().map(|v| v.as_str()).collect()
    }

    pub fn from_code(s: &str) -> Option<ResultsVisibility> {
        ResultsVisibility::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The specification's `resultsPublic`: true exactly for `public`.
    pub fn is_public(self) -> bool {
        self == ResultsVisibility::Public
    }

    /// Whether `resultsPublic: public` says the same as this visibility.
    fn agrees_with(self, public: bool) -> bool {
        self.is_public() == public
    }
}

/// Reads `resultsVisibility`, and `resultsPublic` where `with_public` (a
/// creation body: the specification's PATCH has no `resultsPublic`, and
/// still refuses it): `None` when neither is given, the visibility they name
/// otherwise. Problems are pushed to `errs`; the outer `None` means one was
/// found.
pub(super) fn visibility(
    obj: &Map<String, Value>,
    with_public: bool,
    errs: &mut Errors,
) -> Option<Option<ResultsVisibility>> {
    let named = match obj.get(Key::ResultsVisibility.name()) {
        None => Some(None),
        Some(v) => match v.as_str().and_then(ResultsVisibility::from_code) {
            Some(vis) => Some(Some(vis)),
            None => {
                errs.push(Key::ResultsVisibility.into(), Problem::NotOneOf(Choices::ResultsVisibility));
                None
            }
        },
    };
    let public = match obj.get(Key::ResultsPublic.name()).filter(|_| with_public) {
        None => Some(None),
        Some(Value::Bool(b)) => Some(Some(*b)),
        Some(_) => {
            errs.push(Key::ResultsPublic.into(), Problem::NotABoolean);
            None
        }
    };
    match (named?, public?) {
        (Some(vis), Some(public)) if !vis.agrees_with(public) => {
            errs.push(Key::ResultsPublic.into(), Problem::DisagreesWithVisibility);
            None
        }
        (Some(vis), _) => Some(Some(vis)),
        (None, Some(true)) => Some(Some(ResultsVisibility::Public)),
        (None, Some(false)) => Some(Some(ResultsVisibility::Private)),
        (None, None) => Some(None),
    }
}

/// How a poll holds back a second vote from one person.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DuplicateCheck {
    /// The in-memory per-network throttle (the specification's behaviour).
    #[default]
    Network,
    /// One vote per invite code the admin issued.
    Invite,
    /// No limit (a room of people behind one address).
    None,
}

impl DuplicateCheck {
    pub const ALL: [DuplicateCheck; 3] = [DuplicateCheck::Network, DuplicateCheck::Invite, DuplicateCheck::None];

    pub fn as_str(self) -> &'static str {
        match self {
            DuplicateCheck::Network => "network",
            DuplicateCheck::Invite => "invite",
            DuplicateCheck::None => "none",
        }
    }

    pub fn codes() -> Vec<&'static str> {
        DuplicateCheck::ALL.iter().map(|v| v.as_str()).collect()
    }

    pub fn from_code(s: &str) -> Option<DuplicateCheck> {
        DuplicateCheck::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// Reads `duplicateCheck`: `None` when absent.
pub(super) fn duplicate_check(obj: &Map<String, Value>, errs: &mut Errors) -> Option<Option<DuplicateCheck>> {
    match obj.get(Key::DuplicateCheck.name()) {
        None => Some(None),
        Some(v) => match v.as_str().and_then(DuplicateCheck::from_code) {
            Some(d) => Some(Some(d)),
            None => {
                errs.push(Key::DuplicateCheck.into(), Problem::NotOneOf(Choices::DuplicateCheck));
                None
            }
        },
    }
}

/// A change of the deadline: a new day, or none.
pub type Deadline = Option<Day>;

/// Reads `closesOn` (a `YYYY-MM-DD` day, or `null` where `nullable`):
/// `None` when absent, `Some(deadline)` otherwise. Whether the day is after
/// today and before expiry is checked by [`check_deadline`].
pub(super) fn closes_on(obj: &Map<String, Value>, nullable: bool, errs: &mut Errors) -> Option<Option<Deadline>> {
    match obj.get(Key::ClosesOn.name()) {
        None => Some(None),
        Some(Value::Null) if nullable => Some(Some(None)),
        Some(v) => match v.as_str().and_then(Day::parse) {
            Some(day) => Some(Some(Some(day))),
            None => {
                errs.push(Key::ClosesOn.into(), Problem::NotADay);
                None
            }
        },
    }
}

/// A deadline must be after `today` (a deadline of today would close the
/// poll at once: closing does that) and before the day the poll expires (on
/// that day the poll is erased, so a deadline then would never come).
pub fn check_deadline(day: Day, today: Day, expires_on: Day) -> Result<(), Problem> {
    if day <= today { Err(Problem::NotAfterToday { today }) } else { check_before_expiry(day, expires_on) }
}

/// A deadline comes before the day the poll expires.
pub fn check_before_expiry(day: Day, expires_on: Day) -> Result<(), Problem> {
    if day >= expires_on { Err(Problem::AfterExpiry { expires_on }) } else { Ok(()) }
}

/// Whether a poll with `deadline` is past it on `today`.
pub fn deadline_passed(deadline: Option<Day>, today: Day) -> bool {
    deadline.is_some_and(|d| today >= d)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn vis(body: Value) -> (Option<Option<ResultsVisibility>>, Vec<String>) {
        let mut errs = Errors::default();
        let out = visibility(body.as_object().unwrap_or(&Map::new()), true, &mut errs);
        (out, errs.0.iter().map(|e| format!("{}: {}", e.path, e.problem)).collect())
    }

    #[test]
    fn results_public_and_visibility_must_agree() {
        use ResultsVisibility::*;
        assert_eq!(vis(json!({})).0, Some(None));
        assert_eq!(vis(json!({"resultsPublic": true})).0, Some(Some(Public)));
        assert_eq!(vis(json!({"resultsPublic": false})).0, Some(Some(Private)));
        assert_eq!(vis(json!({"resultsVisibility": "afterVote"})).0, Some(Some(AfterVote)));
        assert_eq!(vis(json!({"resultsVisibility": "afterClose", "resultsPublic": false})).0, Some(Some(AfterClose)));
        assert_eq!(vis(json!({"resultsVisibility": "public", "resultsPublic": true})).0, Some(Some(Public)));
        let (out, errs) = vis(json!({"resultsVisibility": "afterVote", "resultsPublic": true}));
        assert_eq!(out, None);
        assert_eq!(errs, ["resultsPublic: must agree with resultsVisibility (true exactly when it is public)"]);
        let (out, errs) = vis(json!({"resultsVisibility": "public", "resultsPublic": false}));
        assert_eq!((out, errs.len()), (None, 1));
        let (out, errs) = vis(json!({"resultsVisibility": "after_vote"}));
        assert_eq!(out, None);
        assert_eq!(errs, ["resultsVisibility: must be one of public, afterVote, afterClose, private"]);
    }

    #[test]
    fn a_deadline_lies_after_today_and_not_after_expiry() {
        let day = |s: &str| Day::parse(s).unwrap_or_else(|| panic!("{s}"));
        let (today, expires) = (day("2026-03-10"), day("2026-03-17"));
        assert!(check_deadline(day("2026-03-11"), today, expires).is_ok());
        assert!(check_deadline(day("2026-03-16"), today, expires).is_ok());
        // On its erase day the poll is gone: a deadline then never comes.
        assert_eq!(check_deadline(expires, today, expires), Err(Problem::AfterExpiry { expires_on: expires }));
        assert_eq!(check_deadline(day("2026-03-10"), today, expires), Err(Problem::NotAfterToday { today }));
        assert_eq!(
            check_deadline(day("2026-03-18"), today, expires),
            Err(Problem::AfterExpiry { expires_on: expires })
        );
        assert!(!deadline_passed(None, today));
        assert!(!deadline_passed(Some(day("2026-03-11")), today));
        assert!(deadline_passed(Some(today), today));
    }

    #[test]
    fn closes_on_is_a_day_or_null_where_allowed() {
        let mut errs = Errors::default();
        let obj = json!({"closesOn": "2026-02-30"});
        assert_eq!(closes_on(obj.as_object().unwrap_or(&Map::new()), true, &mut errs), None);
        assert_eq!(errs.0.len(), 1);
        let obj = json!({"closesOn": null});
        let mut errs = Errors::default();
        assert_eq!(closes_on(obj.as_object().unwrap_or(&Map::new()), true, &mut errs), Some(Some(None)));
        assert_eq!(closes_on(obj.as_object().unwrap_or(&Map::new()), false, &mut errs), None);
    }
}
