//! Rules of the application tested through an [`App`] over a real store:
//! the day's key work as the application runs it, and what `/healthz` says
//! of it; the budget each vote spends by its poll's duplicate check (the
//! budgets themselves, with a clock of the test's own, in `throttle.rs`).

use super::*;

/// A day's key work that fails (here: the key file cannot be written) is
/// reported by `/healthz` until the work succeeds; polld goes on serving
/// meanwhile, and stays in its balancer's rotation.
#[test]
fn a_failed_days_key_work_is_reported_until_it_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("t.sqlite3");
    let keys = dir.path().join("keys").join("t.keys");
    let store = Store::open_db(&db, &crate::store::Keys::at(&keys), Default::default()).unwrap();
    let app = Arc::new(App::offline(store, "http://127.0.0.1:8080").unwrap());
    let mut session = app.session().unwrap();
    let today = Day::today();
    let fit = |key_day, key_work_failed| Fitness { key_day, key_work_failed };
    assert_eq!(session.healthy(today).unwrap(), fit(today, false));
    // The key file's place taken by a folder: the state cannot move on.
    let aside = dir.path().join("aside.keys");
    std::fs::rename(&keys, &aside).unwrap();
    std::fs::create_dir(&keys).unwrap();
    let tomorrow = today.next();
    assert!(app.roll_keys(tomorrow).is_err());
    assert_eq!(session.healthy(tomorrow).unwrap(), fit(today, true));
    // Today (not behind) nothing is amiss whatever failed: the failure is
    // about a day not reached.
    assert_eq!(session.healthy(today).unwrap(), fit(today, false));
    // Fixed: the next try succeeds and /healthz says so.
    std::fs::remove_dir(&keys).unwrap();
    std::fs::rename(&aside, &keys).unwrap();
    app.roll_keys(tomorrow).unwrap();
    assert_eq!(session.healthy(tomorrow).unwrap(), fit(tomorrow, false));
}

/// A session of an app over a fresh store whose votes are limited to
/// `per_window` per 10 minutes, with its folder (kept while the test runs).
fn voting_session(per_window: u32) -> (Session, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("t.sqlite3");
    let keys = crate::store::Keys::at(&dir.path().join("keys").join("t.keys"));
    let store = Store::open_db(&db, &keys, Default::default()).unwrap();
    let limiter = Arc::new(RateLimiter::new(10, Duration::from_secs(3600)).unwrap());
    let votes = VoteLimits { per_window, window: Duration::from_secs(600), per_network_day: 0 };
    let app = Arc::new(App::new(store, limiter, votes, "http://127.0.0.1:8080").unwrap());
    let session = app.session().unwrap();
    (session, dir)
}

/// A poll of one single-choice question with the duplicate check `check`.
fn poll_checked_by(session: &mut Session, check: &str) -> Poll {
    let body = serde_json::json!({
        "title": "Lunch", "lang": "en", "expiryDays": 7, "duplicateCheck": check,
        "questions": [{"type": "single", "label": "Where?", "options": ["Pizza", "Salad"]}],
    });
    let new = NewPoll::from_json(&body).unwrap();
    session.create("192.0.2.100".parse().unwrap(), &new, &[], Day::today()).unwrap().poll
}

/// What a vote of `client` on `poll` got: in, or the error's debug form.
fn vote(session: &Session, client: &str, poll: &Poll, invite: Option<&str>) -> String {
    let answers = vec![Some(Answer::Choice(0))];
    match session.admit_vote(client.parse().unwrap(), poll, answers, invite, Day::today()) {
        Ok(_) => "in".to_owned(),
        Err(e) => format!("{e:?}"),
    }
}

