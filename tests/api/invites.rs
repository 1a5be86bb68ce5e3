//! `duplicateCheck` (network | invite | none) and invite codes (issue 15):
//! the setting at creation and in PATCH, what each mode lets through on the
//! share form, and `POST`/`GET /api/polls/{id}/invites` with their refusals.

use serde_json::{Value, json};

use crate::assert_401;
use crate::common::*;

fn poll_with(check: &str) -> Value {
    with(valid_poll_json(), "/duplicateCheck", json!(check))
}

fn fields(resp: &Response) -> Vec<String> {
    assert_422(resp)
}

fn invites_path(id: &str) -> String {
    format!("/api/polls/{id}/invites")
}

fn issue(server: &Server, poll: &Created, body: &Value) -> Response {
    server.request("POST", &invites_path(&poll.id)).bearer(&poll.token).json(body).send()
}

fn status(server: &Server, poll: &Created) -> Value {
    let resp = server.get_auth(&invites_path(&poll.id), &poll.token);
    resp.assert_status(200);
    resp.json()
}

/// The codes of a 201 answer.
fn codes(resp: &Response) -> Vec<String> {
    resp.assert_status(201);
    resp.json()["invites"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap().to_owned()).collect()
}

/// Votes option 0 of both questions of `valid_poll_json()`, with `invite`.
fn vote(server: &Server, id: &str, invite: Option<&str>, xff: &str) -> Result<(), String> {
    let mut f = vec![("q0".to_owned(), "0".to_owned()), ("q1".to_owned(), "1".to_owned())];
    if let Some(code) = invite {
        f.push(("invite".to_owned(), code.to_owned()));
    }
    server.vote_fields(id, &f, xff)
}

fn total(server: &Server, poll: &Created) -> u64 {
    server.get_auth(&poll.results_path(), &poll.token).json()["totalResponses"].as_u64().unwrap()
}

/// "is a crockford letter": what the schema's code pattern allows.
fn is_code(code: &str) -> bool {
    const LETTERS: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let groups: Vec<&str> = code.split('-').collect();
    groups.len() == 5 && groups.iter().all(|g| g.len() == 4 && g.chars().all(|c| LETTERS.contains(c)))
}

#[test]
fn duplicate_check_is_network_unless_set_at_creation_or_by_patch() {
    let server = Server::start();
    let plain = server.create_default();
    assert_eq!(server.get(&plain.path()).json()["duplicateCheck"], "network");
    for check in ["network", "invite", "none"] {
        let created = server.create_poll(&poll_with(check));
        assert_eq!(created.body["poll"]["duplicateCheck"], check);
        assert_eq!(server.get(&created.path()).json()["duplicateCheck"], check);
    }
    for (from, to) in [("network", "invite"), ("invite", "none"), ("none", "network")] {
        let created = server.create_poll(&poll_with(from));
        let resp = server.patch_json(&created.id, &created.token, &json!({"duplicateCheck": to}));
        resp.assert_status(200);
        assert_eq!(resp.json()["duplicateCheck"], to);
        assert_eq!(server.get(&created.path()).json()["duplicateCheck"], to);
    }
    for bad in [json!("ip"), json!("Invite"), json!(""), json!(1), json!(null), json!(["invite"])] {
        let resp = server.post_json("/api/polls", &with(valid_poll_json(), "/duplicateCheck", bad.clone()));
        assert_eq!(fields(&resp), ["duplicateCheck"], "creation with {bad}");
        let resp = server.patch_json(&plain.id, &plain.token, &json!({"duplicateCheck": bad}));
        assert_eq!(fields(&resp), ["duplicateCheck"], "PATCH with {bad}");
    }
    // A refused PATCH changed nothing.
    assert_eq!(server.get(&plain.path()).json()["duplicateCheck"], "network");
    let resp = server.patch_json(&plain.id, "A".repeat(43).as_str(), &json!({"duplicateCheck": "none"}));
    assert_401(&resp, true);
}

