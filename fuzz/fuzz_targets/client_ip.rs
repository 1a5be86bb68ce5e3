//! Any X-Forwarded-For value from a trusted and an untrusted peer.
#![no_main]

use std::net::IpAddr;

use anonpoll::client::{TrustedProxies, client_ip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|xff: &str| {
    let trusted = TrustedProxies::loopback();
    let _ = client_ip(IpAddr::from([127, 0, 0, 1]), Some(xff), &trusted);
    let outside = IpAddr::from([192, 0, 2, 1]);
    assert_eq!(client_ip(outside, Some(xff), &trusted), outside);
});
