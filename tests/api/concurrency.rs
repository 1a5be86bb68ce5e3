//! Several clients at once are all served and every vote counted.

use serde_json::{Value, json};

use crate::common::*;

#[test]
fn concurrent_clients_are_all_served() {
    let server = Server::start();
    let poll = server.create_public();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let server = &server;
                let poll = &poll;
                s.spawn(move || {
                    let created = server.create_poll(&with(valid_poll_json(), "/title", json!(format!("Poll {i}"))));
                    server.record(&poll.id, &[Some(i % 3), Some(i % 2)]).unwrap();
                    server.get(&poll.results_path()).assert_status(200);
                    server.get(&created.path()).assert_status(200);
                    created
                })
            })
            .collect();
        for h in handles {
            let created = h.join().expect("client thread");
            assert!(created.body["poll"]["title"].as_str().unwrap().starts_with("Poll "));
        }
    });
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 8);
    let counts: Vec<u64> = option_counts(&r, 0);
    assert_eq!(counts, [3, 3, 2]);
    assert_eq!(option_counts(&r, 1), [4, 4]);
}

fn option_counts(results: &Value, q: usize) -> Vec<u64> {
    results["questions"][q]["options"].as_array().unwrap().iter().map(|o| o["count"].as_u64().unwrap()).collect()
}