#[test]
fn each_mode_holds_back_what_it_says_on_the_share_form() {
    let server = Server::builder().arg("--vote-limit").arg("3").start();
    let ip = Server::fresh_client_ip();

    // network: the fourth vote from one address within the window is refused.
    let network = server.create_poll(&poll_with("network"));
    for _ in 0..3 {
        vote(&server, &network.id, None, &ip).unwrap();
    }
    let refused = vote(&server, &network.id, None, &ip).unwrap_err();
    assert!(refused.starts_with("429"), "{refused}");

    // none: no limit from one address.
    let none = server.create_poll(&poll_with("none"));
    for _ in 0..8 {
        vote(&server, &none.id, None, &ip).unwrap();
    }
    assert_eq!(total(&server, &none), 8);

    // invite: no code, a code of another poll, a made-up code: 403; each
    // issued code votes once, typed in any case, with or without hyphens.
    let invite = server.create_poll(&poll_with("invite"));
    let other = server.create_poll(&poll_with("invite"));
    let mine = codes(&issue(&server, &invite, &json!({"count": 3})));
    let theirs = codes(&issue(&server, &other, &json!({"count": 1})));
    let made_up = "0000-0000-0000-0000-0000";
    for code in [None, Some(""), Some("not a code"), Some(theirs[0].as_str()), Some(made_up)] {
        let refused = vote(&server, &invite.id, code, &ip).unwrap_err();
        assert!(refused.starts_with("403"), "{code:?}: {refused}");
    }
    vote(&server, &invite.id, Some(&mine[0]), &ip).unwrap();
    vote(&server, &invite.id, Some(&mine[1].to_lowercase().replace('-', "")), &ip).unwrap();
    // Used, however it is written.
    for again in [mine[0].clone(), mine[0].to_lowercase(), mine[1].clone()] {
        let refused = vote(&server, &invite.id, Some(&again), &ip).unwrap_err();
        assert!(refused.starts_with("403"), "reused {again}: {refused}");
    }
    // More votes from this one address than the network limit: invite-only
    // polls do not throttle by address.
    vote(&server, &invite.id, Some(&mine[2]), &ip).unwrap();
    assert_eq!(total(&server, &invite), 3);
    assert_eq!(status(&server, &invite), json!({"issued": 3, "used": 3}));
    assert_eq!(status(&server, &other), json!({"issued": 1, "used": 0}));

    // Turned invite-only by PATCH: votes without a code stop at once.
    let turned = server.create_poll(&poll_with("none"));
    vote(&server, &turned.id, None, &ip).unwrap();
    server.patch_json(&turned.id, &turned.token, &json!({"duplicateCheck": "invite"})).assert_status(200);
    assert!(vote(&server, &turned.id, None, &ip).unwrap_err().starts_with("403"));
    let code = codes(&issue(&server, &turned, &json!({"count": 1})));
    vote(&server, &turned.id, Some(&code[0]), &ip).unwrap();
    assert_eq!(total(&server, &turned), 2);
}

/// One form sent again and again with made-up codes (issue 38): each wrong
/// code the writer refuses spends one of the address's
/// `anonpoll::app::WRONG_CODES` for the poll; past them, its votes on the
/// poll are refused with 429 before they reach the writer, a good code
/// too, until one comes back. Another address, and another poll, are not
/// held back.
#[test]
fn wrong_invite_codes_from_one_address_are_capped_before_the_writer() {
    let server = Server::start();
    let (ip, other_ip) = (Server::fresh_client_ip(), Server::fresh_client_ip());
    let poll = server.create_poll(&poll_with("invite"));
    let elsewhere = server.create_poll(&poll_with("invite"));
    let good = codes(&issue(&server, &poll, &json!({"count": 3})));
    let good_elsewhere = codes(&issue(&server, &elsewhere, &json!({"count": 1})));
    let made_up = |i: u32| format!("0000-0000-0000-{:04}-0000", i % 10_000);
    for i in 0..anonpoll::app::WRONG_CODES {
        let refused = vote(&server, &poll.id, Some(&made_up(i)), &ip).unwrap_err();
        assert!(refused.starts_with("403"), "wrong code {i}: {refused}");
    }
    let refused = vote(&server, &poll.id, Some(&made_up(99)), &ip).unwrap_err();
    assert!(refused.starts_with("429"), "past the wrong codes: {refused}");
    let refused = vote(&server, &poll.id, Some(&good[0]), &ip).unwrap_err();
    assert!(refused.starts_with("429"), "a good code waits too: {refused}");
    vote(&server, &poll.id, Some(&good[1]), &other_ip).unwrap();
    vote(&server, &elsewhere.id, Some(&good_elsewhere[0]), &ip).unwrap();
    assert_eq!(status(&server, &poll), json!({"issued": 3, "used": 1}), "no wrong code reached a ballot");
}

