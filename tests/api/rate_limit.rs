//! The creation limit: its headers, the eleventh poll in an hour refused,
//! which forwarded address counts, IPv6 per /64, and only creation limited.

use serde_json::json;

use crate::common::*;

fn assert_rate_headers(resp: &Response) {
    let policy = resp.header("ratelimit-policy").unwrap_or_else(|| panic!("no RateLimit-Policy: {}", resp.describe()));
    assert!(
        policy.contains("10") && policy.contains("3600"),
        "RateLimit-Policy should state 10 per 3600 s: {policy:?}"
    );
    assert!(resp.has_header("ratelimit"), "no RateLimit: {}", resp.describe());
}

#[test]
fn ratelimit_headers_on_201() {
    let server = Server::start();
    let resp = server.create_from("192.0.2.10", &valid_poll_json());
    resp.assert_status(201);
    assert_rate_headers(&resp);
}

#[test]
fn eleventh_creation_in_an_hour_is_429() {
    let server = Server::start();
    for i in 0..10 {
        let resp = server.create_from("192.0.2.20", &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("192.0.2.20", &valid_poll_json());
    assert_problem(&resp, 429);
    assert_rate_headers(&resp);
    let retry: u64 = resp
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {}", resp.describe()))
        .parse()
        .expect("Retry-After in seconds");
    assert!(retry > 0 && retry <= 3600, "Retry-After {retry}");
    // Still limited on the next try, and a different client is not.
    assert_eq!(server.create_from("192.0.2.20", &valid_poll_json()).status, 429);
    server.create_from("192.0.2.21", &valid_poll_json()).assert_status(201);
}

#[test]
fn rate_limit_uses_last_forwarded_entry() {
    let server = Server::start();
    for i in 0..10 {
        let xff = format!("198.51.100.{i}, 192.0.2.30");
        server.create_from(&xff, &valid_poll_json()).assert_status(201);
    }
    let resp = server.create_from("198.51.100.99, 192.0.2.30", &valid_poll_json());
    assert_eq!(resp.status, 429, "{}", resp.describe());
    server.create_from("192.0.2.30, 192.0.2.31", &valid_poll_json()).assert_status(201);
}

#[test]
fn forged_forwarded_for_is_ignored_from_untrusted_peer() {
    let server = Server::builder().trusted_proxy("10.255.255.255/32").start();
    for i in 0..10 {
        let resp = server.create_from(&format!("192.0.2.{}", 100 + i), &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("192.0.2.200", &valid_poll_json());
    assert_problem(&resp, 429);
    let resp = server.request("POST", "/api/polls").json(&valid_poll_json()).send();
    assert_eq!(resp.status, 429, "{}", resp.describe());
}

#[test]
fn ipv6_clients_share_a_budget_per_64() {
    let server = Server::start();
    for i in 0..10 {
        let resp = server.create_from("2001:db8::1", &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("2001:db8::2", &valid_poll_json());
    assert_problem(&resp, 429);
    let resp = server.create_from("2001:db8:0:0:ffff:ffff:ffff:ffff", &valid_poll_json());
    assert_eq!(resp.status, 429, "{}", resp.describe());
    server.create_from("2001:db8:0:1::1", &valid_poll_json()).assert_status(201);
}

#[test]
fn rate_limit_applies_to_creation_only() {
    let server = Server::start();
    let poll = server.create_from("192.0.2.40", &valid_poll_json());
    let poll = Created::from_response(&poll);
    for _ in 0..9 {
        server.create_from("192.0.2.40", &valid_poll_json()).assert_status(201);
    }
    assert_eq!(server.create_from("192.0.2.40", &valid_poll_json()).status, 429);
    for _ in 0..3 {
        server.request("GET", &poll.path()).xff("192.0.2.40").send().assert_status(200);
        server.request("GET", &poll.results_path()).xff("192.0.2.40").bearer(&poll.token).send().assert_status(200);
    }
    server
        .request("PATCH", &poll.path())
        .xff("192.0.2.40")
        .bearer(&poll.token)
        .json(&json!({"closed": true}))
        .send()
        .assert_status(200);
}
