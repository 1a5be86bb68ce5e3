//! Any bytes as a `multipart/form-data` body (with a fixed boundary, and
//! with the boundary taken from the input's first line): never a panic, and
//! never more parts or longer text fields than the limits allow.
#![no_main]

use anonpoll::multipart::{Limits, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { total: 1 << 16, parts: 8, text: 256 };
    let checked = |r: Result<anonpoll::multipart::Parts, _>| {
        if let Ok(p) = r {
            assert!(p.texts.len() + p.files.len() <= limits.parts);
            assert!(p.texts.iter().all(|(_, v)| v.len() <= limits.text));
            assert!(p.files.iter().all(|(_, b)| !b.is_empty()));
        }
    };
    let body = bytes::Bytes::copy_from_slice(data);
    checked(parse("multipart/form-data; boundary=XyZ", body.clone(), &limits));
    if let Some(line) = data.split(|&b| b == b'\n').next().and_then(|l| std::str::from_utf8(l).ok()) {
        checked(parse(&format!("multipart/form-data; boundary={}", line.trim()), body, &limits));
    }
});
