//! Any string as a poll id: accepted exactly when it has the generated shape.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    let shaped = s.len() == anonpoll::secret::POLL_ID_LEN
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    assert_eq!(anonpoll::secret::PollId::parse(s).is_some(), shaped);
});
