//! Data-handling rules of anonpoll, each as a test that fails on a breach:
//! no cookies, no client IPs (DB files, logs), day-precision dates, tokens
//! stored only as SHA-256, expired polls gone at once, hard delete down to
//! the bytes of the database files, and correct counting of responses.

use crate::common;

use common::*;
use serde_json::{Value, json};

const IPV4: &str = "203.0.113.77";
const IPV4_RAW: [u8; 4] = [203, 0, 113, 77];
const IPV6: &str = "2001:db8:abcd:12::77";
const IPV6_RAW: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0xab, 0xcd, 0x00, 0x12, 0, 0, 0, 0, 0, 0, 0, 0x77];

// ===========================================================================
// Cookies
// ===========================================================================

#[test]
fn no_response_sets_a_cookie() {
    let server = Server::start();
    let mut seen = Vec::new();
    let mut check = |resp: Response, expected: u16| {
        assert_eq!(resp.status, expected, "{}", resp.describe());
        resp.assert_no_cookie();
        seen.push(expected);
    };

    check(server.get("/api"), 200);
    let created = server.post_json("/api/polls", &valid_poll_json());
    let poll = Created::from_response(&created);
    check(created, 201);
    check(server.get(&poll.path()), 200);
    check(server.get_auth(&poll.results_path(), &poll.token), 200);
    check(server.get(&poll.results_path()), 401);
    check(server.get_auth(&poll.results_path(), "wrong"), 401);
    check(server.patch_json(&poll.id, &poll.token, &json!({"closed": true})), 200);
    check(server.patch_json(&poll.id, &poll.token, &json!({})), 422);
    check(server.post_json("/api/polls", &with(valid_poll_json(), "/lang", json!("xx"))), 422);
    check(server.post_bytes("/api/polls", Some("application/json"), b"{oops"), 400);
    check(server.post_bytes("/api/polls", Some("text/plain"), b"{}"), 415);
    check(server.post_bytes("/api/polls", Some("application/json"), &vec![b' '; BODY_LIMIT + 1]), 413);
    check(server.request("PUT", "/api/polls").send(), 405);
    check(server.get("/api/polls/AAAAAAAAAAAAAAAA"), 404);
    for _ in 0..10 {
        server.create_from("192.0.2.99", &valid_poll_json()).assert_status(201);
    }
    check(server.create_from("192.0.2.99", &valid_poll_json()), 429);
    check(server.delete(&poll.id, &poll.token), 204);

    // Web pages and anything else the server answers: whatever the status,
    // never a cookie.
    let other = server.create_default();
    for path in [
        "/".to_string(),
        format!("/p/{}", other.id),
        format!("/p/{}/results", other.id),
        format!("/p/{}/admin", other.id),
        "/no/such/page".to_string(),
    ] {
        server.get(&path).assert_no_cookie();
    }
    assert_eq!(seen.len(), 16);

    // A voter's own ballot through every step (issue 15), and a kept
    // picture's address: no cookie either, and neither the receipt nor the
    // voter's address in polld's output.
    let voter = "192.0.2.50";
    let thanks = server.vote_page(&other.id, &[("q0".into(), "0".into())], voter).unwrap();
    thanks.assert_status(200);
    thanks.assert_no_cookie();
    let receipt = shown_receipt(&thanks.text());
    let own = format!("/p/{}/ballot", other.id);
    server.request("GET", &own).xff(voter).send().assert_no_cookie();
    for (pairs, expected) in [
        (vec![("receipt", receipt.as_str()), ("action", "show")], 200),
        (vec![("receipt", receipt.as_str()), ("action", "change"), ("q0", "1")], 200),
        (vec![("receipt", receipt.as_str()), ("action", "change"), ("q0", "9")], 422),
        (vec![("receipt", receipt.as_str()), ("action", "confirm-withdraw")], 200),
        (vec![("receipt", receipt.as_str()), ("action", "withdraw")], 200),
        (vec![("receipt", receipt.as_str()), ("action", "show")], 403),
        (vec![("receipt", "not a receipt"), ("action", "show")], 403),
    ] {
        let resp = server.request("POST", &own).xff(voter).form(&pairs).send();
        assert_eq!(resp.status, expected, "{pairs:?}: {}", resp.describe());
        resp.assert_no_cookie();
    }
    server.get("/held/AAAAAAAAAAAAAAAAAAAAAA").assert_no_cookie();
    let logs = server.logs();
    let bare: String = receipt.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    for secret in [receipt.as_str(), &bare, &bare.to_lowercase(), voter] {
        assert!(!logs.contains(secret), "polld's output holds {secret:?}");
    }
}

// ===========================================================================
// Client IP addresses
// ===========================================================================

/// Exercise every kind of request from one client address.
fn traffic_from(server: &Server, xff: &str) {
    let mut polls = Vec::new();
    for _ in 0..10 {
        let resp = server.create_from(xff, &valid_poll_json());
        assert_eq!(resp.status, 201, "{}", resp.describe());
        polls.push(Created::from_response(&resp));
    }
    let resp = server.create_from(xff, &valid_poll_json());
    assert_eq!(resp.status, 429, "{}", resp.describe());
    let poll = &polls[0];
    server.record(&poll.id, &[Some(1), Some(0)]).unwrap();
    let send = |method: &str, path: &str| server.request(method, path).xff(xff);
    send("GET", "/api").send().assert_status(200);
    send("GET", &poll.path()).send().assert_status(200);
    send("GET", &poll.results_path()).send().assert_status(401);
    send("GET", &poll.results_path()).bearer(&poll.token).send().assert_status(200);
    send("PATCH", &poll.path())
        .bearer(&poll.token)
        .json(&json!({"translations": {"fr": valid_translation()}, "closed": true}))
        .send()
        .assert_status(200);
    send("PATCH", &poll.path()).bearer(&poll.token).json(&json!({"expiryDays": 3})).send().assert_status(422);
    send("GET", "/api/polls/AAAAAAAAAAAAAAAA").send().assert_status(404);
    send("POST", "/api/polls").header("Content-Type", "application/json").body(b"{broken".to_vec()).send();
    send("DELETE", &polls[1].path()).bearer(&polls[1].token).send().assert_status(204);
    send("GET", &format!("/p/{}", poll.id)).send();
}

fn assert_ip_absent(server: &Server, needles: &[(&str, Vec<u8>)]) {
    for (what, needle) in needles {
        assert_not_in_db(server.dir(), needle, what);
    }
}

fn assert_ip_not_logged(logs: &[u8], needles: &[(&str, Vec<u8>)]) {
    for (what, needle) in needles {
        assert!(!contains_bytes(logs, needle), "{what} found in polld output:\n{}", String::from_utf8_lossy(logs));
    }
}

#[test]
fn client_ipv4_is_never_stored_or_logged() {
    let mut server = Server::start();
    traffic_from(&server, IPV4);
    let db_needles: Vec<(&str, Vec<u8>)> = vec![
        ("IPv4 as text", IPV4.as_bytes().to_vec()),
        ("IPv4 as 4 raw bytes", IPV4_RAW.to_vec()),
        ("IPv4 as hex", hex(&IPV4_RAW).into_bytes()),
    ];
    assert_ip_absent(&server, &db_needles);
    server.terminate();
    assert_ip_absent(&server, &db_needles);
    assert_ip_not_logged(
        &server.log_bytes(),
        &[("IPv4 as text", IPV4.as_bytes().to_vec()), ("IPv4 /24 prefix", b"203.0.113.".to_vec())],
    );
}

#[test]
fn client_ipv6_is_never_stored_or_logged() {
    let mut server = Server::start();
    traffic_from(&server, IPV6);
    let db_needles: Vec<(&str, Vec<u8>)> = vec![
        ("IPv6 as text", IPV6.as_bytes().to_vec()),
        ("IPv6 /64 prefix as text", b"2001:db8:abcd:12".to_vec()),
        ("IPv6 /64 prefix upper-case", b"2001:DB8:ABCD:12".to_vec()),
        ("IPv6 expanded", b"2001:0db8:abcd:0012".to_vec()),
        ("IPv6 as 16 raw bytes", IPV6_RAW.to_vec()),
        ("IPv6 /64 as 8 raw bytes", IPV6_RAW[..8].to_vec()),
        ("IPv6 as hex", hex(&IPV6_RAW[..8]).into_bytes()),
    ];
    assert_ip_absent(&server, &db_needles);
    server.terminate();
    assert_ip_absent(&server, &db_needles);
    assert_ip_not_logged(
        &server.log_bytes(),
        &[
            ("IPv6 /64 prefix as text", b"2001:db8:abcd:12".to_vec()),
            ("IPv6 expanded", b"2001:0db8:abcd:0012".to_vec()),
            ("IPv6 upper-case", b"2001:DB8:ABCD:12".to_vec()),
        ],
    );
}

#[test]
fn forwarded_chain_entries_are_not_logged_either() {
    let mut server = Server::start();
    let chain = format!("198.51.100.231, {IPV4}");
    traffic_from(&server, &chain);
    assert_not_in_db(server.dir(), b"198.51.100.231", "first X-Forwarded-For entry");
    assert_not_in_db(server.dir(), IPV4.as_bytes(), "client IPv4");
    server.terminate();
    let logs = server.log_bytes();
    for needle in [&b"198.51.100.231"[..], IPV4.as_bytes()] {
        assert!(
            !contains_bytes(&logs, needle),
            "{} found in polld output:\n{}",
            String::from_utf8_lossy(needle),
            String::from_utf8_lossy(&logs)
        );
    }
}

#[test]
fn tcp_peer_address_is_not_stored() {
    // Loopback is not trusted here, so the client IP is the TCP peer.
    let server = Server::builder().trusted_proxy("10.255.255.255/32").start();
    let poll = server.create_default();
    server.get(&poll.path()).assert_status(200);
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
    for _ in 0..10 {
        server.request("POST", "/api/polls").json(&valid_poll_json()).send();
    }
    assert_not_in_db(server.dir(), b"127.0.0.1", "loopback peer address");
    assert_not_in_db(server.dir(), b"::ffff:127", "mapped peer address");
}

#[test]
fn schema_has_no_ip_or_timestamp_columns() {
    let server = Server::start();
    let poll = server.create_default();
    server.record(&poll.id, &[Some(0), None]).unwrap();
    let columns = db_columns(server.dir());
    let tables: std::collections::BTreeSet<&str> = columns.iter().map(|(t, _, _)| t.as_str()).collect();
    for t in ["keyring", "sealed_polls", "sealed_ballots", "poll_codes", "sealed_media"] {
        assert!(tables.contains(t), "table {t} missing: {tables:?}");
    }
    let forbidden = [
        "ip",
        "addr",
        "agent",
        "client",
        "remote",
        "host",
        "time",
        "_at",
        "cookie",
        "session",
        "fingerprint",
        "referer",
        "referrer",
        "hour",
        "minute",
        "second",
    ];
    for (table, col, kind) in &columns {
        let lower = col.to_ascii_lowercase();
        let bad = forbidden.iter().find(|f| {
            if **f == "ip" {
                lower == "ip" || lower.starts_with("ip_") || lower.ends_with("_ip")
            } else {
                lower.contains(*f)
            }
        });
        assert!(bad.is_none(), "suspicious column {table}.{col}");
        // No column keeps a time of day, whatever its name (PostgreSQL's
        // types say so; SQLite's values are checked by
        // stored_dates_are_days_only).
        let kind = kind.to_ascii_lowercase();
        assert!(!kind.contains("time") && !kind.contains("interval"), "{table}.{col} is of type {kind}");
    }
    let mut resp_cols: Vec<&str> =
        columns.iter().filter(|(t, _, _)| t == "sealed_ballots").map(|(_, c, _)| c.as_str()).collect();
    resp_cols.sort_unstable();
    assert_eq!(
        resp_cols,
        ["id", "poll_id", "sealed"],
        "ballots must hold nothing but poll, random key (for a ballot with a receipt, from the receipt's keyed \
         hash) and the sealed day and choices"
    );
    // A code's row is its keyed hash and its slot: nothing in it changes
    // when the code votes (the spent codes are bits of the sealed counts).
    let mut code_cols: Vec<&str> =
        columns.iter().filter(|(t, _, _)| t == "poll_codes").map(|(_, c, _)| c.as_str()).collect();
    code_cols.sort_unstable();
    assert_eq!(code_cols, ["mac", "poll_id", "slot"], "a code's row holds nothing a vote changes");
    // The key is random: 16 bytes that order the table by nothing else.
    let n =
        server.query_ints("SELECT count(*), sum(CASE WHEN length(id) = 16 THEN 1 ELSE 0 END) FROM sealed_ballots", &[]);
    assert!(n[0] > 0 && n[0] == n[1], "ballot keys of 16 bytes of all: {n:?}");
}

// ===========================================================================
// Dates with day precision
// ===========================================================================