#[test]
fn invites_need_the_poll_and_its_admin_token() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with("invite"));
    let other = server.create_default();
    let path = invites_path(&poll.id);
    let body = json!({"count": 2});
    let none = server.request("POST", &path).json(&body).send();
    assert_401(&none, false);
    for token in ["A".repeat(43), other.token.clone(), "short".into()] {
        let resp = server.request("POST", &path).bearer(&token).json(&body).send();
        assert_problem(&resp, 401);
        let resp = server.get_auth(&path, &token);
        assert_problem(&resp, 401);
    }
    assert_401(&server.get(&path), false);
    // Nothing was issued by the refused calls.
    assert_eq!(status(&server, &poll), json!({"issued": 0, "used": 0}));
    // Unknown, deleted poll: 404, token or not.
    let unknown = invites_path("AAAAAAAAAAAAAAAAAAAAAA");
    assert_problem(&server.request("POST", &unknown).bearer(&poll.token).json(&body).send(), 404);
    assert_problem(&server.get_auth(&unknown, &poll.token), 404);
    server.delete(&other.id, &other.token).assert_status(204);
    assert_problem(&issue(&server, &other, &body), 404);
    assert_problem(&server.get_auth(&invites_path(&other.id), &other.token), 404);
    // Methods.
    let resp = server.request("DELETE", &path).bearer(&poll.token).send();
    assert_problem(&resp, 405);
    let allow = resp.header("allow").unwrap_or_default();
    assert!(allow.contains("GET") && allow.contains("POST"), "{}", resp.describe());
}

