//! Poll settings beyond the specification: `resultsVisibility` (who reads
//! results, and from when), `closesOn` (the day voting ends) and
//! `shuffleOptions`, at creation, in PATCH and in what the results endpoint
//! answers. `resultsPublic` keeps its meaning throughout.

use serde_json::{Value, json};

use crate::assert_401;
use crate::common::*;

/// `valid_poll_json()` without its `resultsPublic`, plus `settings`.
fn poll_with(settings: Value) -> Value {
    let mut body = without(valid_poll_json(), "/resultsPublic");
    for (k, v) in settings.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn fields(resp: &Response) -> Vec<String> {
    resp.json()["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_poll_without_settings_reads_as_the_specification_had_it() {
    let server = Server::start();
    let poll = server.create_default();
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_eq!(
        (&p["resultsPublic"], &p["resultsVisibility"], &p["closesOn"], &p["shuffleOptions"]),
        (&json!(false), &json!("private"), &Value::Null, &json!(false))
    );
    let p = server.create_public();
    let p = server.get(&format!("/api/polls/{}", p.id)).json();
    assert_eq!((&p["resultsPublic"], &p["resultsVisibility"]), (&json!(true), &json!("public")));
}

#[test]
fn results_public_and_visibility_must_agree() {
    let server = Server::start();
    for (settings, public) in [
        (json!({"resultsVisibility": "public"}), true),
        (json!({"resultsVisibility": "public", "resultsPublic": true}), true),
        (json!({"resultsVisibility": "afterVote", "resultsPublic": false}), false),
        (json!({"resultsVisibility": "afterClose"}), false),
    ] {
        let created = server.create_poll(&poll_with(settings.clone()));
        let p = server.get(&format!("/api/polls/{}", created.id)).json();
        assert_eq!(p["resultsPublic"], json!(public), "{settings}");
        assert_eq!(p["resultsVisibility"], settings["resultsVisibility"], "{settings}");
    }
    for settings in [
        json!({"resultsVisibility": "afterVote", "resultsPublic": true}),
        json!({"resultsVisibility": "public", "resultsPublic": false}),
    ] {
        let resp = server.post_json("/api/polls", &poll_with(settings.clone()));
        assert_problem(&resp, 422);
        assert_eq!(fields(&resp), ["resultsPublic"], "{settings}");
    }
    let resp = server.post_json("/api/polls", &poll_with(json!({"resultsVisibility": "voters"})));
    assert_problem(&resp, 422);
    assert_eq!(fields(&resp), ["resultsVisibility"]);
}

#[test]
fn a_closing_day_lies_after_today_and_before_expiry() {
    let server = Server::start();
    // expiryDays 7 (valid_poll_json): the poll expires in 7 days.
    for (day, ok) in [
        (date_from_today(1), true),
        (date_from_today(6), true),
        (date_from_today(7), false),
        (today(), false),
        (date_from_today(-1), false),
        (date_from_today(8), false),
        ("2026-02-30".to_owned(), false),
        ("tomorrow".to_owned(), false),
    ] {
        let resp = server.post_json("/api/polls", &poll_with(json!({"expiryDays": 7, "closesOn": day})));
        if ok {
            resp.assert_status(201);
            assert_eq!(resp.json()["poll"]["closesOn"], json!(day));
            assert_eq!(resp.json()["poll"]["status"], "open");
        } else {
            assert_problem(&resp, 422);
            assert_eq!(fields(&resp), ["closesOn"], "{day}");
        }
    }
    let resp = server.post_json("/api/polls", &poll_with(json!({"closesOn": null})));
    assert_problem(&resp, 422);
}

/// The day comes: written into the database as polld would see it after
/// midnight (no clock can be moved in a black-box test).
fn closing_day_comes(server: &Server, id: &str) {
    server.closing_day_comes(id);
}

#[test]
fn on_its_closing_day_a_poll_is_closed_takes_no_vote_and_keeps_its_results() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with(json!({"closesOn": date_from_today(1), "resultsPublic": true})));
    server.vote(&poll.id, &[Some(1)], "198.51.100.7").unwrap();
    closing_day_comes(&server, &poll.id);
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_eq!(p["status"], "closed");
    let err = server.vote(&poll.id, &[Some(0)], "198.51.100.8").unwrap_err();
    assert!(err.starts_with("409") || err.contains("no ballot code"), "{err}");
    let results = server.get(&poll.results_path());
    results.assert_status(200);
    assert_eq!(results.json()["totalResponses"], 1);
    assert_eq!(results.json()["status"], "closed");
}