#[test]
fn stored_dates_are_days_only() {
    let server = Server::start();
    let poll = server.create_default();
    server
        .patch_json(
            &poll.id,
            &poll.token,
            &json!({"translations": {"de": valid_translation()}, "expiryDays": 90, "closesOn": date_from_today(10)}),
        )
        .assert_status(200);
    server.record(&poll.id, &[Some(0), Some(1)]).unwrap();
    server.record(&poll.id, &[None, Some(0)]).unwrap();
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);

    let days = db_texts(server.dir(), "SELECT created_on, expires_on FROM sealed_polls WHERE id = ?1", &[&poll.id]);
    assert_eq!(days, [today(), date_from_today(90)]);
    // What is sealed, opened with the key file: days only as well.
    let audit = audit(server.dir());
    let doc = audit.document(&poll.id).unwrap();
    assert_eq!(doc["closes_on"], date_from_today(10), "the closing day is kept as a bare day");
    assert_json_days_only(&doc, "the sealed poll document");
    let cast: Vec<String> = audit.ballots(&poll.id).unwrap().iter().map(|b| b.day.to_string()).collect();
    assert_eq!(cast, [today(), today()]);
    let days: Vec<(String, u64)> =
        audit.tallies(&poll.id).unwrap().by_day.iter().map(|(d, n)| (d.to_string(), *n)).collect();
    assert_eq!(days, [(today(), 2)]);

    // Nothing anywhere carries a time of day or a timestamp.
    for (col, v) in db_values(server.dir()) {
        use rusqlite::types::Value as V;
        match v {
            V::Text(s) => {
                if contains_ymd(&s) {
                    assert!(is_ymd(&s), "{col} holds more than a date: {s:?}");
                }
                assert!(!contains_time_of_day(&s), "{col} holds a time: {s:?}");
            }
            V::Integer(n) => {
                let n = n.unsigned_abs();
                assert!(
                    !(946_684_800..4_102_444_800).contains(&n)
                        && !(946_684_800_000..4_102_444_800_000).contains(&n)
                        && !(946_684_800_000_000..4_102_444_800_000_000).contains(&n),
                    "{col} holds what looks like a timestamp: {n}"
                );
            }
            V::Real(f) => {
                assert!(
                    !(2_400_000.0..2_500_000.0).contains(&f) && !(946_684_800.0..4_102_444_800.0).contains(&f),
                    "{col} holds what looks like a julian day/timestamp: {f}"
                );
            }
            V::Null | V::Blob(_) => {}
        }
    }
}

fn assert_json_days_only(v: &Value, what: &str) {
    walk_strings(v, "", &mut |path, s| {
        if contains_ymd(s) {
            assert!(is_ymd(s), "{what}{path} holds more than a date: {s:?}");
        }
        assert!(!contains_time_of_day(s), "{what}{path} holds a time of day: {s:?}");
    });
    fn keys(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    out.push(k.clone());
                    keys(x, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    keys(v, &mut all);
    for k in all {
        let l = k.to_ascii_lowercase();
        assert!(!l.ends_with("at") || l == "format", "{what}: key {k} looks like a timestamp");
        assert!(!l.contains("time"), "{what}: key {k} looks like a timestamp");
    }
}

#[test]
fn json_dates_are_days_only() {
    let server = Server::start();
    let poll = server.create_public();
    server.record(&poll.id, &[Some(2), Some(1)]).unwrap();
    let p = server.get(&poll.path()).json();
    let r = server.get(&poll.results_path()).json();
    let patched = server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": 7})).json();
    assert_json_days_only(&poll.body, "creation");
    assert_json_days_only(&p, "poll");
    assert_json_days_only(&r, "results");
    assert_json_days_only(&patched, "patched poll");
    assert!(is_ymd(poll.body["expiresOn"].as_str().unwrap()));
    assert!(is_ymd(p["createdOn"].as_str().unwrap()));
    assert!(is_ymd(p["expiresOn"].as_str().unwrap()));
    assert!(is_ymd(patched["expiresOn"].as_str().unwrap()));
    let day = r["responsesByDay"][0]["date"].as_str().unwrap();
    assert!(is_ymd(day), "responsesByDay date {day:?}");
}

// ===========================================================================
// Admin tokens
// ===========================================================================

#[test]
fn token_is_stored_only_as_sha256() {
    let server = Server::start();
    let poll = server.create_default();
    // Sealed in the poll's document, as the hex of its SHA-256.
    let doc = audit(server.dir()).document(&poll.id).unwrap();
    let stored: Vec<u8> =
        (0..32).map(|i| u8::from_str_radix(&doc["token"].as_str().unwrap()[2 * i..2 * i + 2], 16).unwrap()).collect();
    let raw = base64url_decode(&poll.token).expect("token is base64url");
    // Reading: "SHA-256 of the adminToken" is the hash of the token string;
    // hashing the 32 decoded bytes is accepted as the same protection.
    assert!(
        stored == sha256(poll.token.as_bytes()) || stored == sha256(&raw),
        "token_sha256 {} is not SHA-256 of the token",
        hex(&stored)
    );
    assert_not_in_db(server.dir(), poll.token.as_bytes(), "admin token text");
    assert_not_in_db(server.dir(), &raw, "admin token raw bytes");
    assert_not_in_db(server.dir(), hex(&raw).as_bytes(), "admin token as hex");
    assert_not_in_db(server.dir(), hex(&stored).as_bytes(), "token hash as hex text, unsealed");
    assert_not_in_db(server.dir(), &stored, "token hash, unsealed");
}

#[test]
fn tokens_are_never_logged() {
    let mut server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
    server.get_auth(&poll.results_path(), &other.token).assert_status(401);
    server.patch_json(&poll.id, &other.token, &json!({"closed": true})).assert_status(401);
    server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": 1})).assert_status(422);
    server.delete(&other.id, &other.token).assert_status(204);
    server.terminate();
    let logs = server.logs();
    for token in [&poll.token, &other.token] {
        assert!(!logs.contains(token.as_str()), "token in polld output:\n{logs}");
    }
    assert!(!logs.contains("Bearer "), "Authorization header logged:\n{logs}");
}

#[test]
fn token_travels_only_in_the_url_fragment() {
    let server = Server::start();
    let poll = server.create_default();
    let b = &poll.body;
    for key in ["shareUrl", "resultsUrl"] {
        let url = b[key].as_str().unwrap();
        assert!(!url.contains(&poll.token), "{key} carries the token: {url}");
    }
    let admin = b["adminUrl"].as_str().unwrap();
    let (before, fragment) = admin.split_once('#').expect("adminUrl has a fragment");
    assert_eq!(fragment, poll.token);
    assert!(!before.contains(&poll.token) && !before.contains('?'), "{admin}");
    let location =
        server.post_json("/api/polls", &valid_poll_json()).header("location").unwrap_or_default().to_string();
    assert!(!location.contains('?'), "Location {location}");
    let public = server.get(&poll.path()).text();
    assert!(!public.contains(&poll.token));
}

// ===========================================================================
// Expiry
// ===========================================================================

/// Sets poll `id`'s stored expiry day to `days` from today.
fn set_expiry(server: &Server, id: &str, days: i64) {
    let n =
        server.exec_sql("UPDATE sealed_polls SET expires_on = ?1 WHERE id = ?2", [date_from_today(days).as_str(), id]);
    assert_eq!(n, 1, "poll row not found");
}

#[test]
fn poll_expiring_today_is_gone_at_once() {
    let server = Server::start();
    let poll = server.create_default();
    server.record(&poll.id, &[Some(0), Some(0)]).unwrap();
    server.get(&poll.path()).assert_status(200);
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);

    set_expiry(&server, &poll.id, 0);

    assert_problem(&server.get(&poll.path()), 404);
    assert_problem(&server.get(&poll.results_path()), 404);
    assert_problem(&server.get_auth(&poll.results_path(), &poll.token), 404);
    assert_problem(&server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": 730})), 404);
    assert_problem(&server.delete(&poll.id, &poll.token), 404);
    assert!(server.record(&poll.id, &[Some(1), Some(1)]).is_err(), "an expired poll accepted a response");
    // The PATCH above must not have revived it (its row is gone, or still
    // expires today).
    let revived =
        server.query_int("SELECT count(*) FROM sealed_polls WHERE id = ?1 AND expires_on != ?2", &[&poll.id, &today()]);
    assert_eq!(revived, 0, "the expired poll was given another expiry day");
}

#[test]
fn poll_expired_yesterday_is_gone() {
    let server = Server::start();
    let poll = server.create_public();
    set_expiry(&server, &poll.id, -1);
    assert_problem(&server.get(&poll.path()), 404);
    assert_problem(&server.get(&poll.results_path()), 404);
    assert_problem(&server.patch_json(&poll.id, &poll.token, &json!({"closed": true})), 404);
    assert_problem(&server.delete(&poll.id, &poll.token), 404);
}

#[test]
fn poll_expiring_tomorrow_is_still_visible() {
    let server = Server::start();
    let poll = server.create_public();
    set_expiry(&server, &poll.id, 1);
    let p = server.get(&poll.path());
    p.assert_status(200);
    assert_eq!(p.json()["expiresOn"], date_from_today(1));
    server.get(&poll.results_path()).assert_status(200);
    server.record(&poll.id, &[Some(0), None]).unwrap();
}

// ===========================================================================
// Hard delete
// ===========================================================================

#[test]
fn delete_erases_every_byte_of_the_poll() {
    let server = Server::start();
    let title = unique_marker("Title");
    let label = unique_marker("Label");
    let opt_a = unique_marker("OptA");
    let opt_b = unique_marker("OptB");
    let tr_title = unique_marker("TrTitle");
    let tr_opt = unique_marker("TrOpt");
    let mut body = valid_poll_json();
    body["title"] = json!(title);
    body["questions"][0]["label"] = json!(label);
    body["questions"][0]["options"] = json!([opt_a, opt_b, "Plain"]);
    let poll = server.create_poll(&body);
    let mut tr = valid_translation();
    tr["title"] = json!(tr_title);
    tr["questions"][1]["options"][0] = json!(tr_opt);
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": tr}})).assert_status(200);
    server.record(&poll.id, &[Some(0), Some(1)]).unwrap();
    server.record(&poll.id, &[Some(1), None]).unwrap();

    let keep_title = unique_marker("Keep");
    let keep = server.create_poll(&with(valid_poll_json(), "/title", json!(keep_title)));

    // The text is sealed: in no file even while the poll lives. What the
    // files hold of the poll are its sealed values, each erased with it.
    let markers = [&title, &label, &opt_a, &opt_b, &tr_title, &tr_opt];
    for m in markers {
        assert_not_in_db(server.dir(), m.as_bytes(), "poll text, unsealed");
    }
    let sealed = sealed_values_of(&server, &poll.id);
    assert!(sealed.len() >= 5, "the poll's document, counts, key and ballots");
    for v in &sealed {
        assert_in_db(server.dir(), v, "a sealed value before delete");
    }
    assert_in_db(server.dir(), poll.id.as_bytes(), "the poll's id before delete");

    server.delete(&poll.id, &poll.token).assert_status(204);

    for m in markers {
        assert_not_in_db(server.dir(), m.as_bytes(), "deleted poll text");
    }
    if erasure_overwrites_sealed_bytes() {
        for v in &sealed {
            assert_not_in_db(server.dir(), v, "a deleted poll's sealed value");
        }
        assert_not_in_db(server.dir(), poll.id.as_bytes(), "a deleted poll's id");
    }
    assert_not_in_db(server.dir(), &sha256(poll.token.as_bytes()), "deleted token hash");
    let raw_token = base64url_decode(&poll.token).unwrap();
    assert_not_in_db(server.dir(), &sha256(&raw_token), "deleted token hash");
    for v in sealed_values_of(&server, &keep.id) {
        assert_in_db(server.dir(), &v, "the other poll's sealed values");
    }

    for table in ["sealed_ballots", "poll_codes", "sealed_media"] {
        let n = server.query_int(&format!("SELECT count(*) FROM {table} WHERE poll_id = ?1"), &[&poll.id]);
        assert_eq!(n, 0, "{table} still has rows of the deleted poll");
    }
    let n = server.query_int("SELECT count(*) FROM sealed_polls WHERE id = ?1", &[&poll.id]);
    assert_eq!(n, 0, "polls row survived DELETE");
    server.get(&keep.path()).assert_status(200);
}

#[test]
fn delete_erases_bytes_even_after_restart() {
    let server = Server::start();
    let title = unique_marker("Restart");
    let poll = server.create_poll(&with(valid_poll_json(), "/title", json!(title)));
    server.record(&poll.id, &[Some(2), Some(0)]).unwrap();
    let sealed = sealed_values_of(&server, &poll.id);
    server.delete(&poll.id, &poll.token).assert_status(204);
    let dir = server.into_dir();
    assert_not_in_db(dir.path(), title.as_bytes(), "deleted title after shutdown");
    for v in sealed.iter().filter(|_| erasure_overwrites_sealed_bytes()) {
        assert_not_in_db(dir.path(), v, "a deleted poll's sealed value after shutdown");
    }
    let server = Server::builder().in_dir(dir).start();
    assert_problem(&server.get(&poll.path()), 404);
    assert_not_in_db(server.dir(), title.as_bytes(), "deleted title after restart");
}

/// Every sealed value of poll `id` as it lies in the files: its document,
/// counts and wrapped key, and each ballot.
/// A schedule's slots are poll content: sealed like labels while the poll
/// lives (no slot, no day-and-time, in any file), kept as written in the
/// sealed document (the day rule is about the poll's own events: docs/
/// PRIVACY.md), and erased with the poll. The answers per slot are sealed
/// in the ballot and the counts like any other answer.
#[test]
fn a_schedules_slots_are_sealed_like_labels_and_erased_with_the_poll() {
    let server = Server::start();
    // Days and times no other test writes.
    let slots = ["2031-07-19T07:43", "2031-07-20T19:17", "2031-07-22"];
    let mut body = valid_poll_json();
    body["questions"] =
        json!([{"type": "schedule", "label": "When?", "options": slots, "timeZone": "Pacific/Chatham"}]);
    let poll = server.create_poll(&body);
    let fields = [("q0s0", "yes"), ("q0s1", "ifneedbe")].map(|(k, v)| (k.to_owned(), v.to_owned()));
    server.vote_fields(&poll.id, &fields, &Server::fresh_client_ip()).unwrap();
    let doc = audit(server.dir()).document(&poll.id).unwrap();
    assert_eq!(doc["questions"][0]["options"], json!(slots), "the slots as written, in the sealed document");
    let needles = slots.iter().map(|s| s.as_bytes().to_vec()).chain([b"T07:43".to_vec(), b"Pacific/Chatham".to_vec()]);
    let needles: Vec<Vec<u8>> = needles.collect();
    for n in &needles {
        assert_not_in_db(server.dir(), n, "a slot or its zone, unsealed");
    }
    let sealed = sealed_values_of(&server, &poll.id);
    server.delete(&poll.id, &poll.token).assert_status(204);
    for n in &needles {
        assert_not_in_db(server.dir(), n, "a deleted schedule's slot");
    }
    for v in sealed.iter().filter(|_| erasure_overwrites_sealed_bytes()) {
        assert_not_in_db(server.dir(), v, "a deleted schedule's sealed value");
    }
}

fn sealed_values_of(server: &Server, id: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = ["body", "tallies", "data_key"]
        .iter()
        .map(|col| db_blob(server.dir(), &format!("SELECT {col} FROM sealed_polls WHERE id = ?1"), &[id]))
        .collect();
    out.extend(audit(server.dir()).ballots(id).unwrap().into_iter().map(|b| b.sealed));
    out
}

// ===========================================================================
// Responses and results
// ===========================================================================

fn three_question_poll(public: bool) -> Value {
    json!({
        "title": "Counting",
        "lang": "fr",
        "expiryDays": 7,
        "resultsPublic": public,
        "questions": [
            {"type": "single", "label": "Q0", "options": ["A", "B", "C"]},
            {"type": "single", "label": "Q1", "options": ["X", "Y"]},
            {"type": "single", "label": "Q2", "options": ["P", "Q"]}
        ]
    })
}

fn option_stats(results: &Value, q: usize) -> Vec<(String, u64, f64)> {
    results["questions"][q]["options"]
        .as_array()
        .unwrap_or_else(|| panic!("no options for question {q} in {results}"))
        .iter()
        .map(|o| {
            (o["label"].as_str().unwrap().to_string(), o["count"].as_u64().unwrap(), o["percent"].as_f64().unwrap())
        })
        .collect()
}

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn recorded_responses_are_counted() {
    let server = Server::start();
    let poll = server.create_poll(&three_question_poll(false));
    server.record(&poll.id, &[Some(0), Some(1), None]).unwrap();
    server.record(&poll.id, &[Some(0), None, None]).unwrap();
    server.record(&poll.id, &[Some(2), Some(1), None]).unwrap();

    let resp = server.get_auth(&poll.results_path(), &poll.token);
    resp.assert_status(200);
    let r = resp.json();
    assert_eq!(r["id"], poll.id.as_str());
    assert_eq!(r["status"], "open");
    assert_eq!(r["totalResponses"], 3);
    assert_eq!(r["responsesByDay"], json!([{"date": today(), "count": 3}]));
    let qs = r["questions"].as_array().unwrap();
    assert_eq!(qs.len(), 3);
    assert_eq!(qs[0]["label"], "Q0");
    assert_eq!(qs[0]["type"], "single");
    assert_eq!(qs[0]["answered"], 3);
    assert_eq!(qs[1]["answered"], 2);
    assert_eq!(qs[2]["answered"], 0);

    let expect = [
        vec![("A", 2, 66.7), ("B", 0, 0.0), ("C", 1, 33.3)],
        vec![("X", 0, 0.0), ("Y", 2, 100.0)],
        vec![("P", 0, 0.0), ("Q", 0, 0.0)],
    ];
    for (q, exp) in expect.iter().enumerate() {
        let got = option_stats(&r, q);
        assert_eq!(got.len(), exp.len(), "question {q}: {got:?}");
        for ((label, count, pct), (el, ec, ep)) in got.iter().zip(exp) {
            assert_eq!(label, el, "question {q}");
            assert_eq!(count, ec, "question {q} option {label}");
            assert!(approx(*pct, *ep), "question {q} option {label}: {pct} != {ep}");
        }
    }

    // Stored as they were counted: the sealed counts and ballots agree.
    let audit = audit(server.dir());
    let t = audit.tallies(&poll.id).unwrap();
    assert_eq!(t.total, 3);
    assert_eq!(t.by_day.iter().map(|(d, n)| (d.to_string(), *n)).collect::<Vec<_>>(), [(today(), 3)]);
    assert_eq!(audit.ballots(&poll.id).unwrap().len(), 3);
}

#[test]
fn percent_has_one_decimal() {
    let server = Server::start();
    let poll = server.create_poll(&three_question_poll(true));
    let votes: [[Option<usize>; 3]; 7] = [
        [Some(0), Some(0), Some(1)],
        [Some(0), Some(1), None],
        [Some(0), Some(1), None],
        [Some(0), Some(1), None],
        [Some(0), Some(1), None],
        [Some(1), Some(1), None],
        [Some(2), None, None],
    ];
    for v in &votes {
        server.record(&poll.id, v).unwrap();
    }
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 7);
    let q0 = option_stats(&r, 0);
    let q1 = option_stats(&r, 1);
    let q2 = option_stats(&r, 2);
    assert_eq!((q0[0].1, q0[1].1, q0[2].1), (5, 1, 1));
    assert!(approx(q0[0].2, 71.4), "5/7 → {}", q0[0].2);
    assert!(approx(q0[1].2, 14.3), "1/7 → {}", q0[1].2);
    assert!(approx(q0[2].2, 14.3), "1/7 → {}", q0[2].2);
    assert_eq!(r["questions"][1]["answered"], 6);
    assert!(approx(q1[0].2, 16.7), "1/6 → {}", q1[0].2);
    assert!(approx(q1[1].2, 83.3), "5/6 → {}", q1[1].2);
    assert_eq!(r["questions"][2]["answered"], 1);
    assert!(approx(q2[0].2, 0.0) && approx(q2[1].2, 100.0), "{q2:?}");
}

#[test]
fn store_rejects_invalid_responses() {
    let server = Server::start();
    let poll = server.create_poll(&three_question_poll(true));
    let bad: [&[Option<usize>]; 5] = [
        &[Some(3), None, None],
        &[None, Some(2), None],
        &[Some(0), Some(0)],
        &[Some(0), Some(0), Some(0), Some(0)],
        &[],
    ];
    for choices in bad {
        assert!(server.record(&poll.id, choices).is_err(), "accepted invalid choices {choices:?}");
    }
    assert!(server.record("AAAAAAAAAAAAAAAA", &[Some(0)]).is_err());
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert!(server.record(&poll.id, &[Some(0), Some(0), Some(0)]).is_err(), "a closed poll accepted a response");
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 0);
    assert_eq!(r["responsesByDay"], json!([]));
    server.patch_json(&poll.id, &poll.token, &json!({"closed": false})).assert_status(200);
    server.record(&poll.id, &[Some(0), Some(0), Some(0)]).unwrap();
    assert_eq!(server.get(&poll.results_path()).json()["totalResponses"], 1);
}

