//! Calendar days: the only notion of time anonpoll stores or shows.
//!
//! A [`Day`] has no time of day and no time zone beyond "UTC calendar day", so
//! nothing finer than a date can leak from the database or an API response.

use std::fmt;
use time::{Date, Duration, OffsetDateTime, format_description::BorrowedFormatItem, macros::format_description};

const FORMAT: &[BorrowedFormatItem<'static>] = format_description!("[year]-[month]-[day]");

/// A UTC calendar day, written `YYYY-MM-DD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(Date);

impl Day {
    /// Today in UTC.
    pub fn today() -> Day {
        Day(OffsetDateTime::now_utc().date())
    }

    /// Parses exactly `YYYY-MM-DD`.
    pub fn parse(s: &str) -> Option<Day> {
        if s.len() != 10 {
            return None;
        }
        Date::parse(s, FORMAT).ok().map(Day)
    }

    /// The day `days` days after this one (saturating at the calendar's end).
    pub fn plus_days(self, days: u16) -> Day {
        Day(self.0.checked_add(Duration::days(i64::from(days))).unwrap_or(Date::MAX))
    }

    /// The day before this one.
    pub fn previous(self) -> Day {
        Day(self.0.previous_day().unwrap_or(self.0))
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The format is fixed and valid for every Date in the 4-digit-year range.
        match self.0.format(FORMAT) {
            Ok(s) => f.write_str(&s),
            Err(_) => Err(fmt::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_day_only() {
        let d = Day::parse("2026-02-28").unwrap();
        assert_eq!(d.to_string(), "2026-02-28");
        assert_eq!(d.plus_days(1).to_string(), "2026-03-01");
        assert_eq!(d.previous().to_string(), "2026-02-27");
        assert!(Day::parse("2026-2-28").is_none());
        assert!(Day::parse("2026-02-28T10:00").is_none());
        assert!(Day::parse("2026-02-30").is_none());
        let today = Day::today().to_string();
        assert_eq!(today.len(), 10);
        assert!(today.chars().all(|c| c.is_ascii_digit() || c == '-'));
    }
}
