//! Bounds-checked big- and little-endian reads shared by the container parsers.
//!
//! Exists so that no parser indexes a slice with an offset taken from the input: every
//! read returns `None` past the end, which the callers turn into `Corrupt`.

pub fn u8_at(buf: &[u8], pos: usize) -> Option<u8> {
    buf.get(pos).copied()
}

pub fn be_u16(buf: &[u8], pos: usize) -> Option<u16> {
    Some(u16::from_be_bytes(*buf.get(pos..)?.first_chunk()?))
}

pub fn be_u32(buf: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_be_bytes(*buf.get(pos..)?.first_chunk()?))
}

pub fn be_u64(buf: &[u8], pos: usize) -> Option<u64> {
    Some(u64::from_be_bytes(*buf.get(pos..)?.first_chunk()?))
}

pub fn fourcc(buf: &[u8], pos: usize) -> Option<[u8; 4]> {
    buf.get(pos..)?.first_chunk().copied()
}

/// Zeroes `range` of `buf`, clamped to the buffer: callers only pass checked ranges,
/// and clamping keeps a mistake from becoming a panic.
pub fn zero(buf: &mut [u8], start: usize, end: usize) {
    let end = end.min(buf.len());
    if let Some(slice) = buf.get_mut(start.min(end)..end) {
        slice.fill(0);
    }
}

pub fn le_u32(buf: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_le_bytes(*buf.get(pos..)?.first_chunk()?))
}