#[test]
fn private_counts_do_not_leak_without_token() {
    let server = Server::start();
    let poll = server.create_poll(&three_question_poll(false));
    for _ in 0..3 {
        server.record(&poll.id, &[Some(1), Some(0), None]).unwrap();
    }
    let public = server.get(&poll.path());
    public.assert_status(200);
    let text = public.text();
    for key in ["totalResponses", "\"count\"", "answered", "percent", "responsesByDay"] {
        assert!(!text.contains(key), "public poll exposes {key}: {text}");
    }
    let denied = server.get(&poll.results_path());
    assert_eq!(denied.status, 401, "{}", denied.describe());
    let text = denied.text();
    for key in ["totalResponses", "answered", "percent"] {
        assert!(!text.contains(key), "401 body exposes {key}: {text}");
    }
}

// ===========================================================================
// The order of ballots (issue 13, item 5)
// ===========================================================================

/// The choices of ballot `i` (0-999): its three digits, one per question.
fn digits(i: usize) -> [usize; 3] {
    [i / 100, i / 10 % 10, i % 10]
}

/// The sealed bytes of ballots 0..n of `poll` (ballot `i` cast with
/// [`digits`]), read with the key file as an attacker holding both would:
/// where those bytes lie in a file is where the ballot lies.
fn sealed_ballots(dir: &std::path::Path, poll: &str, n: usize) -> Vec<Vec<u8>> {
    let by_choices: std::collections::BTreeMap<String, Vec<u8>> =
        audit(dir).ballots(poll).unwrap().into_iter().map(|b| (b.choices, b.sealed)).collect();
    (0..n)
        .map(|i| {
            let [a, b, c] = digits(i);
            by_choices.get(&format!("[{a},{b},{c}]")).cloned().unwrap_or_else(|| panic!("ballot {i} is not stored"))
        })
        .collect()
}

/// Where ballot `i` first appears in `bytes`.
fn ballot_at(bytes: &[u8], sealed: &[Vec<u8>], i: usize) -> Option<usize> {
    find_bytes(bytes, &sealed[i])
}

/// Fails if the places of ballots 0..n in any database file follow the order
/// they were cast in: over the whole file (Spearman's rho; random places give
/// |rho| < 0.3 at n = 300 with probability 1 - 2e-7, cast order about 0.9),
/// or within the pages (sum over pages of (m - 1) rho^2, about chi-squared
/// with one degree per page if places are random; cast order gives about
/// m - 1 per page).
fn assert_no_cast_order(dir: &std::path::Path, poll: &str, n: usize) {
    let sealed = sealed_ballots(dir, poll, n);
    let mut seen = 0;
    for (name, bytes) in db_files(dir) {
        let places: Vec<Option<usize>> = (0..n).map(|i| ballot_at(&bytes, &sealed, i)).collect();
        let found: Vec<(usize, usize)> = places.iter().enumerate().filter_map(|(i, p)| p.map(|p| (i, p))).collect();
        if found.is_empty() {
            continue;
        }
        // The WAL keeps frames in commit order; the writer empties it once idle.
        assert_eq!(name, DB_NAME, "{name} still holds {} ballots after the writer went idle", found.len());
        seen += 1;
        assert_eq!(found.len(), n, "every ballot is in {name}");
        let rho = hostile::rank_correlation(&found.iter().map(|(_, p)| *p).collect::<Vec<_>>());
        let mut pages: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (_, p) in &found {
            pages.entry(p / 4096).or_default().push(*p);
        }
        let (mut chi2, mut k) = (0.0, 0);
        for places in pages.values().filter(|v| v.len() >= 20) {
            let r = hostile::rank_correlation(places);
            chi2 += (places.len() as f64 - 1.0) * r * r;
            k += 1;
        }
        let bound = k as f64 + 8.0 * (2.0 * k as f64).sqrt() + 20.0;
        eprintln!(
            "{name}: {n} ballots, rank correlation of place with cast order {rho:.3}; within {k} pages \
             chi2 {chi2:.1} (bound {bound:.1})"
        );
        assert!(rho.abs() < 0.3, "{name}: ballots lie in the order they were cast (rho {rho:.3})");
        assert!(k >= 2, "{name}: expected the ballots to fill several pages");
        assert!(chi2 < bound, "{name}: within pages, ballots lie in cast order (chi2 {chi2:.1} over {k} pages)");
    }
    assert!(seen > 0, "no ballot found in any file");
}

/// Waits (up to 5 s) until polld's writer has gone idle and emptied the WAL.
/// The writer mixes a poll's ballots soon after they are stored (at its
/// next idle moment, `MIX_EVERY` at the latest) and SQLite's writer then
/// empties the WAL: where each ballot lies in the file follows its new
/// random key alone. This test reads SQLite's pages; its PostgreSQL twin,
/// by `xmin` and `ctid`, is
/// `on_postgres_nothing_at_rest_pairs_an_invite_code_or_a_vote_form_with_its_ballot`.
#[test]
fn the_database_files_do_not_keep_the_order_ballots_were_cast_in() {
    if sqlite_only("the writer's mix and SQLite's pages") {
        return;
    }
    const N: usize = 300;
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"] = questions(3, 10);
    let poll = server.create_poll(&body);
    for i in 0..N {
        let [a, b, c] = digits(i);
        server.vote(&poll.id, &[Some(a), Some(b), Some(c)], &Server::fresh_client_ip()).unwrap();
    }
    wait_for_mix(server.dir());
    assert_no_cast_order(server.dir(), &poll.id, N);
    // One more ballot: now only the rows around it are rewritten. Every
    // ballot is still there once, and counted.
    server.vote(&poll.id, &[Some(9), Some(9), Some(9)], &Server::fresh_client_ip()).unwrap();
    wait_for_mix(server.dir());
    let stored: Vec<String> = audit(server.dir()).ballots(&poll.id).unwrap().into_iter().map(|b| b.choices).collect();
    let distinct: std::collections::BTreeSet<&String> = stored.iter().collect();
    assert_eq!((stored.len(), distinct.len()), (N + 1, N + 1), "every ballot stored once");
    let results = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(results["totalResponses"], N + 1);
}

