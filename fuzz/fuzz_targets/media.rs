//! Any bytes as an upload: `sanitize` must never panic, and what it accepts must be
//! accepted again as the same kind and type (what we store is itself a valid upload).
//! Seed the corpus with `tests/fixtures/media/*` for a quick start:
//!   cargo +nightly fuzz run media fuzz/corpus/media ../tests/fixtures/media
#![no_main]

use anonpoll::media::{Limits, sanitize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Small limits keep each run fast; the pixel bound still lets tiny images decode.
    let limits = Limits { image_bytes: 1 << 20, audio_bytes: 1 << 20, video_bytes: 1 << 20, max_pixels: 1 << 20 };
    if let Ok(clean) = sanitize(data, &limits) {
        let again = sanitize(&clean.bytes, &limits);
        assert!(again.is_ok_and(|a| a.kind == clean.kind && a.mime == clean.mime));
    }
});
