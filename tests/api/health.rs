//! `GET /healthz`, the load balancers' check (docs/OPERATIONS.md, "Running
//! several nodes"): 200 `ok` and the key state's day while the node's
//! database answers, on either engine (this suite runs on both:
//! scripts/test); other methods 405; and it tells nothing about any poll.
//! Its 503 while PostgreSQL is away is in tests/operations/several_nodes.rs; while the
//! day's key work fails, in `app::tests`.

use crate::common::*;

#[test]
fn healthz_answers_ok_while_the_database_answers_and_takes_only_reads() {
    let server = Server::start();
    let ok = server.get("/healthz");
    ok.assert_status(200);
    let expected = format!("ok\nkey state: {}\n", today());
    assert_eq!(ok.text(), expected);
    assert_eq!(ok.header("cache-control"), Some("no-store"));
    assert!(ok.header("content-type").is_some_and(|t| t.starts_with("text/plain")));
    let head = server.request("HEAD", "/healthz").send();
    head.assert_status(200);
    for method in ["POST", "PUT", "DELETE"] {
        let r = server.request(method, "/healthz").send();
        r.assert_status(405);
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{method}");
    }
    // The same answer with polls in the store: nothing about them.
    let poll = server.create_public();
    let after = server.get("/healthz").text();
    assert_eq!(after, expected);
    assert!(!after.contains(&poll.id));
}
