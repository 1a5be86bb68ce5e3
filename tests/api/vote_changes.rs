//! `voteChanges` (issue 15): whether voters get a receipt with which to see,
//! change or withdraw their own ballot on the web page. A plain boolean
//! setting, default true, at creation and in PATCH; the poll answer always
//! carries it; bodies written before it existed stay valid. Receipts
//! themselves never pass through the API: no endpoint casts, changes or
//! withdraws a vote.

use serde_json::{Value, json};

use crate::assert_401;
use crate::common::*;

fn poll_with(changes: Value) -> Value {
    with(valid_poll_json(), "/voteChanges", changes)
}

fn read(server: &Server, poll: &Created) -> Value {
    let resp = server.get(&poll.path());
    resp.assert_status(200);
    resp.json()
}

#[test]
fn vote_changes_is_true_unless_set_at_creation() {
    let server = Server::start();
    // A body from before the setting (valid_poll_json has none) is valid,
    // and its poll reads as true, in the 201 and in every later read.
    assert!(valid_poll_json().get("voteChanges").is_none());
    let plain = server.create_default();
    assert_eq!(plain.body["poll"]["voteChanges"], json!(true), "{}", plain.body);
    assert_eq!(read(&server, &plain)["voteChanges"], json!(true));
    for changes in [false, true] {
        let created = server.create_poll(&poll_with(json!(changes)));
        assert_eq!(created.body["poll"]["voteChanges"], json!(changes));
        assert_eq!(read(&server, &created)["voteChanges"], json!(changes));
    }
    // With the other settings of issue 15 and the settings issue.
    let body = json!({
        "title": "Works council", "lang": "de", "expiryDays": 90, "resultsVisibility": "afterVote",
        "duplicateCheck": "invite", "shuffleOptions": true, "voteChanges": false,
        "questions": [{"type": "single", "label": "Ja oder nein?", "options": ["Ja", "Nein"]}]
    });
    let created = server.create_poll(&body);
    let p = read(&server, &created);
    assert_eq!(
        (&p["voteChanges"], &p["duplicateCheck"], &p["resultsVisibility"], &p["shuffleOptions"]),
        (&json!(false), &json!("invite"), &json!("afterVote"), &json!(true))
    );
}

#[test]
fn patch_turns_vote_changes_off_and_on_and_leaves_it_alone_otherwise() {
    let server = Server::start();
    let poll = server.create_default();
    let set = |body: Value| {
        let resp = server.patch_json(&poll.id, &poll.token, &body);
        resp.assert_status(200);
        resp.json()
    };
    assert_eq!(set(json!({"voteChanges": false}))["voteChanges"], json!(false));
    assert_eq!(read(&server, &poll)["voteChanges"], json!(false));
    // The same value again is fine (a client that read the poll sends it back).
    assert_eq!(set(json!({"voteChanges": false}))["voteChanges"], json!(false));
    // PATCH bodies without it, old and new, leave it as it is.
    for body in [
        json!({"closed": true}),
        json!({"closed": false}),
        json!({"expiryDays": 90}),
        json!({"duplicateCheck": "none"}),
        json!({"shuffleOptions": true}),
    ] {
        assert_eq!(set(body.clone())["voteChanges"], json!(false), "{body}");
    }
    let p = set(json!({"voteChanges": true, "duplicateCheck": "invite"}));
    assert_eq!((&p["voteChanges"], &p["duplicateCheck"]), (&json!(true), &json!("invite")));
    assert_eq!(read(&server, &poll)["voteChanges"], json!(true));
    assert_eq!(set(json!({"resultsVisibility": "public"}))["voteChanges"], json!(true));
    // A closed poll keeps the setting, and it can still be changed.
    set(json!({"closed": true}));
    assert_eq!(set(json!({"voteChanges": false}))["voteChanges"], json!(false));
    // The token is needed, as for every PATCH.
    let resp = server.patch_json(&poll.id, &"A".repeat(43), &json!({"voteChanges": true}));
    assert_401(&resp, true);
    assert_eq!(read(&server, &poll)["voteChanges"], json!(false));
}

#[test]
fn vote_changes_that_is_not_a_boolean_is_refused_naming_it() {
    let server = Server::start();
    let poll = server.create_default();
    for bad in [json!("true"), json!("false"), json!(1), json!(0), json!(null), json!([true]), json!({}), json!("on")] {
        let resp = server.post_json("/api/polls", &poll_with(bad.clone()));
        assert_eq!(assert_422(&resp), ["voteChanges"], "creation with {bad}: {}", resp.describe());
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"voteChanges": bad}));
        assert_eq!(assert_422(&resp), ["voteChanges"], "PATCH with {bad}: {}", resp.describe());
    }
    // Every problem at once, as for the other fields.
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"voteChanges": "no", "duplicateCheck": "ip"}));
    let mut fields = assert_422(&resp);
    fields.sort();
    assert_eq!(fields, ["duplicateCheck", "voteChanges"], "{}", resp.describe());
    // Spelled otherwise, it is an unknown field (the API names those too).
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"vote_changes": false}));
    assert_422_field(&resp, "vote_changes");
    // A refused PATCH changed nothing.
    assert_eq!(read(&server, &poll)["voteChanges"], json!(true));
}

#[test]
fn no_api_endpoint_takes_a_receipt_or_a_vote() {
    let server = Server::start();
    let poll = server.create_default();
    // Not a route of the API, with or without the token.
    for path in [
        format!("/api/polls/{}/ballot", poll.id),
        format!("/api/polls/{}/receipt", poll.id),
        format!("/api/polls/{}/votes", poll.id),
        format!("/api/polls/{}/responses", poll.id),
    ] {
        for method in ["GET", "POST", "PATCH", "DELETE"] {
            let resp = server.request(method, &path).bearer(&poll.token).json(&json!({"receipt": "X"})).send();
            assert_problem(&resp, 404);
        }
    }
    // The poll's own PATCH does not take one either.
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"receipt": "0123-4567-89AB-CDEF-GHJK-MNPQ"}));
    assert_422_field(&resp, "receipt");
    // Nor does the document list any such path or field.
    let doc = server.get("/api").json();
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    assert!(paths.iter().all(|p| !p.contains("ballot") && !p.contains("receipt") && !p.contains("vote")), "{paths:?}");
}