/// An upgrade of a SQLite database from before encryption; a PostgreSQL
/// database starts sealed (sql/postgres/001_init.sql).
#[test]
fn ballots_stored_before_the_upgrade_lose_their_order_too() {
    if sqlite_only("the upgrade of a SQLite database of an earlier release") {
        return;
    }
    const N: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(DB_NAME);
    let day = today();
    {
        // A database as the previous release left it (schema version 2).
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA secure_delete = ON;").unwrap();
        conn.execute_batch(include_str!("../../sql/001_init.sql")).unwrap();
        conn.execute_batch(include_str!("../../sql/002_media.sql")).unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
        let question =
            json!({"type": "single", "label": "q", "options": (0..10).map(|o| o.to_string()).collect::<Vec<_>>()});
        conn.execute(
            "INSERT INTO polls (id, token_sha256, title, lang, results_public, created_on, expires_on, questions)
             VALUES ('UPGRADEDPOLL0001', randomblob(32), 't', 'en', 1, ?1, ?2, ?3)",
            rusqlite::params![day, date_from_today(30), json!([question, question, question]).to_string()],
        )
        .unwrap();
        for i in 0..N {
            let [a, b, c] = digits(i);
            conn.execute(
                "INSERT INTO responses (poll_id, cast_on, choices) VALUES ('UPGRADEDPOLL0001', ?1, ?2)",
                rusqlite::params![day, format!("[{a},{b},{c}]")],
            )
            .unwrap();
        }
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    }
    // Opening it with this release migrates it (sealing every poll under a
    // new key file beside it) and truncates the WAL.
    drop(open_store(&db).unwrap());
    assert_no_cast_order(dir.path(), "UPGRADEDPOLL0001", N);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, N as i64);
}

// ===========================================================================
// Invite codes and the ballots they cast (issue 15)
// ===========================================================================

/// SHA-256 of an invite code: its 20 letters, without hyphens. Stored only
/// keyed under its poll's key ([`code_macs`]).
fn code_hash(code: &str) -> Vec<u8> {
    sha256(code.replace('-', "").as_bytes())
}

/// What the rows of `codes` of `poll` are keyed by (their hashes keyed
/// under the poll's key), read with the key file.
fn code_macs(server: &Server, poll: &str, codes: &[String]) -> Vec<Vec<u8>> {
    let audit = audit(server.dir());
    codes
        .iter()
        .map(|c| {
            let hash = anonpoll::secret::InviteCode::parse(c).unwrap().hash();
            assert_eq!(hash.0.to_vec(), code_hash(c), "a code's hash is the SHA-256 of its letters");
            audit.invite_mac(poll, &hash).unwrap().to_vec()
        })
        .collect()
}

/// Issues `n` codes on `poll` (in calls of at most 1,000), in the order
/// the API gave them.
fn issue_codes(server: &Server, poll: &Created, n: usize) -> Vec<String> {
    let mut codes = Vec::new();
    while codes.len() < n {
        let count = (n - codes.len()).min(1000);
        let resp = server
            .request("POST", &format!("/api/polls/{}/invites", poll.id))
            .bearer(&poll.token)
            .json(&json!({"count": count}))
            .send();
        resp.assert_status(201);
        codes.extend(resp.json()["invites"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap().to_owned()));
    }
    codes
}

/// Every place `needle` occurs at in `hay`.
fn places_of(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = find_bytes(&hay[from..], needle) {
        out.push(from + p);
        from += p + 1;
    }
    out
}

/// Spearman's rank correlation between `xs` and `ys` (each distinct).
fn rho_between(xs: &[usize], ys: &[usize]) -> f64 {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by_key(|&i| xs[i]);
    hostile::rank_correlation(&order.iter().map(|&i| ys[i]).collect::<Vec<_>>())
}

/// For each item, its rank among `places` (0 = first in the file).
fn ranks(places: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..places.len()).collect();
    order.sort_by_key(|&i| places[i]);
    let mut rank = vec![0; places.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    rank
}

/// The pairing attack of issue 15: 300 codes (of 400 issued) each cast one
/// known ballot, in the order the codes were issued, every ballot's choices
/// telling which one it is (as in the cast-order test above). Once the
/// writer has mixed the ballots and emptied the WAL, the raw database file
/// holds each used code's hash and each ballot at places an attacker can
/// read; pairing them by place must do no better than chance. A store that
/// kept codes in issue order (a rowid) and ballots in cast order fails
/// every check below (|rho| about 1, 300 pairs right).
///
/// SQLite only: its places are those of SQLite's file and WAL index, and
/// the mix is SQLite's writer's. PostgreSQL writes a batch's ballots and
/// invite rows in one transaction in shuffled order, and has no mix after
/// (docs/PRIVACY.md); nothing there is in clear (tests/operations/several_nodes.rs).
#[test]
fn nothing_stored_or_answered_pairs_an_invite_code_with_its_ballot() {
    if sqlite_only("the writer's mix, SQLite's pages and its WAL index") {
        return;
    }
    const N: usize = 300;
    const UNUSED: usize = 100;
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"] = questions(3, 10);
    body["duplicateCheck"] = json!("invite");
    let poll = server.create_poll(&body);
    let codes = issue_codes(&server, &poll, N + UNUSED);
    let day = today();
    // voteChanges is on (the default): each ballot also gets a receipt.
    let mut thanks = Vec::new();
    for (i, code) in codes[..N].iter().enumerate() {
        let [a, b, c] = digits(i);
        let fields: Vec<(String, String)> = vec![
            ("q0".into(), a.to_string()),
            ("q1".into(), b.to_string()),
            ("q2".into(), c.to_string()),
            ("invite".into(), code.clone()),
        ];
        thanks.push(cast(&server, &poll.id, &fields, &Server::fresh_client_ip()));
    }
    wait_for_mix(server.dir());
    // The attacker of the audit (issue 24): a copy of the database, its WAL
    // and its WAL index (-shm) at rest, and (stronger) the key file too,
    // to read every row in clear.
    let copy = tempfile::tempdir().unwrap();
    for (name, bytes) in db_files(server.dir()) {
        std::fs::write(copy.path().join(&name), bytes).unwrap();
    }
    std::fs::create_dir_all(keys_path(copy.path()).parent().unwrap()).unwrap();
    std::fs::copy(keys_path(server.dir()), keys_path(copy.path())).unwrap();
    let at_rest = copy.path();
    assert_no_cast_order(at_rest, &poll.id, N);
    // The WAL index lists no frame: no commit's pages (a code's beside a
    // vote's) are left in order.
    let shm = std::fs::read(at_rest.join(format!("{DB_NAME}-shm"))).unwrap_or_default();
    let listed = wal_index_pages(&shm);
    assert!(listed.len() <= 1, "the -shm file lists {} frames of the last commits: {listed:?}", listed.len());
    // There is no counter row to read a vote's choices from: one sealed
    // value per poll holds all its counts.
    let tables: Vec<String> = server
        .sql()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%tall%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(tables.is_empty(), "counter tables: {tables:?}");
    let audit = audit(at_rest);
    // Ballot i's key, which its receipt's keyed hash gives, read as an
    // attacker with the database and the key file would.
    let receipt_hashes: Vec<Vec<u8>> = {
        let by_choices: std::collections::BTreeMap<String, Vec<u8>> =
            audit.ballots(&poll.id).unwrap().into_iter().map(|b| (b.choices, b.key)).collect();
        (0..N)
            .map(|i| {
                let [a, b, c] = digits(i);
                by_choices[&format!("[{a},{b},{c}]")].clone()
            })
            .collect()
    };
    let distinct: std::collections::BTreeSet<&Vec<u8>> = receipt_hashes.iter().collect();
    assert_eq!(distinct.len(), N, "every ballot has a receipt of its own");

    // Each code's row, found by its keyed hash (which the key file gives).
    let hashes: Vec<Vec<u8>> = codes
        .iter()
        .map(|c| audit.invite_mac(&poll.id, &anonpoll::secret::InviteCode::parse(c).unwrap().hash()).unwrap().to_vec())
        .collect();
    let sealed = sealed_ballots(at_rest, &poll.id, N);
    let mut seen = 0;
    for (name, bytes) in db_files(at_rest) {
        let code_places: Vec<Vec<usize>> = hashes.iter().map(|h| places_of(&bytes, h)).collect();
        let ballot_place: Vec<Option<usize>> = (0..N).map(|i| ballot_at(&bytes, &sealed, i)).collect();
        let receipt_places: Vec<Vec<usize>> = receipt_hashes.iter().map(|h| places_of(&bytes, h)).collect();
        if code_places.iter().all(Vec::is_empty)
            && ballot_place.iter().all(Option::is_none)
            && receipt_places.iter().all(Vec::is_empty)
        {
            continue;
        }
        assert_eq!(name, DB_NAME, "{name} still holds codes or ballots after the writer went idle");
        seen += 1;
        assert!(code_places.iter().all(|p| !p.is_empty()), "every code's hash is stored");
        assert!(receipt_places.iter().all(|p| !p.is_empty()), "every receipt's hash is stored");
        let ballot_place: Vec<usize> = ballot_place.into_iter().map(|p| p.expect("every ballot is stored")).collect();
        // A hash stored twice (a table and an index of it) is judged at
        // both places: the first copy in the file and the last.
        // Places are read two ways: as byte offsets, and in SQLite's cell
        // order (page by page, and within a page from its end, where
        // cells appended one after another lie in descending offsets).
        let page_size: usize = server.sql().query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0)).unwrap() as usize;
        // Plain SHA-256 of a code is in no file: only its keyed hash.
        for c in &codes {
            assert!(find_bytes(&bytes, &code_hash(c)).is_none(), "{name} holds a code's plain hash");
        }
        let cell_order = |p: usize| p / page_size * page_size + (page_size - 1 - p % page_size);
        let readings = [("offset", &(|p: usize| p) as &dyn Fn(usize) -> usize), ("cell order", &cell_order)];
        for (copy, code_at) in [
            ("first", code_places.iter().map(|p| p[0]).collect::<Vec<_>>()),
            ("last", code_places.iter().map(|p| p[p.len() - 1]).collect::<Vec<_>>()),
        ] {
            for (reading, f) in readings {
                let code_at: Vec<usize> = code_at.iter().map(|&p| f(p)).collect();
                let ballot_place: Vec<usize> = ballot_place.iter().map(|&p| f(p)).collect();
                let used_at = &code_at[..N];
                // 1. The used codes' rows do not follow the order they were used in
                //    (random places: |rho| < 0.3 with probability 1 - 2e-7 at 300).
                let vote_order: Vec<usize> = (0..N).collect();
                let rho_order = rho_between(&vote_order, used_at);
                // 2. A code's row and its ballot's row are not placed alike.
                let rho_pair = rho_between(used_at, &ballot_place);
                // 3. Pairing the k-th used code with the k-th ballot (both by place)
                //    gets about one pair right by chance (a random permutation's
                //    fixed points: Poisson(1), P(>= 8) < 1e-5).
                let (code_rank, ballot_rank) = (ranks(used_at), ranks(&ballot_place));
                let right = (0..N).filter(|&i| code_rank[i] == ballot_rank[i]).count();
                // ... and so does pairing within 5 ranks of each other (chance: 11
                //    of 300 per code, about 11 in all; 40 is far beyond).
                let near = (0..N).filter(|&i| code_rank[i].abs_diff(ballot_rank[i]) <= 5).count();
                eprintln!(
                    "{name} ({copy} copy of each hash, {reading}): {N} used codes of {}; rho(code place, use order) {rho_order:.3}, \
             rho(code place, ballot place) {rho_pair:.3}; pairs right by rank {right}, within 5 ranks {near}",
                    codes.len()
                );
                assert!(rho_order.abs() < 0.3, "used codes lie in the order they were used (rho {rho_order:.3})");
                assert!(rho_pair.abs() < 0.3, "codes and their ballots lie alike (rho {rho_pair:.3})");
                assert!(right < 8, "pairing by place finds {right} of {N} code-ballot pairs");
                assert!(near < 40, "pairing by nearby place finds {near} of {N} code-ballot pairs");
                // 4. Used and unused codes are not told apart by place either: the
                //    used ones' mean rank among all codes is that of a random 300.
                let all_rank = ranks(&code_at);
                let mean_used = all_rank[..N].iter().sum::<usize>() as f64 / N as f64;
                let expected = (codes.len() - 1) as f64 / 2.0;
                // Standard deviation of the mean of 300 of 400 ranks drawn without
                // replacement: about 3.3; 6 of them is 20.
                assert!(
                    (mean_used - expected).abs() < 20.0,
                    "used codes cluster: mean rank {mean_used:.1} vs {expected:.1}"
                );
                // 5. Receipts: the hash lies beside its ballot (by design),
                //    and in an index ordered by the hash. Neither copy lies in
                //    the order of use, nor pairs with the code that cast it.
                for (receipt_copy, receipt_at) in [
                    ("first", receipt_places.iter().map(|p| f(p[0])).collect::<Vec<_>>()),
                    ("last", receipt_places.iter().map(|p| f(p[p.len() - 1])).collect::<Vec<_>>()),
                ] {
                    let rho_order = rho_between(&vote_order, &receipt_at);
                    let rho_pair = rho_between(used_at, &receipt_at);
                    let (code_rank, receipt_rank) = (ranks(used_at), ranks(&receipt_at));
                    let right = (0..N).filter(|&i| code_rank[i] == receipt_rank[i]).count();
                    let near = (0..N).filter(|&i| code_rank[i].abs_diff(receipt_rank[i]) <= 5).count();
                    eprintln!(
                        "{name} ({copy} code hash, {receipt_copy} receipt hash, {reading}): rho(receipt place, use order) \
                         {rho_order:.3}, rho(code place, receipt place) {rho_pair:.3}; pairs right {right}, within 5 {near}"
                    );
                    assert!(rho_order.abs() < 0.3, "receipt hashes lie in the order of the votes (rho {rho_order:.3})");
                    assert!(rho_pair.abs() < 0.3, "codes and their ballots' receipts lie alike (rho {rho_pair:.3})");
                    assert!(right < 8, "pairing by place finds {right} of {N} code-receipt pairs");
                    assert!(near < 40, "pairing by nearby place finds {near} of {N} code-receipt pairs");
                }
            }
        }
    }
    assert_eq!(seen, 1, "the codes, ballots and receipt hashes are in the database file");

    // The ballot rows hold nothing derived from a code, even in clear: no
    // 8 bytes of any code's hash or keyed hash, and never the code.
    let rows: Vec<Vec<u8>> = audit
        .ballots(&poll.id)
        .unwrap()
        .into_iter()
        .map(|b| [b.key, b.sealed, b.day.to_string().into_bytes(), b.choices.into_bytes()].concat())
        .collect();
    assert_eq!(rows.len(), N);
    for h in hashes.iter().chain(codes.iter().map(|c| code_hash(c)).collect::<Vec<_>>().iter()) {
        for w in h.windows(8) {
            assert!(!rows.iter().any(|r| contains_bytes(r, w)), "a ballot row holds part of a code's hash");
        }
    }
    // ... nor does a code's row hold anything of a receipt's hash.
    let invite_rows: Vec<Vec<u8>> = audit
        .invites(&poll.id)
        .unwrap()
        .into_iter()
        .map(|c| [c.mac.to_vec(), vec![u8::from(c.used)]].concat())
        .collect();
    assert_eq!(invite_rows.len(), N + UNUSED);
    for h in &receipt_hashes {
        for w in h.windows(8) {
            assert!(!invite_rows.iter().any(|r| contains_bytes(r, w)), "a code's row holds part of a receipt's hash");
        }
    }

    // No API answer tells more: counts only, no code, no hash, no list as
    // long as the ballots.
    let status = server.get_auth(&format!("/api/polls/{}/invites", poll.id), &poll.token).json();
    assert_eq!(status, json!({"issued": N + UNUSED, "used": N}));
    let answers = [server.get(&poll.path()).json(), server.get_auth(&poll.results_path(), &poll.token).json(), status];
    fn longest_list(v: &Value) -> usize {
        match v {
            Value::Array(a) => a.iter().map(longest_list).max().unwrap_or(0).max(a.len()),
            Value::Object(m) => m.values().map(longest_list).max().unwrap_or(0),
            _ => 0,
        }
    }
    for answer in &answers {
        let text = answer.to_string();
        assert!(longest_list(answer) < N, "an answer lists per-ballot data: {text:.300}");
        for (code, h) in codes.iter().zip(&hashes) {
            assert!(!text.contains(code.as_str()) && !text.contains(&code.replace('-', "")), "a code in {text:.300}");
            assert!(!text.to_lowercase().contains(&hex(h)), "a code's hash in an answer");
        }
    }
    // Nor does polld's log, which saw every one of them issued and used.
    let logs = server.logs();
    for code in &codes {
        assert!(!logs.contains(code.as_str()) && !logs.contains(&code.replace('-', "")), "a code in polld's log");
    }
    let results = &answers[1];
    assert_eq!(results["totalResponses"], N);
    assert_eq!(results["responsesByDay"], json!([{"date": day, "count": N}]));

    // The receipts the voters were shown (the web page of issue 15): each
    // is the one whose hash lies beside its ballot, and none is derived
    // from the code that cast it, or from any code: no run of 10 letters in
    // common (chance, over all 300 x 400 pairs: about 2e-8).
    let receipts: Vec<String> = thanks.iter().map(|page| shown_receipt(page)).collect();
    for (i, receipt) in receipts.iter().enumerate() {
        assert!(
            receipt_keys(at_rest, &poll.id, receipt).contains(&receipt_hashes[i]),
            "receipt {i} shown is not the one that keys ballot {i}"
        );
        let letters = receipt.replace('-', "");
        for code in &codes {
            let code = code.replace('-', "");
            let shared = code.as_bytes().windows(10).any(|w| letters.as_bytes().windows(10).any(|x| x == w));
            assert!(!shared, "receipt {receipt} and code {code} share 10 letters");
        }
        assert!(anonpoll::secret::InviteCode::parse(receipt).is_none(), "a receipt reads as an invite code");
        // Only its hash is stored; no answer and no log line holds it.
        assert_not_in_db(server.dir(), letters.as_bytes(), "a receipt");
        for answer in &answers {
            let text = answer.to_string();
            assert!(!text.contains(receipt.as_str()) && !text.contains(&letters), "a receipt in {text:.300}");
            assert!(!text.to_lowercase().contains(&hex(&receipt_hashes[i])), "a receipt's hash in an answer");
        }
        assert!(!logs.contains(receipt.as_str()) && !logs.contains(&letters), "a receipt in polld's log");
    }
}

