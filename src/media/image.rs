//! JPEG, PNG and WebP: decode to pixels, re-encode, keep nothing else.
//!
//! Re-encoding is the strongest guarantee we can give: the output is written by our
//! encoder from a pixel buffer, so no EXIF, XMP, IPTC, ICC profile, comment, text
//! chunk or appended polyglot tail can survive, whatever the input hid where.
//!
//! Promises:
//! - width × height is read from the header and checked against `max_pixels` before a
//!   single pixel is decoded; the decoder also runs under `image::Limits`;
//! - the EXIF orientation is applied to the pixels before EXIF is dropped, so phone
//!   photos are upright;
//! - JPEG comes out as baseline JPEG (quality 88, no alpha), PNG as PNG, WebP as
//!   lossless WebP (the only WebP the `image` crate writes; lossy input may grow);
//! - an animated WebP or APNG keeps its first frame only;
//! - colour profiles are dropped (wide-gamut photos may look a little less saturated).

use std::io::Cursor;

use image::codecs::jpeg::{JpegDecoder, JpegEncoder};
use image::codecs::png::{PngDecoder, PngEncoder};
use image::codecs::webp::{WebPDecoder, WebPEncoder};
use image::{DynamicImage, ImageDecoder, ImageEncoder, metadata::Orientation};

use super::sniff::Format;
use super::{Clean, Kind, Limits, Rejection};

const CORRUPT: Rejection = Rejection::Corrupt { kind: Kind::Image };
const JPEG_QUALITY: u8 = 88;

pub fn sanitize(format: Format, input: &[u8], limits: &Limits) -> Result<Clean, Rejection> {
    let cursor = Cursor::new(input);
    let (image, mime) = match format {
        Format::Jpeg => (decode(JpegDecoder::new(cursor).map_err(|_| CORRUPT)?, limits)?, "image/jpeg"),
        Format::Png => (decode(PngDecoder::new(cursor).map_err(|_| CORRUPT)?, limits)?, "image/png"),
        Format::Webp => (decode(WebPDecoder::new(cursor).map_err(|_| CORRUPT)?, limits)?, "image/webp"),
        _ => return Err(Rejection::UnsupportedType),
    };
    let bytes = match format {
        Format::Jpeg => encode_jpeg(&image)?,
        Format::Png => encode_png(&image)?,
        _ => encode_webp(&image)?,
    };
    Ok(Clean { kind: Kind::Image, mime, bytes, width: Some(image.width()), height: Some(image.height()) })
}

/// Refuses a decompression bomb from the header alone, before any allocation for pixels.
pub fn check_pixels(width: u32, height: u32, limits: &Limits) -> Result<(), Rejection> {
    if width == 0 || height == 0 {
        return Err(CORRUPT);
    }
    if u64::from(width) * u64::from(height) > limits.max_pixels {
        return Err(Rejection::TooManyPixels { limit: limits.max_pixels });
    }
    Ok(())
}

fn decode(mut decoder: impl ImageDecoder, limits: &Limits) -> Result<DynamicImage, Rejection> {
    let (width, height) = decoder.dimensions();
    check_pixels(width, height, limits)?;
    let mut decode_limits = image::Limits::default();
    // Up to 16-bit RGBA (8 bytes a pixel) plus room for the decoder's own buffers.
    decode_limits.max_alloc = Some(limits.max_pixels.saturating_mul(8).saturating_add(64 << 20));
    decoder.set_limits(decode_limits).map_err(|_| Rejection::TooManyPixels { limit: limits.max_pixels })?;
    // A broken EXIF block is no reason to refuse a photo: it is dropped anyway.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(|_| CORRUPT)?;
    image.apply_orientation(orientation);
    Ok(image)
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, Rejection> {
    let mut out = Vec::new();
    // JPEG has no alpha and our encoder takes 8-bit only; grey stays grey (smaller).
    let flat = if image.color().has_color() {
        DynamicImage::ImageRgb8(image.to_rgb8())
    } else {
        DynamicImage::ImageLuma8(image.to_luma8())
    };
    JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY).encode_image(&flat).map_err(|_| CORRUPT)?;
    Ok(out)
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, Rejection> {
    let mut out = Vec::new();
    let encoder = PngEncoder::new(&mut out);
    encoder.write_image(image.as_bytes(), image.width(), image.height(), image.color().into()).map_err(|_| CORRUPT)?;
    Ok(out)
}

fn encode_webp(image: &DynamicImage) -> Result<Vec<u8>, Rejection> {
    let mut out = Vec::new();
    // The lossless WebP encoder takes 8-bit RGB(A) only.
    let flat = if image.color().has_alpha() {
        DynamicImage::ImageRgba8(image.to_rgba8())
    } else {
        DynamicImage::ImageRgb8(image.to_rgb8())
    };
    let encoder = WebPEncoder::new_lossless(&mut out);
    encoder.write_image(flat.as_bytes(), flat.width(), flat.height(), flat.color().into()).map_err(|_| CORRUPT)?;
    Ok(out)
}
