//! Any header value as `Authorization`: a token or a typed refusal.
#![no_main]

use anonpoll::http::{Body, Method, Request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|value: String| {
    let req = Request {
        method: Method::Get,
        path: "/api/polls/x".into(),
        query: None,
        headers: vec![("authorization".into(), value.clone())],
        body: Body::Bytes(Vec::new()),
        client: std::net::IpAddr::from([127, 0, 0, 1]),
    };
    if let Ok(token) = req.bearer() {
        assert!(!token.is_empty() && !token.contains(' ') && value.contains(token));
    }
});
