//! The process itself: it announces its real address, exits 0 on SIGTERM,
//! keeps polls across a restart, and answers unknown paths with 404.

use crate::common::*;

#[test]
fn server_announces_address_and_answers() {
    let server = Server::start();
    assert!(server.listen_url.starts_with("http://127.0.0.1:"));
    let port: u16 = server.addr.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "announced port 0 instead of the bound port");
    server.get("/api").assert_status(200);
}

#[test]
fn sigterm_exits_gracefully_with_code_zero() {
    let mut server = Server::start();
    server.create_default();
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM: {status:?}");
}

#[test]
fn polls_survive_a_restart() {
    let server = Server::start();
    let poll = server.create_default();
    let dir = server.into_dir();
    let server = Server::builder().in_dir(dir).start();
    let resp = server.get(&poll.path());
    resp.assert_status(200);
    assert_eq!(resp.json()["title"], "Team lunch");
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
}

#[test]
fn unknown_paths_are_404() {
    let server = Server::start();
    for path in ["/api/nothing", "/api/polls/x/y/z", "/api/pollsx"] {
        let resp = server.get(path);
        assert_eq!(resp.status, 404, "{}", resp.describe());
    }
}
