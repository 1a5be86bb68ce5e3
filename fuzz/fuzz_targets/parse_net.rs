//! Any `--trusted-proxy` value: a network that prints and parses back, or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    if let Ok(net) = anonpoll::client::parse_net(s) {
        assert_eq!(anonpoll::client::parse_net(&net.to_string()), Ok(net));
    }
});