/// Erasure stays byte-level with invite codes: deleting or sweeping an
/// invite-only poll leaves none of its code hashes (used or not) in any
/// database file; another poll's codes stay.
#[test]
fn a_deleted_or_expired_invite_only_poll_leaves_no_code_hash() {
    let server = Server::start();
    let invite_poll = |days: u32| {
        let mut body = valid_poll_json();
        body["duplicateCheck"] = json!("invite");
        body["expiryDays"] = json!(days);
        server.create_poll(&body)
    };
    let keep = invite_poll(30);
    let kept = issue_codes(&server, &keep, 20);
    for how in ["delete", "sweep"] {
        let poll = invite_poll(7);
        let codes = issue_codes(&server, &poll, 50);
        for code in &codes[..5] {
            let fields = [("q0".to_owned(), "1".to_owned()), ("invite".to_owned(), code.clone())];
            server.vote_fields(&poll.id, &fields, &Server::fresh_client_ip()).unwrap();
        }
        let macs = code_macs(&server, &poll.id, &codes);
        for (c, mac) in codes.iter().zip(&macs) {
            assert_in_db(server.dir(), mac, "a code's keyed hash before erasure");
            assert_not_in_db(server.dir(), &code_hash(c), "a code's plain hash");
        }
        erase(&server, &poll, how);
        for mac in macs.iter().filter(|_| erasure_overwrites_sealed_bytes()) {
            assert_not_in_db(server.dir(), mac, &format!("a code's keyed hash after {how}"));
        }
        let n = server.query_int("SELECT count(*) FROM poll_codes WHERE poll_id = ?1", &[&poll.id]);
        assert_eq!(n, 0, "invites rows survived {how}");
    }
    for mac in code_macs(&server, &keep.id, &kept) {
        assert_in_db(server.dir(), &mac, "the other poll's code's keyed hash");
    }
}

// ===========================================================================
// Receipts (issue 15)
// ===========================================================================

/// Casts one vote through the share form as a person does (as
/// [`Server::vote_fields`]) and returns the thank-you page, which on a poll
/// with `voteChanges` shows the voter's receipt. Panics unless the vote was
/// taken (200), or if the answer sets a cookie (the receipt is kept in the
/// browser's localStorage, never in a cookie).
fn cast(server: &Server, poll_id: &str, fields: &[(String, String)], xff: &str) -> String {
    let resp = server.vote_page(poll_id, fields, xff).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resp.status, 200, "the vote was not taken: {}", resp.describe());
    resp.assert_no_cookie();
    resp.text()
}

/// The receipt a thank-you page shows in `<code id="receipt">`, as shown
/// (groups of four). Fails clearly when the page has none.
fn shown_receipt(html: &str) -> String {
    let receipt = html
        .split("id=\"receipt\"")
        .nth(1)
        .and_then(|rest| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split_once('<'))
        .map(|(text, _)| text.trim().to_owned())
        .unwrap_or_else(|| {
            panic!("the thank-you page shows no receipt (no <code id=\"receipt\">, issue 15's web page):\n{html:.3000}")
        });
    assert!(anonpoll::secret::Receipt::parse(&receipt).is_some(), "not a receipt: {receipt:?}");
    // The link carries it in the URL fragment only, never to the server.
    assert!(
        html.contains(&format!("#receipt={receipt}\""))
            || html.contains(&format!("#receipt={}\"", receipt.replace('-', ""))),
        "no link to /p/{{id}}/ballot#receipt=... with the receipt in its fragment:\n{html:.3000}"
    );
    assert!(!html.contains(&format!("?receipt={receipt}")), "a receipt in a query string");
    receipt
}

/// The keys a ballot of `poll` cast with `receipt` can have (staged,
/// settled, and where a backup or a restart settles it), each drawn from
/// the receipt's labelled hash (SHA-256 of `anonpoll receipt\0` and its 24
/// letters) keyed under the poll's key, read with the key file in `dir`
/// (docs/DECISIONS.md).
fn receipt_keys(dir: &std::path::Path, poll: &str, receipt: &str) -> Vec<Vec<u8>> {
    let hash = anonpoll::secret::Receipt::parse(receipt).expect("a receipt").hash();
    let mut labelled = b"anonpoll receipt\0".to_vec();
    labelled.extend(receipt.replace('-', "").to_uppercase().bytes());
    assert_eq!(hash.0.to_vec(), sha256(&labelled), "the hash is the labelled SHA-256 of the letters");
    audit(dir).receipt_keys(poll, &hash).unwrap().iter().map(|k| k.to_vec()).collect()
}

/// The key a shown receipt gave its ballot, among `stored`.
fn stored_key_of(server: &Server, poll: &str, receipt: &str, stored: &[Vec<u8>]) -> Vec<u8> {
    let keys = receipt_keys(server.dir(), poll, receipt);
    stored
        .iter()
        .find(|k| keys.contains(k))
        .cloned()
        .unwrap_or_else(|| panic!("no stored ballot is keyed by a shown receipt"))
}

/// The keys of `poll_id`'s ballots (a poll with `voteChanges`: every one
/// comes from its receipt's hash).
fn stored_receipt_hashes(server: &Server, poll_id: &str) -> Vec<Vec<u8>> {
    db_blobs(server.dir(), "SELECT id FROM sealed_ballots WHERE poll_id = ?1", &[poll_id])
}

/// Erasure stays byte-level with receipts: deleting or sweeping a poll
/// leaves none of its receipt hashes (in its ballots' keys) in any database
/// file; another poll's stay.
#[test]
fn a_deleted_or_expired_poll_leaves_no_receipt_hash() {
    let server = Server::start();
    let make = |days: u32| server.create_poll(&with(valid_poll_json(), "/expiryDays", json!(days)));
    let vote = |poll: &Created, n: usize| -> Vec<String> {
        (0..n)
            .map(|i| {
                let fields = [("q0".to_owned(), (i % 3).to_string()), ("q1".to_owned(), (i % 2).to_string())];
                cast(&server, &poll.id, &fields, &Server::fresh_client_ip())
            })
            .collect()
    };
    let keep = make(30);
    let kept_pages = vote(&keep, 3);
    wait_for_mix(server.dir());
    let kept = stored_receipt_hashes(&server, &keep.id);
    assert_eq!(kept.len(), 3, "each ballot of a voteChanges poll has its receipt hash");
    let mut erased = Vec::new();
    for how in ["delete", "sweep"] {
        let poll = make(7);
        let pages = vote(&poll, 6);
        // As a poll erased days after its votes: the writer has mixed them
        // to their settled keys.
        wait_for_mix(server.dir());
        let hashes = stored_receipt_hashes(&server, &poll.id);
        assert_eq!(hashes.len(), 6, "each ballot of a voteChanges poll has its receipt hash");
        assert!(hashes.iter().all(|h| h[0] != 0xff), "the ballots are mixed before the erasure");
        for h in &hashes {
            assert_in_db(server.dir(), h, "a receipt's hash before erasure");
        }
        // Every key any of its receipts could give (staged, settled,
        // fallback), worked out while the poll's key exists.
        let all_keys: Vec<Vec<u8>> =
            pages.iter().flat_map(|p| receipt_keys(server.dir(), &poll.id, &shown_receipt(p))).collect();
        let shown: Vec<Vec<u8>> =
            pages.iter().map(|p| stored_key_of(&server, &poll.id, &shown_receipt(p), &hashes)).collect();
        erase(&server, &poll, how);
        for key in all_keys.iter().filter(|_| erasure_overwrites_sealed_bytes()) {
            assert_not_in_db(server.dir(), key, &format!("a receipt's key after {how}"));
        }
        let n = server.query_int("SELECT count(*) FROM sealed_ballots WHERE poll_id = ?1", &[&poll.id]);
        assert_eq!(n, 0, "ballots survived {how}");
        erased.push((how, shown, hashes));
    }
    for h in &kept {
        assert_in_db(server.dir(), h, "the other poll's receipt hash");
    }
    // The receipts the voters were shown are the ones whose hashes were
    // stored, and then erased (the web page of issue 15).
    let kept_shown: Vec<Vec<u8>> =
        kept_pages.iter().map(|p| stored_key_of(&server, &keep.id, &shown_receipt(p), &kept)).collect();
    assert_eq!(sorted(kept_shown), sorted(kept.clone()), "the receipts shown are those stored");
    for (how, shown, hashes) in erased {
        assert_eq!(sorted(shown), sorted(hashes), "the receipts shown before {how} are those stored");
    }
}