/// Each duplicate check spends its own budget: a `network` poll the vote
/// throttle, a poll without check ten times as much, and each apart from
/// the other; an invite poll neither (its codes are the writer's to
/// check), only a code's shape before.
#[test]
fn each_duplicate_check_spends_the_budget_of_its_own_rule() {
    let (mut session, _dir) = voting_session(2);
    let network = poll_checked_by(&mut session, "network");
    let none = poll_checked_by(&mut session, "none");
    let invite = poll_checked_by(&mut session, "invite");
    for _ in 0..2 {
        assert_eq!(vote(&session, "192.0.2.1", &network, None), "in");
    }
    assert_eq!(vote(&session, "192.0.2.1", &network, None), "VotesThrottled { retry_after_secs: 300 }");
    assert_eq!(vote(&session, "192.0.2.2", &network, None), "in", "another address");
    for i in 0..20 {
        assert_eq!(vote(&session, "192.0.2.1", &none, None), "in", "vote {i} without check");
    }
    assert_eq!(vote(&session, "192.0.2.1", &none, None), "VotesThrottled { retry_after_secs: 30 }");
    for _ in 0..30 {
        assert_eq!(vote(&session, "192.0.2.1", &invite, None), "InviteRefused(Missing)");
        assert_eq!(vote(&session, "192.0.2.1", &invite, Some("not a code")), "InviteRefused(NotACode)");
    }
    assert_eq!(vote(&session, "192.0.2.1", &invite, Some("7K3M-7K3M-7K3M-7K3M-7K3M")), "in");
}

/// A ballot changed or withdrawn with its receipt spends the vote throttle,
/// even on a poll without duplicate check, whose votes spend its flood cap
/// instead: every change rewrites a page, so changes must not come in
/// floods.
#[test]
fn a_ballot_changed_with_its_receipt_spends_the_vote_throttle() {
    let (mut session, _dir) = voting_session(2);
    let poll = poll_checked_by(&mut session, "none");
    let client: IpAddr = "192.0.2.1".parse().unwrap();
    let admitted = session.admit_vote(client, &poll, vec![Some(Answer::Choice(0))], None, Day::today()).unwrap();
    let receipt = admitted.receipt().unwrap().expose();
    session.app().cast(admitted, None).unwrap().committed_blocking().unwrap();
    for choice in [1, 0] {
        let changed = session.change_ballot(client, &poll, &receipt, vec![Some(Answer::Choice(choice))], Day::today());
        assert!(changed.is_ok(), "{changed:?}");
    }
    let refused = session.change_ballot(client, &poll, &receipt, vec![Some(Answer::Choice(1))], Day::today());
    assert!(matches!(refused, Err(Error::VotesThrottled { retry_after_secs: 300 })), "{refused:?}");
    let refused = session.withdraw_ballot(client, &poll, &receipt, Day::today());
    assert!(matches!(refused, Err(Error::VotesThrottled { retry_after_secs: 300 })), "{refused:?}");
    // The flood cap the vote spent is another budget: 19 more votes go in.
    for i in 0..19 {
        assert_eq!(vote(&session, "192.0.2.1", &poll, None), "in", "vote {i}");
    }
    assert_eq!(vote(&session, "192.0.2.1", &poll, None), "VotesThrottled { retry_after_secs: 30 }");
}

/// An invite code the writer refuses (unknown, or used) spends one of the
/// client group's wrong codes for the poll; past [`WRONG_CODES`] its votes
/// with a code are refused before they reach the writer, 429 like the
/// throttle's.
#[test]
fn invite_codes_the_writer_refuses_are_counted_until_votes_are_refused_before_it() {
    let (mut session, _dir) = voting_session(2);
    let poll = poll_checked_by(&mut session, "invite");
    let client: IpAddr = "192.0.2.1".parse().unwrap();
    let made_up = "7K3M-7K3M-7K3M-7K3M-7K3M";
    for i in 0..20 {
        let admitted = session.admit_vote(client, &poll, vec![Some(Answer::Choice(0))], Some(made_up), Day::today());
        let admitted = admitted.unwrap_or_else(|e| panic!("code {i}: {e:?}"));
        let stored = session.app().cast(admitted, None).unwrap().committed_blocking();
        assert!(matches!(stored, Err(Error::InviteRefused(InviteRefusal::UnknownOrUsed))), "{stored:?}");
    }
    assert_eq!(vote(&session, "192.0.2.1", &poll, Some(made_up)), "VotesThrottled { retry_after_secs: 30 }");
    assert_eq!(vote(&session, "192.0.2.1", &poll, None), "InviteRefused(Missing)", "no code: said first");
    assert_eq!(vote(&session, "192.0.2.2", &poll, Some(made_up)), "in", "another address");
}
