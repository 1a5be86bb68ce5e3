//! Identifier and date shapes: what an id, a token or a stored date may look
//! like, and today's UTC date (plus or minus days) as the server must write
//! it. Dates come from the `time` crate, independently of the server's own
//! `Day`, so a test compares the server against a second opinion.

use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime};

const YMD: &[time::format_description::BorrowedFormatItem<'static>] = format_description!("[year]-[month]-[day]");

/// Only the base64url alphabet (`A–Z a–z 0–9 - _`), as in ids and tokens.
pub fn is_url_safe(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Shaped like `YYYY-MM-DD` (digits and dashes), valid or not: what a
/// search for dates must find, so a malformed date cannot hide.
fn ymd_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// Exactly `YYYY-MM-DD`, and a real calendar day.
pub fn is_ymd(s: &str) -> bool {
    ymd_shaped(s) && Date::parse(s, YMD).is_ok()
}

/// True if `s` contains something shaped like `YYYY-MM-DD` anywhere.
pub fn contains_ymd(s: &str) -> bool {
    s.char_indices().any(|(i, _)| s.get(i..i + 10).is_some_and(ymd_shaped))
}

/// True if `s` contains something shaped like a time of day (`HH:MM`).
pub fn contains_time_of_day(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(5).any(|w| {
        w[0].is_ascii_digit() && w[1].is_ascii_digit() && w[2] == b':' && w[3].is_ascii_digit() && w[4].is_ascii_digit()
    })
}

/// The UTC date `days` from today (negative: before) as `YYYY-MM-DD`.
pub fn date_from_today(days: i64) -> String {
    let day = OffsetDateTime::now_utc().date() + Duration::days(days);
    day.format(YMD).expect("a 4-digit year formats")
}

/// Today's UTC date as `YYYY-MM-DD`.
pub fn today() -> String {
    date_from_today(0)
}
