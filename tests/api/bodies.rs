//! `POST /api/polls` with a body that is not acceptable JSON at all: malformed
//! (400), wrong media type (415), too large however it is sent (413).

use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn malformed_json_is_400() {
    let server = Server::start();
    let good = serde_json::to_string(&valid_poll_json()).unwrap();
    for body in [
        b"{\"title\":".to_vec(),
        b"{title: 'x'}".to_vec(),
        format!("{good}xyz").into_bytes(),
        format!("{good}{good}").into_bytes(),
        b"{\"title\":\"a\",}".to_vec(),
    ] {
        let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
        assert_problem(&resp, 400);
    }
}

#[test]
fn empty_body_is_400() {
    let server = Server::start();
    let resp = server.post_bytes("/api/polls", Some("application/json"), b"");
    assert_problem(&resp, 400);
    let resp = server
        .request("POST", "/api/polls")
        .xff(&Server::fresh_client_ip())
        .header("Content-Type", "application/json")
        .send();
    assert!(resp.status == 400 || resp.status == 411, "POST without body: {}", resp.describe());
}

#[test]
fn non_utf8_body_is_400() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    let pos = find_bytes(&body, b"Team lunch").unwrap();
    body[pos] = 0xff;
    body[pos + 1] = 0xfe;
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_problem(&resp, 400);
    let resp = server.post_bytes("/api/polls", Some("application/json"), b"\xc3\x28\x80\xff");
    assert_problem(&resp, 400);
}

#[test]
fn wrong_content_type_is_415() {
    let server = Server::start();
    let body = serde_json::to_vec(&valid_poll_json()).unwrap();
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        Some("text/json"),
    ] {
        let resp = server.post_bytes("/api/polls", ct, &body);
        assert_problem(&resp, 415);
    }
}

#[test]
fn oversized_body_is_413() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    body.resize(BODY_LIMIT + 1, b' ');
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_problem(&resp, 413);
    let big = vec![b' '; 300_000];
    let resp = server.post_bytes("/api/polls", Some("application/json"), &big);
    assert_problem(&resp, 413);
}

#[test]
fn body_of_exactly_the_limit_is_accepted() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    body.resize(BODY_LIMIT, b' ');
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_eq!(resp.status, 201, "{}", resp.describe());
}

#[test]
fn huge_declared_length_is_413_without_reading() {
    let server = Server::start();
    let head = format!(
        "POST /api/polls HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Forwarded-For: {}\r\nContent-Length: 300000\r\n\r\n{{\"ti",
        server.addr,
        Server::fresh_client_ip()
    );
    let started = Instant::now();
    let resp = send_raw(&server.addr, head.as_bytes());
    assert!(started.elapsed() < Duration::from_secs(5), "413 took {:?}", started.elapsed());
    assert_problem(&resp, 413);
    server.get("/api").assert_status(200);
}

#[test]
fn oversized_chunked_body_is_413() {
    let server = Server::start();
    let mut req = format!(
        "POST /api/polls HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Forwarded-For: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        server.addr,
        Server::fresh_client_ip()
    )
    .into_bytes();
    for _ in 0..10 {
        req.extend_from_slice(format!("{:x}\r\n", 30_000).as_bytes());
        req.extend_from_slice(&[b' '; 30_000]);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let resp = send_raw(&server.addr, &req);
    assert_problem(&resp, 413);
}