#[test]
fn reopening_a_poll_past_its_closing_day_removes_that_day() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with(json!({"closesOn": date_from_today(2)})));
    closing_day_comes(&server, &poll.id);
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": false}));
    resp.assert_status(200);
    assert_eq!((&resp.json()["status"], &resp.json()["closesOn"]), (&json!("open"), &Value::Null));
    server.vote(&poll.id, &[Some(0)], "198.51.100.9").unwrap();
}

#[test]
fn patch_sets_moves_and_removes_the_closing_day() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with(json!({"expiryDays": 30})));
    let set = |body: Value| server.patch_json(&poll.id, &poll.token, &body);
    let resp = set(json!({"closesOn": date_from_today(10), "shuffleOptions": true, "resultsVisibility": "afterClose"}));
    resp.assert_status(200);
    let p = resp.json();
    assert_eq!(
        (&p["closesOn"], &p["shuffleOptions"], &p["resultsVisibility"], &p["resultsPublic"]),
        (&json!(date_from_today(10)), &json!(true), &json!("afterClose"), &json!(false))
    );
    // Seven days would end the poll before its closing day.
    let resp = set(json!({"expiryDays": 7}));
    assert_problem(&resp, 422);
    assert_eq!(fields(&resp), ["expiryDays"]);
    assert!(resp.json()["errors"][0]["message"].as_str().unwrap().contains(&date_from_today(10)));
    set(json!({"expiryDays": 7, "closesOn": date_from_today(3)})).assert_status(200);
    // Its own day sent back unchanged is accepted (a client that read the poll).
    set(json!({"closesOn": date_from_today(3), "shuffleOptions": false})).assert_status(200);
    let resp = set(json!({"closesOn": null}));
    resp.assert_status(200);
    assert_eq!(resp.json()["closesOn"], Value::Null);
    let resp = set(json!({"closesOn": today()}));
    assert_problem(&resp, 422);
    assert_eq!(fields(&resp), ["closesOn"]);
    // The specification's PATCH has no resultsPublic; it stays refused.
    let resp = set(json!({"resultsPublic": true}));
    assert_problem(&resp, 422);
    assert_eq!(fields(&resp)[0], "resultsPublic", "an unknown field, as before (and nothing to change)");
    let resp = set(json!({"resultsVisibility": "public"}));
    assert_eq!((&resp.json()["resultsVisibility"], &resp.json()["resultsPublic"]), (&json!("public"), &json!(true)));
}

#[test]
fn after_close_results_are_withheld_until_the_poll_closes() {
    let server = Server::start();
    let closes = date_from_today(5);
    let poll = server.create_poll(&poll_with(json!({"resultsVisibility": "afterClose", "closesOn": closes})));
    let resp = server.get(&poll.results_path());
    assert_problem(&resp, 403);
    let problem = resp.json();
    assert_eq!(problem["type"], "/api#problem-results-withheld");
    assert!(problem["detail"].as_str().unwrap().contains(&closes), "{problem}");
    // The token reads them; a wrong one is refused as such.
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
    assert_401(&server.get_auth(&poll.results_path(), &"A".repeat(43)), true);
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    server.get(&poll.results_path()).assert_status(200);
}

#[test]
fn after_vote_results_are_not_in_the_api_without_the_token() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with(json!({"resultsVisibility": "afterVote"})));
    let resp = server.get(&poll.results_path());
    assert_problem(&resp, 403);
    assert!(resp.json()["detail"].as_str().unwrap().contains("after voting"));
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert_problem(&server.get(&poll.results_path()), 403);
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
}
