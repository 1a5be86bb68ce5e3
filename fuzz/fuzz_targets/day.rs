//! Any string as a day: accepted only when it prints back identically.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    if let Some(d) = anonpoll::day::Day::parse(s) {
        assert_eq!(d.to_string(), s);
    }
});