#[test]
fn invite_counts_outside_1_to_1000_and_other_bodies_are_refused_with_their_path() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with("invite"));
    for (body, field) in [
        (json!({"count": 0}), "count"),
        (json!({"count": 1001}), "count"),
        (json!({"count": -1}), "count"),
        (json!({"count": 2.5}), "count"),
        (json!({"count": "3"}), "count"),
        (json!({"count": null}), "count"),
        (json!({"count": true}), "count"),
        (json!({}), "count"),
        (json!({"count": 3, "codes": ["ABCD"]}), "codes"),
        (json!([3]), ""),
        (json!(3), ""),
    ] {
        let resp = issue(&server, &poll, &body);
        assert_eq!(fields(&resp), [field], "{body}: {}", resp.describe());
    }
    // Every problem at once, as for the other bodies.
    let resp = issue(&server, &poll, &json!({"codes": 1, "count": 0}));
    assert_eq!(fields(&resp), ["codes", "count"], "{}", resp.describe());
    let raw = |ct: Option<&str>, bytes: &[u8]| {
        let mut req = server.request("POST", &invites_path(&poll.id)).bearer(&poll.token);
        if let Some(ct) = ct {
            req = req.header("Content-Type", ct);
        }
        req.body(bytes.to_vec()).send()
    };
    assert_problem(&raw(Some("text/plain"), br#"{"count": 1}"#), 415);
    assert_problem(&raw(None, br#"{"count": 1}"#), 415);
    assert_problem(&raw(Some("application/json"), br#"{"count": "#), 400);
    assert_problem(&raw(Some("application/json"), b""), 400);
    assert_eq!(status(&server, &poll), json!({"issued": 0, "used": 0}));
    // Whole numbers written as such are fine, at both ends.
    assert_eq!(codes(&issue(&server, &poll, &json!({"count": 1}))).len(), 1);
    assert_eq!(codes(&issue(&server, &poll, &json!({"count": 1000}))).len(), 1000);
    // Issue 24, item 8: one spelling of a whole number. 5.0, 5e0 and 50e-1
    // are the number 5 to JSON Schema, but not as written: refused like any
    // malformed count, nothing issued.
    for written in ["5.0", "5e0", "50e-1", "5.00"] {
        let body = format!(r#"{{"count": {written}}}"#);
        let resp = raw(Some("application/json"), body.as_bytes());
        assert_eq!(fields(&resp), ["count"], "{written}: {}", resp.describe());
    }
    assert_eq!(status(&server, &poll)["issued"], 1001, "none of them issued a code");
}

#[test]
fn issued_codes_come_once_with_links_that_carry_them_in_the_fragment() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with("invite"));
    let share = poll.body["shareUrl"].as_str().unwrap().to_owned();
    let resp = issue(&server, &poll, &json!({"count": 5}));
    resp.assert_status(201);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
    assert_eq!(resp.header("cache-control"), Some("no-store"), "{}", resp.describe());
    let body = resp.json();
    assert_eq!((&body["issued"], &body["used"]), (&json!(5), &json!(0)));
    let invites = body["invites"].as_array().unwrap();
    assert_eq!(invites.len(), 5);
    let mut seen = std::collections::BTreeSet::new();
    for i in invites {
        let obj = i.as_object().unwrap();
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["code", "url"]);
        let code = i["code"].as_str().unwrap();
        assert!(is_code(code), "{code}");
        assert_eq!(i["url"], format!("{share}#invite={code}"));
        assert!(seen.insert(code.to_owned()), "{code} twice");
    }
    // The codes are in that answer only: the status, the poll and its
    // results never show them again, and the database holds only their
    // hashes keyed under the poll's key.
    let second = codes(&issue(&server, &poll, &json!({"count": 2})));
    assert!(second.iter().all(|c| !seen.contains(c)));
    assert_eq!(status(&server, &poll), json!({"issued": 7, "used": 0}));
    let elsewhere = [
        server.get(&poll.path()).text(),
        server.get_auth(&poll.results_path(), &poll.token).text(),
        server.get_auth(&invites_path(&poll.id), &poll.token).text(),
    ]
    .concat();
    for code in seen.iter().chain(&second) {
        assert!(!elsewhere.contains(code.as_str()), "{code} shown again");
        let bare = code.replace('-', "");
        assert_not_in_db(server.dir(), bare.as_bytes(), "an invite code");
        assert_not_in_db(server.dir(), &sha256(bare.as_bytes()), "an invite code's plain hash");
        let hash = anonpoll::secret::InviteCode::parse(code).unwrap().hash();
        assert_eq!(hash.0.to_vec(), sha256(bare.as_bytes()));
        let mac = audit(server.dir()).invite_mac(&poll.id, &hash).unwrap();
        assert_in_db(server.dir(), &mac, "an invite code's keyed hash");
    }
    assert!(!server.logs().contains(&seen.iter().next().unwrap()[..9]), "a code in polld's log");
}

#[test]
fn the_status_counts_used_codes_and_a_poll_has_at_most_10000() {
    let server = Server::start();
    let poll = server.create_poll(&poll_with("invite"));
    let first = codes(&issue(&server, &poll, &json!({"count": 4})));
    let ip = Server::fresh_client_ip();
    vote(&server, &poll.id, Some(&first[2]), &ip).unwrap();
    assert_eq!(status(&server, &poll), json!({"issued": 4, "used": 1}));
    vote(&server, &poll.id, Some(&first[0]), &ip).unwrap();
    assert!(vote(&server, &poll.id, Some(&first[0]), &ip).is_err());
    assert_eq!(status(&server, &poll), json!({"issued": 4, "used": 2}));
    // The 201 of a later call counts the poll's codes, used ones included.
    let resp = issue(&server, &poll, &json!({"count": 996}));
    let body = resp.json();
    assert_eq!((body["issued"].as_u64(), body["used"].as_u64()), (Some(1000), Some(2)), "{}", resp.describe());
    for n in 2..=10 {
        let resp = issue(&server, &poll, &json!({"count": 1000}));
        assert_eq!(resp.json()["issued"], n * 1000, "{}", resp.status);
    }
    let resp = issue(&server, &poll, &json!({"count": 1}));
    assert_eq!(fields(&resp), ["count"]);
    assert!(resp.json()["errors"][0]["message"].as_str().unwrap().contains("10000"), "{}", resp.text());
    assert_eq!(status(&server, &poll), json!({"issued": 10000, "used": 2}));
    // Another poll has its own 10,000.
    let other = server.create_poll(&poll_with("invite"));
    assert_eq!(codes(&issue(&server, &other, &json!({"count": 1000}))).len(), 1000);
    // Closing the poll keeps its codes and their counts.
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert_eq!(status(&server, &poll), json!({"issued": 10000, "used": 2}));
}
