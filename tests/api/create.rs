//! `POST /api/polls` that succeeds: status, headers, body shape, links, and
//! every accepted value at its bounds.

use serde_json::json;

use crate::common::*;

#[test]
fn create_returns_201_location_no_store() {
    let server = Server::start();
    let resp = server.post_json("/api/polls", &valid_poll_json());
    resp.assert_status(201);
    let body = resp.json();
    let id = body["id"].as_str().unwrap();
    assert_eq!(resp.header("location"), Some(format!("/api/polls/{id}").as_str()));
    let cc = resp.header("cache-control").unwrap_or_default();
    assert!(cc.contains("no-store"), "Cache-Control: {cc:?}");
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
}

#[test]
fn create_response_body_shape() {
    let server = Server::start();
    let poll = server.create_default();
    let b = &poll.body;
    let base = &server.base_url;
    assert_eq!(poll.id.len(), 16, "id {:?}", poll.id);
    assert!(is_url_safe(&poll.id), "id {:?}", poll.id);
    assert_eq!(poll.token.len(), 43, "token {:?}", poll.token);
    assert!(is_url_safe(&poll.token), "token {:?}", poll.token);
    assert_eq!(base64url_decode(&poll.token).map(|v| v.len()), Some(32));
    assert_eq!(b["shareUrl"], format!("{base}/p/{}", poll.id));
    assert_eq!(b["adminUrl"], format!("{base}/p/{}/admin#{}", poll.id, poll.token));
    assert_eq!(b["resultsUrl"], format!("{base}/p/{}/results", poll.id));
    assert_eq!(b["expiresOn"], date_from_today(30));
    let p = &b["poll"];
    assert_eq!(p["id"], poll.id.as_str());
    assert_eq!(p["title"], "Team lunch");
    assert_eq!(p["lang"], "en");
    assert_eq!(p["status"], "open");
    assert_eq!(p["resultsPublic"], false);
    assert_eq!(p["createdOn"], today());
    assert_eq!(p["expiresOn"], date_from_today(30));
    assert_eq!(p["translations"], json!({}));
    assert_eq!(p["media"], json!([]));
    assert_eq!(p["shareUrl"], b["shareUrl"]);
    assert_eq!(
        p["questions"],
        json!([
            {"type": "single", "label": "Where shall we eat?", "options": ["Pizza", "Sushi", "Salad"], "required": false},
            {"type": "single", "label": "Which day?", "options": ["Monday", "Friday"], "required": false}
        ])
    );
}

#[test]
fn create_poll_equals_get_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let got = server.get(&poll.path());
    got.assert_status(200);
    assert_eq!(got.json(), poll.body["poll"]);
}

#[test]
fn default_base_url_is_listen_address() {
    let server = Server::start();
    let poll = server.create_default();
    assert_eq!(poll.body["shareUrl"], format!("http://{}/p/{}", server.addr, poll.id));
}

#[test]
fn base_url_flag_is_used_in_links() {
    let server = Server::builder().base_url("https://polls.example.org").start();
    let poll = server.create_default();
    assert_eq!(poll.body["shareUrl"], format!("https://polls.example.org/p/{}", poll.id));
    assert_eq!(poll.body["adminUrl"], format!("https://polls.example.org/p/{}/admin#{}", poll.id, poll.token));
    assert_eq!(poll.body["resultsUrl"], format!("https://polls.example.org/p/{}/results", poll.id));
    assert_eq!(server.get(&poll.path()).json()["shareUrl"], poll.body["shareUrl"]);
}

#[test]
fn every_expiry_value_sets_expires_on() {
    let server = Server::start();
    for days in [7, 30, 90, 365, 730] {
        let poll = server.create_poll(&with(valid_poll_json(), "/expiryDays", json!(days)));
        assert_eq!(poll.body["expiresOn"], date_from_today(days), "expiryDays {days}");
        assert_eq!(poll.body["poll"]["expiresOn"], date_from_today(days));
    }
}

#[test]
fn every_language_is_accepted() {
    let server = Server::start();
    for lang in ["en", "fr", "de", "it"] {
        let poll = server.create_poll(&with(valid_poll_json(), "/lang", json!(lang)));
        assert_eq!(poll.body["poll"]["lang"], lang);
    }
}

#[test]
fn results_public_defaults_to_false() {
    let server = Server::start();
    let poll = server.create_poll(&without(valid_poll_json(), "/resultsPublic"));
    assert_eq!(poll.body["poll"]["resultsPublic"], false);
    assert_eq!(server.get(&poll.results_path()).status, 401);
}

#[test]
fn results_public_true_is_kept() {
    let server = Server::start();
    let poll = server.create_public();
    assert_eq!(poll.body["poll"]["resultsPublic"], true);
    server.get(&poll.results_path()).assert_status(200);
}

#[test]
fn ids_and_tokens_are_unique() {
    let server = Server::start();
    let polls: Vec<Created> = (0..5).map(|_| server.create_default()).collect();
    for (i, a) in polls.iter().enumerate() {
        for b in &polls[i + 1..] {
            assert_ne!(a.id, b.id);
            assert_ne!(a.token, b.token);
        }
    }
}

#[test]
fn content_type_parameters_and_case_are_accepted() {
    let server = Server::start();
    let body = serde_json::to_vec(&valid_poll_json()).unwrap();
    for ct in ["application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"] {
        let resp = server.post_bytes("/api/polls", Some(ct), &body);
        assert_eq!(resp.status, 201, "Content-Type {ct:?}: {}", resp.describe());
    }
}

#[test]
fn boundary_sizes_are_accepted() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("t".repeat(200));
    body["questions"] = questions(20, 12);
    body["questions"][0]["label"] = json!("l".repeat(500));
    body["questions"][0]["options"][11] = json!("o".repeat(200));
    let poll = server.create_poll(&body);
    let p = &poll.body["poll"];
    assert_eq!(p["title"].as_str().unwrap().chars().count(), 200);
    assert_eq!(p["questions"].as_array().unwrap().len(), 20);
    assert_eq!(p["questions"][0]["options"].as_array().unwrap().len(), 12);
    assert_eq!(p["questions"][0]["label"].as_str().unwrap().len(), 500);
}

#[test]
fn two_options_and_one_question_are_accepted() {
    let server = Server::start();
    let poll = server.create_poll(&with(valid_poll_json(), "/questions", questions(1, 2)));
    assert_eq!(poll.body["poll"]["questions"].as_array().unwrap().len(), 1);
}

#[test]
fn lengths_count_characters_not_bytes() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("é".repeat(200));
    body["questions"][0]["label"] = json!("日".repeat(500));
    body["questions"][0]["options"][0] = json!("ü".repeat(200));
    let poll = server.create_poll(&body);
    assert_eq!(poll.body["poll"]["title"], "é".repeat(200));
}