/// Erases `poll` (which expires in 7 days) as `how` says: `delete` through
/// the API, `sweep` with `pollctl sweep` on its expiry day.
fn erase(server: &Server, poll: &Created, how: &str) {
    match how {
        "delete" => {
            server.delete(&poll.id, &poll.token).assert_status(204);
        }
        _ => {
            server.sweep_as_of(&date_from_today(7));
            assert_problem(&server.get(&poll.path()), 404);
        }
    }
}

fn sorted(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.sort();
    v
}

/// A poll with `voteChanges` off gives no receipt and stores none.
#[test]
fn without_vote_changes_no_receipt_is_given_or_stored() {
    let server = Server::start();
    let poll = server.create_poll(&with(valid_poll_json(), "/voteChanges", json!(false)));
    let fields = [("q0".to_owned(), "0".to_owned())];
    let page = cast(&server, &poll.id, &fields, &Server::fresh_client_ip());
    assert!(
        !page.contains("id=\"receipt\"") && !page.contains("#receipt="),
        "a receipt on a poll without vote changes"
    );
    let n = server.query_int("SELECT count(*) FROM sealed_ballots WHERE poll_id = ?1", &[&poll.id]);
    assert_eq!(n, 1, "the ballot is stored (with a random key: no receipt exists to derive one from)");
}

// ===========================================================================
// PostgreSQL: what xmin, ctid and the WAL pair (the outside audit of
// 2026-12-05: shared/research/pg-linkage.md; docs/PRIVACY.md 5b, 5c, 9)
// ===========================================================================

use common::pg_attack::{self, RowPlace, RowVersion, Table, WalTxn};

/// For a PostgreSQL twin of a SQLite test (what it reads, `xmin`, `ctid`,
/// heap pages and the WAL, is PostgreSQL's): true when this run is on
/// SQLite, after a one-line note written straight to stderr (libtest
/// hides a passing test's prints); the caller then returns. Not counted
/// apart (scripts/test counts SQLite-only tests only): the SQLite sibling
/// named in `why` covers the promise there.
#[track_caller]
fn postgres_only(why: &str) -> bool {
    if on_postgres() {
        return false;
    }
    let file = std::panic::Location::caller().file();
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("(unnamed test)");
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "note {file}: {test} runs on PostgreSQL only ({why})");
    true
}

/// One voter of the PostgreSQL attacks, and what the attacker is granted
/// knowing of them: the invite code they voted with (whoever handed the
/// codes out knows who got which), the nonce of the vote form they sent (a
/// voter's device, or a proxy, saw it), and, to score a guess, the answers
/// their ballot holds (`[a,b,c]`).
struct Voter {
    code: Option<String>,
    nonce: [u8; 16],
    answers: String,
}

/// The answers ballot `i` is cast with ([`digits`]), as the audit shows them.
fn answers_of(i: usize) -> String {
    let [a, b, c] = digits(i);
    format!("[{a},{b},{c}]")
}

/// The share form's fields for ballot `i`, with `code` if the poll takes
/// invite codes.
fn fields_of(i: usize, code: Option<&str>) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> =
        digits(i).iter().enumerate().map(|(q, o)| (format!("q{q}"), o.to_string())).collect();
    fields.extend(code.map(|c| ("invite".to_owned(), c.to_owned())));
    fields
}

/// The share page of `poll` loaded from `xff` (polld at `addr`): its form's
/// one-time `ballot` token, and the token's nonce (`tag(4) ‖ nonce(16) ‖
/// mac(16)`, base64url: src/web/ballot.rs), which a spent form leaves in
/// `redeemed_forms` on PostgreSQL.
fn share_form(addr: &str, poll: &str, xff: &str) -> (String, [u8; 16]) {
    let page = Request::new(addr, "GET", &format!("/p/{poll}")).xff(xff).send();
    assert_eq!(page.status, 200, "share page: {}", page.describe());
    let token = ballot_code(&page.text()).expect("the share page's form carries a ballot token");
    let raw = base64url_decode(&token).expect("the ballot token is base64url");
    assert_eq!(raw.len(), 36, "a ballot token is tag(4) || nonce(16) || mac(16)");
    (token, raw[4..20].try_into().unwrap())
}

/// Sends the share form with `token` and `fields` from `xff`; the
/// thank-you page. Panics unless the vote was taken.
fn send_form(addr: &str, poll: &str, token: &str, fields: &[(String, String)], xff: &str) -> String {
    let mut fields = fields.to_vec();
    fields.push(("ballot".to_owned(), token.to_owned()));
    let resp = Request::new(addr, "POST", &format!("/p/{poll}")).xff(xff).form(&fields).send();
    assert_eq!(resp.status, 200, "the vote was not taken: {}", resp.describe());
    resp.text()
}

/// Casts ballot `i` with `code` as a person does, keeping what its voter
/// knows: the nonce of the form sent.
fn cast_as_voter(server: &Server, poll: &str, i: usize, code: Option<&str>) -> Voter {
    let xff = Server::fresh_client_ip();
    let (token, nonce) = share_form(&server.addr, poll, &xff);
    send_form(&server.addr, poll, &token, &fields_of(i, code), &xff);
    Voter { code: code.map(str::to_owned), nonce, answers: answers_of(i) }
}

/// Casts ballots `from..from + n` at once, from `n` threads that load their
/// forms first and then send them together (so the writer takes several in
/// one batch), ballot `i` with `codes[i]`.
fn cast_burst(server: &Server, poll: &str, from: usize, n: usize, codes: &[String]) -> Vec<Voter> {
    let barrier = std::sync::Barrier::new(n);
    std::thread::scope(|s| {
        let voters: Vec<_> = (from..from + n)
            .map(|i| {
                let (barrier, addr, code) = (&barrier, &server.addr, codes[i].as_str());
                s.spawn(move || {
                    let xff = Server::fresh_client_ip();
                    let (token, nonce) = share_form(addr, poll, &xff);
                    barrier.wait();
                    send_form(addr, poll, &token, &fields_of(i, Some(code)), &xff);
                    Voter { code: Some(code.to_owned()), nonce, answers: answers_of(i) }
                })
            })
            .collect();
        voters.into_iter().map(|v| v.join().expect("a voter's thread")).collect()
    })
}

/// A connection to the PostgreSQL database of the test directory `dir`.
fn pg_of(dir: &std::path::Path) -> postgres::Client {
    let url = pg_url(dir).expect("the test's PostgreSQL database");
    postgres::Client::connect(&url, postgres::NoTls).unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

/// The WAL's current position: evidence is read from there on.
fn wal_lsn(dir: &std::path::Path) -> String {
    pg_of(dir).query_one("SELECT pg_current_wal_lsn()::text", &[]).unwrap().get(0)
}

/// Waits until poll `poll`'s rows stop moving: the `xmin` and `ctid` of its
/// row and of each of its ballots unchanged for 2 s, at most 30 s. A store
/// that rewrites a poll's ballots after votes (under a fresh key, at new
/// places) has done so then; one that does not is waited for 2 s.
fn wait_until_settled(dir: &std::path::Path, poll: &str) {
    const QUIET: std::time::Duration = std::time::Duration::from_secs(2);
    let mut pg = pg_of(dir);
    let mut state = || -> String {
        pg.query_one(
            "SELECT coalesce((SELECT xmin::text || ctid::text FROM sealed_polls WHERE id = $1), '') || ' ' ||
                    coalesce((SELECT string_agg(xmin::text || ctid::text, ' ' ORDER BY ctid)
                              FROM sealed_ballots WHERE poll_id = $1), '')",
            &[&poll],
        )
        .unwrap()
        .get(0)
    };
    let started = std::time::Instant::now();
    let (mut last, mut since) = (state(), std::time::Instant::now());
    while since.elapsed() < QUIET {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "poll {poll}'s rows still move after 30 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now = state();
        if now != last {
            (last, since) = (now, std::time::Instant::now());
        }
    }
}

/// Where the attacker reads heap pages from.
enum Pages<'a> {
    /// The running server, through pageinspect (a role with SELECT and
    /// pageinspect, as the audit had).
    Live,
    /// The relation files of a data directory read at once, as a file-level
    /// copy or a base backup holds them (after a `CHECKPOINT`, so they hold
    /// what the server's buffers held).
    Files(&'a std::path::Path),
}

/// Every version, live or dead, of one table's rows (those of the poll
/// attacked, where the table has a poll column), and where its live rows
/// lie (what `SELECT ctid` shows).
struct Versions {
    table: Table,
    rows: Vec<RowVersion>,
    live: std::collections::BTreeSet<(u32, u16)>,
}

impl Versions {
    /// Column `name`'s bytes in row version `v`.
    fn get<'v>(&self, v: &'v RowVersion, name: &str) -> Option<&'v [u8]> {
        v.value(self.table.column(name)?)
    }

    /// The relfilenode the WAL names the table by.
    fn rel(&self) -> u32 {
        self.table.relfilenode
    }

    fn is_live(&self, v: &RowVersion) -> bool {
        self.live.contains(&v.place)
    }
}

/// A row version of a table other than the ballots', with its table.
type Own<'e> = (&'e Versions, &'e RowVersion);

/// What the attacker holds of one poll: every version of its rows in every
/// table of its database, from raw heap pages (so a code's row is found
/// wherever the store keeps it); the WAL's transactions since the test
/// began; every data key of the poll found in the versions of its row, and
/// those of them that still unwrap with the key file, opened; and each
/// ballot version's answers under the poll's current key and under any key
/// that opens it.
struct Evidence {
    ballots: Versions,
    /// Every other table: the poll's row, the invite codes', the spent forms'...
    others: Vec<Versions>,
    /// Every distinct wrapped key of the poll found, unwrapping or not; the
    /// live row's first.
    wrapped: Vec<StoredKey>,
    /// The keys that unwrap; the live row's is `current`.
    keys: Vec<KeyedAudit>,
    current: Option<usize>,
    wal: Vec<WalTxn>,
    /// Per ballot version: its answers under the current key, and under any key.
    opened: Vec<(Option<String>, Option<String>)>,
}

impl Evidence {
    /// Reads it all from the database of the test directory `dir` (heap
    /// pages as `pages` says; the WAL from `wal_from` on, copied from
    /// `pg_wal/` and the archive into `wal`), with the key file beside it.
    fn gather(dir: &std::path::Path, poll: &str, pages: Pages, wal: &std::path::Path, wal_from: &str) -> Evidence {
        let mut pg = pg_of(dir);
        let cluster = PgCluster::shared().expect("the shared cluster");
        pg_attack::copy_wal(&[cluster.wal_dir(), cluster.archive_dir()], wal_from, wal);
        let names: Vec<String> = pg
            .query(
                "SELECT relname::text FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
                 ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut tables = Vec::new();
        for name in &names {
            let table = Table::of(&mut pg, name).expect("a table just listed");
            let bytes = match pages {
                Pages::Live => pg_attack::live_pages(&mut pg, &table),
                Pages::Files(data) => pg_attack::file_pages(data, &table),
            };
            let mut rows = pg_attack::row_versions(&bytes, &table);
            let poll_column = if name == "sealed_polls" { "id" } else { "poll_id" };
            if let Some(i) = table.column(poll_column) {
                rows.retain(|v| v.value(i) == Some(poll.as_bytes()));
            }
            let live = pg
                .query(&format!("SELECT ctid::text FROM \"{name}\""), &[])
                .unwrap()
                .iter()
                .filter_map(|r| ctid(&r.get::<_, String>(0)))
                .collect();
            tables.push(Versions { table, rows, live });
        }
        let at = |name: &str| tables.iter().position(|t| t.table.name == name);
        let ballots = tables.remove(at("sealed_ballots").expect("a sealed_ballots table"));
        let others = tables;
        // The poll's keys: the live row's, and every version of the row.
        let mut wrapped = vec![stored_key(dir, poll)];
        for polls in others.iter().filter(|t| t.table.name == "sealed_polls") {
            for v in &polls.rows {
                if let (Some(day), Some(key), Some(body)) =
                    (polls.get(v, "key_day"), polls.get(v, "data_key"), polls.get(v, "body"))
                {
                    let found = StoredKey {
                        key_day: String::from_utf8_lossy(day).into_owned(),
                        wrapped: key.to_vec(),
                        body: body.to_vec(),
                        groups: polls.get(v, "ballot_groups").map(<[u8]>::to_vec),
                    };
                    if !wrapped.iter().any(|k| (&k.key_day, &k.wrapped) == (&found.key_day, &found.wrapped)) {
                        wrapped.push(found);
                    }
                }
            }
        }
        let mut keys = Vec::new();
        let mut current = None;
        for (i, k) in wrapped.iter().enumerate() {
            if let Some(opened) = KeyedAudit::open(dir, &keys_path(dir), poll, k) {
                current = current.or((i == 0).then_some(keys.len()));
                keys.push(opened);
            }
        }
        let opened = ballots
            .rows
            .iter()
            .map(|v| match (ballots.get(v, "id"), ballots.get(v, "sealed")) {
                (Some(key), Some(sealed)) => {
                    let under = |k: &KeyedAudit| k.ballot(key, sealed);
                    (current.and_then(|c| under(&keys[c])), keys.iter().find_map(under))
                }
                _ => (None, None),
            })
            .collect();
        let db: u32 = pg
            .query_one("SELECT oid::bigint FROM pg_database WHERE datname = current_database()", &[])
            .map(|r| r.get::<_, i64>(0) as u32)
            .unwrap();
        let wal = pg_attack::wal_transactions(wal, wal_from, db);
        Evidence { ballots, others, wrapped, keys, current, wal, opened }
    }

    /// Table `name`, if the database has it.
    fn table(&self, name: &str) -> Option<&Versions> {
        self.others.iter().find(|t| t.table.name == name)
    }

    /// The row versions, in any table but the poll's, that hold one of
    /// `needles`.
    fn rows_holding(&self, needles: &[Vec<u8>]) -> Vec<Own<'_>> {
        self.others
            .iter()
            .filter(|t| t.table.name != "sealed_polls")
            .flat_map(|t| t.rows.iter().map(move |v| (t, v)))
            .filter(|(_, v)| needles.iter().any(|n| v.holds(n)))
            .collect()
    }

