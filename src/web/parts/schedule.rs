//! A schedule question on the pages: its slots grouped by day in the vote
//! form (yes, if need be, no per slot, as radio buttons), and its results
//! (per slot the three counts, best slots first and marked).
//!
//! Why a part of its own: the share page, a voter's own-ballot page, the
//! results page and the admin page all show it; the vote form's other
//! widgets stay in `vote_form.rs`.
//!
//! Promises: no script is needed (radio buttons, one tap each); each
//! slot's three answers are one radio group named `q{i}s{j}` with the
//! values `yes`, `ifneedbe`, `no` (docs/WEB.md), labelled by the slot's day
//! and time; days and times are written in the reader's language, the
//! slots' own (local) times unchanged.

use maud::{Markup, html};

use crate::domain::{Availability, DateSlot, OptionText, ScheduleFigures};
use crate::web::layout::Ctx;

/// The slots of a question's options, with their indices, grouped by day
/// (they are in time order, so each day's slots are together).
fn by_day(options: &[OptionText]) -> Vec<(DateSlot, Vec<(usize, DateSlot)>)> {
    let mut days: Vec<(DateSlot, Vec<(usize, DateSlot)>)> = Vec::new();
    for (j, slot) in options.iter().enumerate().filter_map(|(j, o)| DateSlot::parse(o.as_str()).map(|s| (j, s))) {
        match days.last_mut() {
            Some((first, slots)) if first.day == slot.day => slots.push((j, slot)),
            _ => days.push((slot, vec![(j, slot)])),
        }
    }
    days
}

/// The answer given for slot `j`, as the vote form keeps it: 0 for none,
/// else the availability's code plus one.
pub fn entered_code(a: Availability) -> usize {
    usize::from(a.code()) + 1
}

/// The vote form's widget: per day its slots, per slot three radios.
/// `chosen(j)` is what was entered for slot `j` (see [`entered_code`]).
pub fn vote_widget(
    ctx: &Ctx,
    i: usize,
    options: &[OptionText],
    time_zone: Option<&str>,
    chosen: impl Fn(usize) -> usize,
    invalid: Option<&str>,
) -> Markup {
    let t = ctx.t;
    let answers = [
        (Availability::Yes, t.avail_yes),
        (Availability::IfNeedBe, t.avail_if_need_be),
        (Availability::No, t.avail_no),
    ];
    html! {
        div.schedule {
            @if let Some(zone) = time_zone { p.hint.time-zone { ((t.times_in)(zone)) } }
            @for (first, slots) in by_day(options) {
                @let day = t.slot_day(&first);
                div.slot-day {
                    p.slot-day-name aria-hidden="true" { (day) }
                    @for (j, slot) in slots {
                        @let name = format!("q{i}s{j}");
                        @let name_id = format!("{name}-name");
                        div.slot role="radiogroup" aria-labelledby=(name_id) {
                            span.slot-time id=(name_id) {
                                span.visually-hidden { (day) ", " }
                                (t.slot_time(&slot))
                            }
                            div.scale-values.avail {
                                @for (a, label) in answers {
                                    @let id = format!("{name}-{}", a.word());
                                    span.scale-value.(format!("avail-{}", a.word())) {
                                        input type="radio" id=(id) name=(name) value=(a.word())
                                            checked[chosen(j) == entered_code(a)] aria-invalid=[invalid];
                                        label for=(id) { (label) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The results of a schedule question: a table of its slots, best first,
/// the best ones marked in words, under the time zone if it names one.
pub fn results_table(
    ctx: &Ctx,
    i: usize,
    caption: Markup,
    options: &[OptionText],
    f: &ScheduleFigures,
    time_zone: Option<&str>,
) -> Markup {
    let t = ctx.t;
    let slots: Vec<Option<DateSlot>> = options.iter().map(|o| DateSlot::parse(o.as_str())).collect();
    html! {
        @if let Some(zone) = time_zone { p.hint.time-zone { ((t.times_in)(zone)) } }
        div.table-wrap {
            table.tally.schedule id=(format!("result-q{i}")) {
                (caption)
                thead {
                    tr {
                        th scope="col" { (t.slots_best_first) }
                        th scope="col" .num { (t.avail_yes) }
                        th scope="col" .num { (t.avail_if_need_be) }
                        th scope="col" .num { (t.avail_no) }
                    }
                }
                tbody {
                    @for &j in &f.order {
                        @if let (Some(Some(slot)), Some(n)) = (slots.get(j), f.slots.get(j)) {
                            tr class=[n.best.then_some("leading")] {
                                th scope="row" {
                                    span.slot-when { (t.slot(slot)) }
                                    @if n.best { " " span.lead-mark { (t.best_slot) } }
                                }
                                td.num { (n.yes) }
                                td.num { (n.if_need_be) }
                                td.num { (n.no) }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Lang;
    use crate::i18n::catalogue;

    #[test]
    fn slots_are_written_in_the_readers_language() {
        let slot = DateSlot::parse("2027-01-14T18:30").unwrap();
        assert_eq!(catalogue(Lang::En).slot(&slot), "Thursday 14 January 2027, 18:30");
        assert_eq!(catalogue(Lang::De).slot(&slot), "Donnerstag, 14. Januar 2027, 18:30");
        let day = DateSlot::parse("2027-01-01").unwrap();
        assert_eq!(catalogue(Lang::Fr).slot(&day), "vendredi 1er janvier 2027, toute la journée");
        assert_eq!(catalogue(Lang::It).slot_day(&day), "venerdì 1º gennaio 2027");
    }

    #[test]
    fn slots_are_grouped_by_their_day() {
        let opts: Vec<OptionText> = ["2027-01-14", "2027-01-14T18:00", "2027-01-15T09:00"]
            .iter()
            .map(|s| OptionText::from_text(s).unwrap())
            .collect();
        let groups = by_day(&opts);
        let shape: Vec<Vec<usize>> = groups.iter().map(|(_, s)| s.iter().map(|(j, _)| *j).collect()).collect();
        assert_eq!(shape, [vec![0, 1], vec![2]]);
    }
}
