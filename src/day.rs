//! Calendar days: the only notion of time anonpoll stores or shows.
//!
//! A [`Day`] has no time of day and no time zone beyond "UTC calendar day", so
//! nothing finer than a date can leak from the database or an API response.

use std::fmt;
use time::{Date, Duration, OffsetDateTime, format_description::BorrowedFormatItem, macros::format_description};

/// The Julian day number of 1970-01-01.
const UNIX_EPOCH_JULIAN: i64 = 2_440_588;

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

    /// The day after this one (saturating at the calendar's end).
    pub fn next(self) -> Day {
        Day(self.0.next_day().unwrap_or(self.0))
    }

    /// Whole days from `earlier` to this day (negative if `earlier` is later).
    pub fn days_since(self, earlier: Day) -> i64 {
        (self.0 - earlier.0).whole_days()
    }

    /// The day of the week, 0 for Monday to 6 for Sunday (ISO 8601's order).
    pub fn weekday(self) -> usize {
        usize::from(self.0.weekday().number_days_from_monday())
    }

    /// Year, month (1–12) and day of the month.
    pub fn parts(self) -> (i32, u8, u8) {
        (self.0.year(), u8::from(self.0.month()), self.0.day())
    }

    /// Days since 1970-01-01: how stored counts write a day in few bytes.
    pub fn number(self) -> i64 {
        i64::from(self.0.to_julian_day()) - UNIX_EPOCH_JULIAN
    }

    /// The day [`Day::number`] gave `n`.
    pub fn from_number(n: i64) -> Option<Day> {
        let julian = i32::try_from(n.checked_add(UNIX_EPOCH_JULIAN)?).ok()?;
        Date::from_julian_day(julian).ok().map(Day)
    }
}

/// Stored and sent as `YYYY-MM-DD`.
impl serde::Serialize for Day {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Day {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Day, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Day::parse(&s).ok_or_else(|| serde::de::Error::custom("not a YYYY-MM-DD day"))
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
        assert_eq!(d.next().to_string(), "2026-03-01");
        assert_eq!(Day::parse("1970-01-02").unwrap().number(), 1);
        assert_eq!(Day::from_number(d.number()), Some(d));
        assert_eq!(d.next().days_since(d.previous()), 2);
        assert!(Day::parse("2026-2-28").is_none());
        assert!(Day::parse("2026-02-28T10:00").is_none());
        assert!(Day::parse("2026-02-30").is_none());
        let today = Day::today().to_string();
        assert_eq!(today.len(), 10);
        assert!(today.chars().all(|c| c.is_ascii_digit() || c == '-'));
    }
}