    /// The rows of invite code `code`: versions keyed by its hash under any
    /// of the poll's keys, wherever they are.
    fn code_rows(&self, code: &str) -> Vec<Own<'_>> {
        let mut macs: Vec<Vec<u8>> = self.keys.iter().map(|k| k.invite_mac(code)).collect();
        macs.dedup();
        self.rows_holding(&macs)
    }

    /// The ballot versions that row versions `own` point at by transaction
    /// id: those written or replaced by one of their xids, or by the nearest
    /// ballot-writing xid below it within 64 (the parent of a savepoint: a
    /// subtransaction's id comes after its parent's).
    fn by_xid(&self, own: &[Own]) -> std::collections::BTreeSet<usize> {
        let mut out = std::collections::BTreeSet::new();
        for e in own.iter().flat_map(|(_, v)| [v.xmin, v.xmax]).filter(|&x| x != 0) {
            let parent = self.ballots.rows.iter().map(|b| b.xmin).filter(|&b| b <= e && e - b <= 64).max();
            for (i, b) in self.ballots.rows.iter().enumerate() {
                if b.xmin == e || b.xmax == e || Some(b.xmin) == parent {
                    out.insert(i);
                }
            }
        }
        out
    }

    /// The ballot versions the WAL ties to row versions `own`: each
    /// transaction whose records, or its subtransactions', touched their
    /// places, and the ballot versions it wrote or replaced at the places it
    /// touched in the ballots' table.
    fn by_wal(&self, own: &[Own]) -> std::collections::BTreeSet<usize> {
        let places: Vec<RowPlace> =
            own.iter().map(|(t, v)| RowPlace { rel: t.rel(), block: v.place.0, offset: v.place.1 }).collect();
        let mut out = std::collections::BTreeSet::new();
        for txn in self.wal.iter().filter(|t| places.iter().any(|p| t.touched.contains(p))) {
            let touched: Vec<&RowPlace> = txn.places_in(self.ballots.rel()).collect();
            for (i, b) in self.ballots.rows.iter().enumerate() {
                let here = touched.iter().any(|p| (p.block, p.offset) == b.place);
                if here && (txn.owns(b.xmin) || txn.owns(b.xmax)) {
                    out.insert(i);
                }
            }
        }
        out
    }
}

/// A `ctid` as text, `(block,offset)`.
fn ctid(text: &str) -> Option<(u32, u16)> {
    let (b, o) = text.trim_matches(|c| c == '(' || c == ')').split_once(',')?;
    Some((b.parse().ok()?, o.parse().ok()?))
}

/// A row place as one number that sorts as the table's order does.
fn place_rank(p: (u32, u16)) -> usize {
    p.0 as usize * 1000 + usize::from(p.1)
}

/// What one way of pairing found, over all voters: how many it pointed at
/// some ballot version; how many of those the pointed versions open to that
/// voter's answers alone (an exact pair), with the poll's current key and
/// with any key the copy holds; and how many point at a group holding the
/// voter's ballot among others (a batch).
#[derive(Default, Debug)]
struct Found {
    pointed: usize,
    exact_current: usize,
    exact_any: usize,
    in_group_any: usize,
}

impl Found {
    /// Scores `candidates[k]` (ballot version indices) against voter k.
    fn score(ev: &Evidence, voters: &[Voter], candidates: &[std::collections::BTreeSet<usize>]) -> Found {
        let mut found = Found::default();
        for (voter, pointed) in voters.iter().zip(candidates) {
            if pointed.is_empty() {
                continue;
            }
            found.pointed += 1;
            let answers = |any: bool| -> std::collections::BTreeSet<&String> {
                pointed
                    .iter()
                    .filter_map(|&i| if any { ev.opened[i].1.as_ref() } else { ev.opened[i].0.as_ref() })
                    .collect()
            };
            let exact = |set: std::collections::BTreeSet<&String>| set.len() == 1 && set.contains(&voter.answers);
            found.exact_current += usize::from(exact(answers(false)));
            found.exact_any += usize::from(exact(answers(true)));
            found.in_group_any += usize::from(answers(true).contains(&voter.answers));
        }
        found
    }
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} pointed at a ballot, {} exact pairs opening with the current key, {} with any key found, \
             {} in a group holding the voter's ballot",
            self.pointed, self.exact_current, self.exact_any, self.in_group_any
        )
    }
}

/// The outside audit's attack on `voters` (in the order they voted) with
/// evidence `ev`: each way of pairing a voter's code or form with a ballot,
/// and the place orders.
struct Attack {
    codes_found: usize,
    forms_found: usize,
    /// Whether forms were found by their nonce (in clear), or only by the
    /// order of their xids against the order of the votes.
    forms_by_nonce: bool,
    code_xid: Found,
    code_wal: Found,
    form_xid: Found,
    form_wal: Found,
    /// Spearman's rho of the used codes' live places against the order of
    /// use, and against their ballots' live places; codes whose place rank
    /// equals their ballot's; how many had both.
    rho_use: f64,
    rho_ballot: f64,
    right_by_rank: usize,
    placed: usize,
    /// Spearman's rho of the live ballots' places against the order of the
    /// votes (what section 9 says a batch of one still shows).
    rho_cast: f64,
    /// Every ballot version some way pointed some voter at.
    pointed: std::collections::BTreeSet<usize>,
}

impl Attack {
    fn run(ev: &Evidence, voters: &[Voter]) -> Attack {
        let code_rows: Vec<Vec<Own>> =
            voters.iter().map(|v| v.code.as_deref().map(|c| ev.code_rows(c)).unwrap_or_default()).collect();
        let mut form_rows: Vec<Vec<Own>> = voters.iter().map(|v| ev.rows_holding(&[v.nonce.to_vec()])).collect();
        let forms_by_nonce = form_rows.iter().filter(|r| !r.is_empty()).count() * 2 >= voters.len();
        if !forms_by_nonce && let Some(forms) = ev.table("redeemed_forms") {
            // No nonce in clear: the k-th spent form by xid is taken for the
            // k-th voter (the attacker knows the order people voted in).
            let mut by_xid: Vec<&RowVersion> = forms.rows.iter().filter(|f| !f.aborted()).collect();
            by_xid.sort_by_key(|f| (f.xmin, f.place));
            form_rows = (0..voters.len()).map(|k| by_xid.get(k).map(|&f| (forms, f)).into_iter().collect()).collect();
        }
        let mut pointed = std::collections::BTreeSet::new();
        let mut score = |rows: &[Vec<Own>]| {
            let xid: Vec<_> = rows.iter().map(|r| ev.by_xid(r)).collect();
            let wal: Vec<_> = rows.iter().map(|r| ev.by_wal(r)).collect();
            pointed.extend(xid.iter().chain(&wal).flatten());
            (Found::score(ev, voters, &xid), Found::score(ev, voters, &wal))
        };
        let (code_xid, code_wal) = score(&code_rows);
        let (form_xid, form_wal) = score(&form_rows);
        // Places of the live rows: each used code's, and its ballot's (the
        // live version that opens, with the current key, to its answers).
        let ballot_at = |answers: &String| {
            ev.ballots.rows.iter().enumerate().find_map(|(i, b)| {
                (ev.ballots.is_live(b) && ev.opened[i].0.as_ref() == Some(answers)).then_some(b.place)
            })
        };
        let mut uses = Vec::new();
        for (k, (voter, rows)) in voters.iter().zip(&code_rows).enumerate() {
            let code_at = rows.iter().find(|(t, v)| t.is_live(v)).map(|(_, v)| v.place);
            if let (Some(c), Some(b)) = (code_at, ballot_at(&voter.answers)) {
                uses.push((k, place_rank(c), place_rank(b)));
            }
        }
        let order: Vec<usize> = uses.iter().map(|u| u.0).collect();
        let code_places: Vec<usize> = uses.iter().map(|u| u.1).collect();
        let ballot_places: Vec<usize> = uses.iter().map(|u| u.2).collect();
        let (code_rank, ballot_rank) = (ranks(&code_places), ranks(&ballot_places));
        let cast: Vec<(usize, usize)> =
            voters.iter().enumerate().filter_map(|(k, v)| ballot_at(&v.answers).map(|b| (k, place_rank(b)))).collect();
        Attack {
            codes_found: code_rows.iter().filter(|r| !r.is_empty()).count(),
            forms_found: form_rows.iter().filter(|r| !r.is_empty()).count(),
            forms_by_nonce,
            code_xid,
            code_wal,
            form_xid,
            form_wal,
            rho_use: rho_between(&order, &code_places),
            rho_ballot: rho_between(&code_places, &ballot_places),
            right_by_rank: (0..uses.len()).filter(|&i| code_rank[i] == ballot_rank[i]).count(),
            placed: uses.len(),
            rho_cast: rho_between(
                &cast.iter().map(|c| c.0).collect::<Vec<_>>(),
                &cast.iter().map(|c| c.1).collect::<Vec<_>>(),
            ),
            pointed,
        }
    }

    /// The figures, on stderr.
    fn print(&self, what: &str, ev: &Evidence, voters: usize) {
        let others: Vec<String> = ev
            .others
            .iter()
            .filter(|t| !t.rows.is_empty())
            .map(|t| format!("{} {}", t.table.name, t.rows.len()))
            .collect();
        eprintln!(
            "{what}: {voters} voters; row versions read: sealed_ballots {}, {}; {} data keys found, {} unwrap with \
             the key file; {} WAL transactions",
            ev.ballots.rows.len(),
            others.join(", "),
            ev.wrapped.len(),
            ev.keys.len(),
            ev.wal.len()
        );
        eprintln!("  codes located: {}; by xid: {}", self.codes_found, self.code_xid);
        eprintln!("  codes by the WAL: {}", self.code_wal);
        let how = if self.forms_by_nonce { "by their nonce" } else { "by xid order only (no nonce in clear)" };
        eprintln!("  forms located {how}: {}; by xid: {}", self.forms_found, self.form_xid);
        eprintln!("  forms by the WAL: {}", self.form_wal);
        eprintln!(
            "  places of {} used codes: rho(code place, order of use) {:.3}, rho(code place, ballot place) {:.3}, \
             {} pairs right by rank; rho(ballot place, order of votes) {:.3}",
            self.placed, self.rho_use, self.rho_ballot, self.right_by_rank, self.rho_cast
        );
    }
}

