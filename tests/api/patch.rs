//! `PATCH /api/polls/{id}`: the token, closing and reopening, expiry,
//! translations, all-or-nothing changes, and every malformed request.

use serde_json::json;

use crate::assert_401;
use crate::common::*;

#[test]
fn patch_requires_the_polls_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    let body = json!({"closed": true});
    let resp = server.request("PATCH", &poll.path()).json(&body).send();
    assert_401(&resp, false);
    assert_401(&server.patch_json(&poll.id, "wrong-token", &body), true);
    assert_401(&server.patch_json(&poll.id, &other.token, &body), true);
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_close_and_reopen() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": true}));
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
    let p = resp.json();
    assert_eq!(p["status"], "closed");
    assert_eq!(p["id"], poll.id.as_str());
    assert!(!resp.text().contains(&poll.token));
    assert_eq!(server.get(&poll.path()).json()["status"], "closed");
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": false}));
    resp.assert_status(200);
    assert_eq!(resp.json()["status"], "open");
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_returns_the_full_public_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": true}));
    resp.assert_status(200);
    assert_eq!(resp.json(), server.get(&poll.path()).json());
}

#[test]
fn patch_expiry_counts_from_today() {
    let server = Server::start();
    let poll = server.create_default();
    for days in [7, 90, 730, 365, 30] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": days}));
        resp.assert_status(200);
        assert_eq!(resp.json()["expiresOn"], date_from_today(days));
        assert_eq!(server.get(&poll.path()).json()["expiresOn"], date_from_today(days));
    }
}

#[test]
fn patch_expiry_invalid_values() {
    let server = Server::start();
    let poll = server.create_default();
    for v in [json!(8), json!(0), json!(-30), json!("7"), json!(null), json!(7.5)] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": v}));
        assert_422_field(&resp, "expiryDays");
    }
    assert_eq!(server.get(&poll.path()).json()["expiresOn"], date_from_today(30));
}

#[test]
fn patch_closed_wrong_type() {
    let server = Server::start();
    let poll = server.create_default();
    for v in [json!("true"), json!(1), json!(null), json!([true])] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": v}));
        assert_422_field(&resp, "closed");
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_adds_and_removes_translations() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": valid_translation()}}));
    resp.assert_status(200);
    assert_eq!(resp.json()["translations"]["fr"], valid_translation());
    let got = server.get(&poll.path()).json();
    assert_eq!(got["translations"], json!({"fr": valid_translation()}));

    let de = json!({
        "title": "Mittagessen",
        "questions": [
            {"label": "Wo?", "options": ["Pizza", "Sushi", "Salat"]},
            {"label": "Wann?", "options": ["Montag", "Freitag"]}
        ]
    });
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"de": de, "fr": null}}));
    resp.assert_status(200);
    assert_eq!(resp.json()["translations"], json!({"de": de}));
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({"de": de}));

    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"de": null}}));
    resp.assert_status(200);
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_translation_replaces_existing() {
    let server = Server::start();
    let poll = server.create_default();
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"it": valid_translation()}})).assert_status(200);
    let v2 = with(valid_translation(), "/title", json!("Pranzo di squadra"));
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"it": v2}})).assert_status(200);
    assert_eq!(server.get(&poll.path()).json()["translations"]["it"]["title"], "Pranzo di squadra");
}

