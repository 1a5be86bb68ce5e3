//! Any bytes as a creation body: JSON syntax first (as the API does), then
//! `NewPoll::from_json`. Never a panic; a refusal always names its fields.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    match anonpoll::domain::NewPoll::from_json(&v) {
        Ok(p) => {
            assert!(!p.title.as_str().is_empty());
            assert!(!p.questions.is_empty() && p.questions.len() <= anonpoll::domain::QUESTIONS.max);
        }
        Err(errs) => assert!(!errs.is_empty()),
    }
});