/// docs/PRIVACY.md 5b and 9: on PostgreSQL, nothing at rest pairs an invite
/// code, or a vote form, with the ballot it cast. The outside audit's attack
/// (shared/research/pg-linkage.md): 100 codes, 70 used in random order (40
/// one at a time, 30 in bursts of 10), ballot `i` telling which it is; once
/// the store has settled, every row version of the poll, live or dead
/// (pageinspect), the WAL and its archive (`pg_waldump`) and the key file,
/// knowing who used which code and form. A pair is found when a code's or
/// form's rows point, by transaction id or through the WAL, at ballot
/// versions that open with the poll's current key to that voter's answers
/// alone: fewer than 8 of 70 (chance: about 1; the audit: 53). The used
/// codes' places follow neither the order of use nor their ballots' places
/// (|rho| < 0.4, which random places at n = 70 meet with probability 0.999;
/// the audit: 0.78). What older keys found in the files open is printed;
/// that they die with the lease is the in-window test's.
#[test]
fn on_postgres_nothing_at_rest_pairs_an_invite_code_or_a_vote_form_with_its_ballot() {
    if postgres_only(
        "xmin, ctid, heap pages and the WAL; nothing_stored_or_answered_pairs_an_invite_code_with_its_ballot covers SQLite",
    ) {
        return;
    }
    const ISSUED: usize = 100;
    const ALONE: usize = 40;
    const BURST: usize = 10;
    const USED: usize = ALONE + 3 * BURST;
    let server = Server::start();
    let wal_from = wal_lsn(server.dir());
    let mut body = valid_poll_json();
    body["questions"] = questions(3, 10);
    body["duplicateCheck"] = json!("invite");
    let poll = server.create_poll(&body);
    let mut codes = issue_codes(&server, &poll, ISSUED);
    // Used in random order: codes[i] casts ballot i.
    rand::seq::SliceRandom::shuffle(codes.as_mut_slice(), &mut rand::rng());
    let mut voters: Vec<Voter> =
        (0..ALONE).map(|i| cast_as_voter(&server, &poll.id, i, Some(codes[i].as_str()))).collect();
    for from in (ALONE..USED).step_by(BURST) {
        voters.extend(cast_burst(&server, &poll.id, from, BURST, &codes));
    }
    wait_until_settled(server.dir(), &poll.id);

    let wal = tempfile::tempdir().unwrap();
    let ev = Evidence::gather(server.dir(), &poll.id, Pages::Live, wal.path(), &wal_from);
    let attack = Attack::run(&ev, &voters);
    attack.print("at rest, pageinspect and pg_waldump", &ev, USED);

    // The attacker sees what the audit saw: every live ballot opens with
    // the current key, every used code's row is located (by the code's
    // keyed hash) and, if the nonce is stored in clear, every form's row, so
    // the checks below can fail.
    assert!(ev.current.is_some(), "the poll's live key does not unwrap with the key file");
    let live_ballots = (0..ev.ballots.rows.len())
        .filter(|&i| ev.ballots.is_live(&ev.ballots.rows[i]) && ev.opened[i].0.is_some())
        .count();
    assert_eq!(live_ballots, USED, "every ballot is read, live, with the current key");
    assert_eq!(attack.codes_found, USED, "every used code's row is located by its keyed hash (Audit::invite_mac)");
    if attack.forms_by_nonce {
        assert_eq!(attack.forms_found, USED, "every voter's form row is located by its nonce");
    }

    for (what, found) in [
        ("an invite code and its ballot by transaction id", &attack.code_xid),
        ("an invite code and its ballot through the WAL", &attack.code_wal),
        ("a vote form and its ballot by transaction id", &attack.form_xid),
        ("a vote form and its ballot through the WAL", &attack.form_wal),
    ] {
        assert!(found.exact_current < 8, "{what}: {} of {USED} pairs found ({found})", found.exact_current);
    }
    assert!(attack.rho_use.abs() < 0.4, "used codes lie in the order of use (rho {:.3})", attack.rho_use);
    assert!(attack.rho_ballot.abs() < 0.4, "codes lie as their ballots do (rho {:.3})", attack.rho_ballot);
    assert!(attack.right_by_rank < 8, "pairing codes and ballots by place finds {} pairs", attack.right_by_rank);
}

/// Posts `action` with `receipt` (and `fields`) to `poll`'s ballot page,
/// as the voter's browser does (docs/WEB.md); the answer must be 200.
fn own_ballot(server: &Server, poll: &str, receipt: &str, action: &str, fields: &[(String, String)]) {
    let mut all = vec![("receipt".to_owned(), receipt.to_owned()), ("action".to_owned(), action.to_owned())];
    all.extend_from_slice(fields);
    let resp = server.request("POST", &format!("/p/{poll}/ballot")).xff(&Server::fresh_client_ip()).form(&all).send();
    assert_eq!(resp.status, 200, "{action} with a receipt: {}", resp.describe());
}

/// docs/PRIVACY.md 5c, 8 and 9: on PostgreSQL, a withdrawn ballot and a
/// changed ballot's first answers are gone from every copy within the
/// lease. Five ballots with answers of their own; one withdrawn, one
/// changed through the ballot page; then at once a copy (the heap files,
/// the WAL and its archive), which still holds their old sealed bytes (the
/// precondition, shown: what makes it an attack). Then: (1) the poll's
/// current data key opens none of those bytes, nor any ballot version the
/// heap keeps to the old answers; (2) once the key state has moved past the
/// lease (`pollctl sweep --as-of`), no data key of the poll found then or
/// since unwraps with the key file, and the poll's key then (still live,
/// its four ballots open) opens nothing of the old answers: no key left
/// opens them.
#[test]
fn on_postgres_a_withdrawn_or_changed_ballot_is_gone_from_every_copy_within_the_lease() {
    if postgres_only("dead row versions and the WAL; SQLite overwrites freed bytes (docs/PRIVACY.md 5c)") {
        return;
    }
    let mut server = Server::start();
    let wal_from = wal_lsn(server.dir());
    let mut body = valid_poll_json();
    body["questions"] = questions(3, 10);
    assert!(body["expiryDays"].as_u64().unwrap() > u64::from(anonpoll::keyring::DEFAULT_LEASE_DAYS) + 1);
    let poll = server.create_poll(&body);
    // Ballot j (1 to 5) answers [j,j,j].
    let receipts: Vec<String> = (1..=5)
        .map(|j| {
            let fields: Vec<(String, String)> = (0..3).map(|q| (format!("q{q}"), j.to_string())).collect();
            shown_receipt(&cast(&server, &poll.id, &fields, &Server::fresh_client_ip()))
        })
        .collect();
    let first_key = stored_key(server.dir(), &poll.id);
    let stored = audit(server.dir()).ballots(&poll.id).unwrap();
    let ballot_saying = |answers: &str| stored.iter().find(|b| b.choices == answers).cloned().unwrap();
    let old = [
        (ballot_saying("[1,1,1]"), "the withdrawn ballot"),
        (ballot_saying("[2,2,2]"), "the changed ballot's first answers"),
    ];
    own_ballot(&server, &poll.id, &receipts[0], "withdraw", &[]);
    let changed: Vec<(String, String)> =
        [0, 9, 0].iter().enumerate().map(|(q, o)| (format!("q{q}"), o.to_string())).collect();
    own_ballot(&server, &poll.id, &receipts[1], "change", &changed);

    // At once, a copy: the heap files (after a checkpoint), the WAL and its
    // archive (the segment ended, so the archive has it too).
    let cluster = PgCluster::shared().expect("the shared cluster");
    cluster.checkpoint();
    cluster.switch_wal();
    let wal = tempfile::tempdir().unwrap();
    let copy = Evidence::gather(server.dir(), &poll.id, Pages::Files(&cluster.data_dir()), wal.path(), &wal_from);
    let segments: Vec<Vec<u8>> =
        std::fs::read_dir(wal.path()).unwrap().map(|e| std::fs::read(e.unwrap().path()).unwrap()).collect();
    for (b, what) in &old {
        let in_heap = copy.ballots.rows.iter().filter(|v| v.holds(&b.sealed)).count();
        let in_wal = segments.iter().filter(|bytes| contains_bytes(bytes, &b.sealed)).count();
        eprintln!(
            "{what}: its old sealed bytes are in {in_heap} heap row versions and {in_wal} WAL segments of the copy"
        );
        assert!(in_heap + in_wal > 0, "precondition: the copy holds {what}'s old sealed bytes");
    }

    // (1) The poll's current key, once the store has settled.
    wait_until_settled(server.dir(), &poll.id);
    let wal_later = tempfile::tempdir().unwrap();
    let later = Evidence::gather(server.dir(), &poll.id, Pages::Live, wal_later.path(), &wal_from);
    let now = KeyedAudit::open(server.dir(), &keys_path(server.dir()), &poll.id, &stored_key(server.dir(), &poll.id))
        .expect("the poll's current key unwraps");
    let old_answers = ["[1,1,1]", "[2,2,2]"];
    let mut breaches = std::collections::BTreeSet::new();
    for (b, what) in &old {
        if let Some(a) = now.ballot(&b.key, &b.sealed) {
            breaches.insert(format!("the poll's current key opens {what} ({a}), as the copy holds it"));
        }
    }
    for ev in [&copy, &later] {
        for v in &ev.ballots.rows {
            if let (Some(k), Some(s)) = (ev.ballots.get(v, "id"), ev.ballots.get(v, "sealed"))
                && let Some(a) = now.ballot(k, s).filter(|a| old_answers.contains(&a.as_str()))
            {
                breaches
                    .insert(format!("the current key opens a heap row version at {:?} to old answers {a}", v.place));
            }
        }
    }

    // (2) Past the lease: the key state moved to today + lease + 1.
    server.terminate();
    server.sweep_as_of(&date_from_today(i64::from(anonpoll::keyring::DEFAULT_LEASE_DAYS) + 1));
    let keys = keys_path(server.dir());
    let after = stored_key(server.dir(), &poll.id);
    let then = KeyedAudit::open(server.dir(), &keys, &poll.id, &after)
        .expect("the poll is live past the lease, its key re-wrapped");
    let mut left: Vec<String> = audit(server.dir()).ballots(&poll.id).unwrap().into_iter().map(|b| b.choices).collect();
    left.sort();
    assert_eq!(
        left,
        ["[0,9,0]", "[3,3,3]", "[4,4,4]", "[5,5,5]"],
        "the poll's ballots after the withdrawal and the change"
    );
    let mut remembered = vec![first_key];
    remembered.extend(copy.wrapped.iter().chain(&later.wrapped).cloned());
    remembered.retain(|k| (&k.key_day, &k.wrapped) != (&after.key_day, &after.wrapped));
    remembered.sort();
    remembered.dedup();
    for k in &remembered {
        if KeyedAudit::open(server.dir(), &keys, &poll.id, k).is_some() {
            breaches.insert(format!("a data key wrapped for {} still unwraps past the lease", k.key_day));
        }
    }
    for (b, what) in &old {
        if let Some(a) = then.ballot(&b.key, &b.sealed) {
            breaches.insert(format!("past the lease, the poll's key opens {what} ({a})"));
        }
    }
    eprintln!("{} other data keys of the poll remembered; {} breaches", remembered.len(), breaches.len());
    let breaches: Vec<String> = breaches.into_iter().collect();
    assert!(breaches.is_empty(), "old answers still open:\n{}", breaches.join("\n"));
}

/// docs/PRIVACY.md 9, the window: inside it (from a vote until the store
/// has moved on, plus the lease) a copy of the files and the key file may
/// pair a batch of one; past it, nothing of that copy opens. Eight ballots
/// cast one at a time with invite codes (batches of one, the worst case);
/// at once a copy (a `pg_basebackup`, and the WAL archive): the attack
/// of [`on_postgres_nothing_at_rest_pairs_an_invite_code_or_a_vote_form_with_its_ballot`]
/// on it is printed, and every ballot opens there with a key the copy holds
/// (the precondition). Then one more vote (so the store has something to
/// move on from after the copy, even if it settled just before it), the
/// store settles, and the key state moves past the lease (`pollctl sweep
/// --as-of`): no data key the copy holds unwraps, and the poll's key then
/// (the poll is live, its ballots open) opens no ballot version of the
/// copy, paired or not.
#[test]
fn on_postgres_a_copy_made_inside_the_window_opens_only_with_keys_gone_after_the_lease() {
    if postgres_only("xmin, ctid, heap pages and the WAL; on SQLite, tests/privacy/erasure.rs covers copies") {
        return;
    }
    const USED: usize = 8;
    let mut server = Server::start();
    let wal_from = wal_lsn(server.dir());
    let mut body = valid_poll_json();
    body["questions"] = questions(3, 10);
    body["duplicateCheck"] = json!("invite");
    let poll = server.create_poll(&body);
    let codes = issue_codes(&server, &poll, 12);
    let voters: Vec<Voter> = (0..USED).map(|i| cast_as_voter(&server, &poll.id, i, Some(codes[i].as_str()))).collect();

    let backup = tempfile::tempdir().unwrap();
    PgCluster::shared().expect("the shared cluster").basebackup(&backup.path().join("data"));
    std::fs::create_dir(backup.path().join("wal")).unwrap();
    let copy = Evidence::gather(
        server.dir(),
        &poll.id,
        Pages::Files(&backup.path().join("data")),
        &backup.path().join("wal"),
        &wal_from,
    );
    let attack = Attack::run(&copy, &voters);
    attack.print("a copy inside the window", &copy, USED);
    for v in &voters {
        assert!(
            copy.opened.iter().any(|(_, any)| any.as_ref() == Some(&v.answers)),
            "precondition: ballot {} opens in the copy with a key it holds",
            v.answers
        );
    }

    cast_as_voter(&server, &poll.id, USED, Some(codes[USED].as_str()));
    wait_until_settled(server.dir(), &poll.id);
    server.terminate();
    server.sweep_as_of(&date_from_today(i64::from(anonpoll::keyring::DEFAULT_LEASE_DAYS) + 1));
    let keys = keys_path(server.dir());
    let then = KeyedAudit::open(server.dir(), &keys, &poll.id, &stored_key(server.dir(), &poll.id))
        .expect("the poll is live past the lease, its key re-wrapped");
    assert_eq!(audit(server.dir()).ballots(&poll.id).unwrap().len(), USED + 1, "every ballot is still there");
    let mut breaches = Vec::new();
    for k in &copy.wrapped {
        if KeyedAudit::open(server.dir(), &keys, &poll.id, k).is_some() {
            breaches.push(format!("a data key the copy holds (wrapped for {}) still unwraps", k.key_day));
        }
    }
    for (i, v) in copy.ballots.rows.iter().enumerate() {
        if let (Some(k), Some(s)) = (copy.ballots.get(v, "id"), copy.ballots.get(v, "sealed"))
            && let Some(a) = then.ballot(k, s)
        {
            let paired = if attack.pointed.contains(&i) { ", which the attack paired" } else { "" };
            breaches
                .push(format!("the poll's key past the lease opens the copy's ballot at {:?} ({a}){paired}", v.place));
        }
    }
    eprintln!(
        "{} data keys in the copy, {} ballot versions ({} paired); {} breaches past the lease",
        copy.wrapped.len(),
        copy.ballots.rows.len(),
        attack.pointed.len(),
        breaches.len()
    );
    assert!(breaches.is_empty(), "the copy made inside the window still opens:\n{}", breaches.join("\n"));
}