#[test]
fn patch_translation_shape_must_match_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let bad = [
        without(valid_translation(), "/questions/1"),
        with(valid_translation(), "/questions/2", json!({"label": "x", "options": ["a", "b"]})),
        without(valid_translation(), "/questions/0/options/2"),
        with(valid_translation(), "/questions/1/options/2", json!("extra")),
        without(valid_translation(), "/title"),
        without(valid_translation(), "/questions"),
        without(valid_translation(), "/questions/0/label"),
        with(valid_translation(), "/questions", json!([])),
        json!("Déjeuner"),
        json!([]),
        json!(42),
    ];
    for t in bad {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": t}}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_translation_text_rules() {
    // Reading: a language version obeys the same text rules as the poll
    // (non-empty after trim, length bounds, no control characters, distinct
    // options, no unknown fields).
    let server = Server::start();
    let poll = server.create_default();
    let bad = [
        with(valid_translation(), "/title", json!("")),
        with(valid_translation(), "/title", json!("t".repeat(201))),
        with(valid_translation(), "/title", json!("bell\u{7}")),
        with(valid_translation(), "/questions/0/label", json!("l".repeat(501))),
        with(valid_translation(), "/questions/0/label", json!("  ")),
        with(valid_translation(), "/questions/0/options/0", json!("")),
        with(valid_translation(), "/questions/0/options/0", json!("o".repeat(201))),
        with(valid_translation(), "/questions/0/options/1", json!("Pizza")),
        with(valid_translation(), "/extra", json!(1)),
    ];
    for t in bad {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": t}}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
    // Boundary values are fine.
    let mut ok = valid_translation();
    ok["title"] = json!("é".repeat(200));
    ok["questions"][0]["label"] = json!("l".repeat(500));
    ok["questions"][0]["options"][0] = json!("o".repeat(200));
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": ok}})).assert_status(200);
}

#[test]
fn patch_translation_language_keys() {
    let server = Server::start();
    let poll = server.create_default(); // lang en
    for lang in ["en", "es", "FR", "", "xx"] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {lang: valid_translation()}}));
        assert_422(&resp);
    }
    for v in [json!([]), json!("fr"), json!(null)] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": v}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_keys_can_be_combined() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(
        &poll.id,
        &poll.token,
        &json!({"closed": true, "expiryDays": 7, "translations": {"fr": valid_translation()}}),
    );
    resp.assert_status(200);
    let p = server.get(&poll.path()).json();
    assert_eq!(p["status"], "closed");
    assert_eq!(p["expiresOn"], date_from_today(7));
    assert_eq!(p["translations"]["fr"], valid_translation());
}

#[test]
fn patch_is_all_or_nothing() {
    let server = Server::start();
    let poll = server.create_default();
    let before = server.get(&poll.path()).json();
    for body in [
        json!({"closed": true, "expiryDays": 8}),
        json!({"expiryDays": 7, "closed": "yes"}),
        json!({"closed": true, "translations": {"fr": without(valid_translation(), "/questions/1")}}),
        json!({"translations": {"fr": valid_translation(), "es": valid_translation()}}),
        json!({"translations": {"fr": valid_translation()}, "expiryDays": 3}),
        json!({"closed": true, "unknown": 1}),
    ] {
        let resp = server.patch_json(&poll.id, &poll.token, &body);
        assert_422(&resp);
        assert_eq!(server.get(&poll.path()).json(), before, "changed by {body}");
    }
}

#[test]
fn patch_empty_or_unknown_keys_are_422() {
    let server = Server::start();
    let poll = server.create_default();
    for body in [
        json!({}),
        // A title may change (tests/api/edits.rs), but not to nothing.
        json!({"title": " "}),
        json!({"resultsPublic": true}),
        json!({"questions": []}),
        json!({"status": "closed"}),
        json!([{"closed": true}]),
        json!(null),
    ] {
        let resp = server.patch_json(&poll.id, &poll.token, &body);
        assert_422(&resp);
    }
    let p = server.get(&poll.path()).json();
    assert_eq!(p["title"], "Team lunch");
    assert_eq!(p["resultsPublic"], false);
}

#[test]
fn patch_content_types() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/merge-patch+json")
        .json(&json!({"closed": true}))
        .send();
    resp.assert_status(200);
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/json; charset=utf-8")
        .json(&json!({"closed": false}))
        .send();
    resp.assert_status(200);
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let resp = server
            .request("PATCH", &poll.path())
            .bearer(&poll.token)
            .header("Content-Type", ct)
            .json(&json!({"closed": true}))
            .send();
        assert_problem(&resp, 415);
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_malformed_json_is_400() {
    let server = Server::start();
    let poll = server.create_default();
    for body in [&b"{\"closed\": tru"[..], b"{closed: true}", b"\xff\xfe"] {
        let resp = server
            .request("PATCH", &poll.path())
            .bearer(&poll.token)
            .header("Content-Type", "application/json")
            .body(body.to_vec())
            .send();
        assert_problem(&resp, 400);
    }
}

#[test]
fn patch_oversized_body_is_413() {
    let server = Server::start();
    let poll = server.create_default();
    let mut body = b"{\"closed\": true}".to_vec();
    body.resize(BODY_LIMIT + 1, b' ');
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/json")
        .body(body)
        .send();
    assert_problem(&resp, 413);
}

#[test]
fn patch_unknown_poll_is_404() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json("AAAAAAAAAAAAAAAA", &poll.token, &json!({"closed": true}));
    assert_problem(&resp, 404);
}
