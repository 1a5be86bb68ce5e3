//! GIF: re-encode frame by frame from the decoded palette indices.
//!
//! A GIF hides metadata in extension blocks (comments, XMP and other application
//! extensions, plain text). We decode every frame to its palette indices with the
//! `gif` crate and write a new file from those indices, the palettes and the few
//! fields that drive playback (delay, disposal, transparency, position, loop count).
//! Nothing else is written, so no extension and no appended tail survives, while the
//! picture and its animation are kept exactly (no colour quantisation).
//!
//! Promises: the screen's width × height is checked against `max_pixels` before any
//! frame is decoded; the pixels of all frames together are bounded by
//! `FRAME_BUDGET × max_pixels` and the frame count by `MAX_FRAMES` (both refused as
//! `TooManyPixels`); every frame must lie inside the screen and be non-empty; frames are
//! streamed, so memory stays at about one frame.

use std::io::Cursor;

use ::gif::{ColorOutput, DecodeOptions, Encoder, MemoryLimit, Repeat};

use super::image::check_pixels;
use super::{Clean, Kind, Limits, Rejection};

const CORRUPT: Rejection = Rejection::Corrupt { kind: Kind::Image };
/// Animation frames may add up to this many screens' worth of pixels.
const FRAME_BUDGET: u64 = 8;
const MAX_FRAMES: usize = 5_000;

pub fn sanitize(input: &[u8], limits: &Limits) -> Result<Clean, Rejection> {
    let too_many = Rejection::TooManyPixels { limit: limits.max_pixels };
    // The logical screen descriptor, read by hand so the bound holds before the decoder exists.
    match input.get(6..10) {
        Some(&[w0, w1, h0, h1]) => {
            check_pixels(u32::from(u16::from_le_bytes([w0, w1])), u32::from(u16::from_le_bytes([h0, h1])), limits)?
        }
        _ => return Err(CORRUPT),
    }
    let mut options = DecodeOptions::new();
    options.set_color_output(ColorOutput::Indexed);
    options.check_frame_consistency(true);
    // One byte a pixel for indexed output; frames must fit the screen, itself within the limit.
    let frame_bytes = std::num::NonZeroU64::new(limits.max_pixels.max(1 << 20)).ok_or(CORRUPT)?;
    options.set_memory_limit(MemoryLimit::Bytes(frame_bytes));
    let mut decoder = options.read_info(Cursor::new(input)).map_err(|_| CORRUPT)?;
    let (width, height) = (decoder.width(), decoder.height());
    let global_palette = decoder.global_palette().unwrap_or(&[]).to_vec();

    let mut encoder: Option<Encoder<Vec<u8>>> = None;
    let mut frames = 0usize;
    let mut pixels = 0u64;
    while let Some(frame) = decoder.read_next_frame().map_err(|_| CORRUPT)? {
        // Owned, so that the decoder can be asked for the loop count below.
        let frame = frame.clone();
        frames += 1;
        pixels = pixels.saturating_add(u64::from(frame.width) * u64::from(frame.height));
        if frames > MAX_FRAMES || pixels > limits.max_pixels.saturating_mul(FRAME_BUDGET) {
            return Err(too_many);
        }
        if frame.width == 0 || frame.height == 0 || (frame.palette.is_none() && global_palette.is_empty()) {
            return Err(CORRUPT);
        }
        let encoder = match encoder.as_mut() {
            Some(encoder) => encoder,
            None => {
                // The loop count sits in an extension read before the first frame.
                let repeat = decoder.repeat();
                let mut fresh = Encoder::new(Vec::new(), width, height, &global_palette).map_err(|_| CORRUPT)?;
                if frames_may_animate(repeat) {
                    fresh.set_repeat(repeat).map_err(|_| CORRUPT)?;
                }
                encoder.insert(fresh)
            }
        };
        // Only the fields that drive playback are carried over; the rest stays default.
        let clean = ::gif::Frame {
            delay: frame.delay,
            dispose: frame.dispose,
            transparent: frame.transparent,
            top: frame.top,
            left: frame.left,
            width: frame.width,
            height: frame.height,
            interlaced: false,
            palette: frame.palette,
            buffer: frame.buffer,
            ..::gif::Frame::default()
        };
        encoder.write_frame(&clean).map_err(|_| CORRUPT)?;
    }
    let bytes = encoder.ok_or(CORRUPT)?.into_inner().map_err(|_| CORRUPT)?;
    Ok(Clean {
        kind: Kind::Image,
        mime: "image/gif",
        bytes,
        width: Some(u32::from(width)),
        height: Some(u32::from(height)),
    })
}

/// A file without a loop extension plays once; writing none keeps that.
fn frames_may_animate(repeat: Repeat) -> bool {
    repeat != Repeat::Finite(0)
}
