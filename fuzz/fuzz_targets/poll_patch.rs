//! Any bytes as a PATCH body, then the structural check against a fixed poll.
#![no_main]

use anonpoll::domain::{Lang, NewPoll, PollPatch, Shape};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    match PollPatch::from_json(&v) {
        Ok(patch) => {
            let base = serde_json::json!({"title": "t", "lang": "en", "expiryDays": 7,
                "questions": [{"label": "q", "options": ["a", "b"]}]});
            let Ok(poll) = NewPoll::from_json(&base) else { panic!("fixed poll refused") };
            let _ = patch.check_against(&Shape { lang: Lang::En, questions: &poll.questions });
        }
        Err(errs) => assert!(!errs.is_empty()),
    }
});
