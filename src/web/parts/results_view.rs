//! The results as tables with bars: the results page shows them, and so do
//! the admin page and a voter's own-ballot page.
//!
//! Charts are decoration: every number is in a table (caption, header
//! cells), so screen readers and text browsers get the same information;
//! the bars are SVG rectangles sized by attributes, which the strict CSP
//! allows (no inline style).

use maud::{Markup, html};

use crate::domain::results::{QuestionFigures, Results, percent};
use crate::domain::{Lang, Poll, Slot, Texts};
use crate::web::layout::{Ctx, lang_attr};
use crate::web::media::figure;

/// The results as tables with bars; `level` is the heading level to use.
pub fn results_section(ctx: &Ctx, poll: &Poll, results: &Results, level: u8) -> Markup {
    let t = ctx.t;
    let (content_lang, _, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let max_day = results.by_day.iter().map(|(_, n)| *n).max().unwrap_or(0);
    html! {
        section.results aria-labelledby="results-heading" {
            @if level == 2 { h2 id="results-heading" { (t.results_heading) } } @else { h3 id="results-heading" { (t.results_heading) } }
            p.total { strong { ((t.responses_total)(results.total)) } }
            @for (i, (texts, figures)) in questions.iter().zip(&results.questions).enumerate() {
                // The question is named once on screen, by its heading; its
                // picture (as on the share page) comes between the heading
                // and the answers; the tables' captions name the question
                // again for screen readers only.
                @let heading_id = format!("result-q{i}-heading");
                @if level == 2 {
                    h3.question id=(heading_id) lang=[clang] { (texts.label.as_str()) }
                } @else {
                    h4.question id=(heading_id) lang=[clang] { (texts.label.as_str()) }
                }
                @if let Some(m) = poll.media_at(Slot::Question(i)) { (figure(ctx, m, poll.lang)) }
                @let zone = poll.questions.get(i).and_then(|q| q.time_zone.as_ref()).map(|z| z.as_str());
                (question_results(ctx, clang, i, texts, figures, zone))
            }
            @if level == 2 { h2 { (t.by_day_heading) } } @else { h3 { (t.by_day_heading) } }
            @if results.by_day.is_empty() {
                p { (t.no_responses) }
            } @else {
                div.table-wrap {
                    table.tally.by-day {
                        caption.visually-hidden { (t.by_day_heading) }
                        thead { tr { th scope="col" { (t.col_day) } th scope="col" .num { (t.col_responses) } } }
                        tbody {
                            @for (day, n) in &results.by_day {
                                @let d = day.to_string();
                                tr {
                                    th scope="row" { time datetime=(d) { (t.day(&d)) } (bar(percent(*n, max_day))) }
                                    td.num { (n) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One question's results, drawn for its type: bars per option (single,
/// multiple), the ranking with its places, first choices and the pairwise
/// counts (ranked), a histogram with mean and median (scale), the slots
/// best first (schedule).
fn question_results(
    ctx: &Ctx,
    clang: Option<&str>,
    i: usize,
    texts: &Texts<'_>,
    figures: &QuestionFigures,
    zone: Option<&str>,
) -> Markup {
    let t = ctx.t;
    let answered = figures.answered;
    // The question's heading names it on screen; the caption, for screen
    // readers, again.
    let caption = html! {
        caption { span.visually-hidden lang=[clang] { (texts.label.as_str()) " · " } span.answered { ((t.answered)(answered)) } }
    };
    let count_heading = if figures.ranked.is_some() { t.first_choices } else { t.col_votes };
    if let Some(schedule) = &figures.schedule {
        return super::schedule::results_table(ctx, i, caption, texts.options, schedule, zone);
    }
    html! {
        @if let Some(scale) = &figures.scale {
            div.table-wrap {
                table.tally.scale id=(format!("result-q{i}")) {
                    (caption)
                    thead { tr { th scope="col" { (t.col_value) } th scope="col" .num { (t.col_votes) } th scope="col" .num { (t.col_share) } } }
                    tbody {
                        @let decimal = needs_decimal(scale.distribution.iter().map(|(_, n)| *n), answered);
                        @for (v, n) in &scale.distribution {
                            tr { th scope="row" { (v) (bar(percent(*n, answered))) } td.num { (n) } td.num { (share(t, *n, answered, decimal)) } }
                        }
                    }
                }
            }
            @if let (Some(mean), Some(median)) = (scale.mean, scale.median) {
                p.scale-summary id=(format!("result-q{i}-summary")) {
                    (t.scale_mean) (t.colon) strong.mean { (number(ctx.lang, mean)) } " · " (t.scale_median) (t.colon) strong.median { (number(ctx.lang, median)) }
                }
            }
        } @else {
            @if figures.ranked.is_some() && answered == 0 {
                // With nobody ranking, every option would share the first
                // place: say what that means instead.
                p.ranking-none id=(format!("result-q{i}-ranking")) { (t.ranking_none) }
            } @else if let Some(ranked) = &figures.ranked {
                div.table-wrap {
                    table.tally.ranking id=(format!("result-q{i}-ranking")) {
                        caption {
                            span.visually-hidden lang=[clang] { (texts.label.as_str()) " · " }
                            span.answered { (t.ranking_heading) " · " ((t.answered)(answered)) }
                        }
                        thead { tr { th scope="col" { (t.col_place) } th scope="col" { (t.col_answer) } } }
                        tbody {
                            @for (k, place) in ranked.places() {
                                // A shared place says so, next to its number.
                                tr class=[(place.len() > 1).then_some("shared")] {
                                    th scope="row" .place {
                                        @if place.len() > 1 { ((t.place_shared)(&(t.place)(k))) } @else { ((t.place)(k)) }
                                    }
                                    td lang=[clang] {
                                        @if let [o] = place {
                                            (texts.options.get(*o).map_or("", |o| o.as_str()))
                                        } @else {
                                            ul.tied {
                                                @for o in place { li { (texts.options.get(*o).map_or("", |o| o.as_str())) } }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            div.table-wrap {
                table.tally id=(format!("result-q{i}")) {
                    @if figures.ranked.is_some() {
                        caption.sub { span.visually-hidden lang=[clang] { (texts.label.as_str()) " · " } (t.first_choices) }
                    } @else {
                        (caption)
                    }
                    thead { tr { th scope="col" { (t.col_answer) } th scope="col" .num { (count_heading) } th scope="col" .num { (t.col_share) } } }
                    tbody {
                        @let decimal = needs_decimal(figures.options.iter().map(|f| f.count), answered);
                        // The answer(s) with the most votes are marked in
                        // words (and drawn stronger), not by colour alone;
                        // a ranking's winner is its first place instead.
                        // When every answer has the most (a tie of all), none is marked:
                        // "Most votes" on each would say nothing.
                        @let most = figures.options.iter().map(|f| f.count).max().filter(|m| {
                            *m > 0 && figures.ranked.is_none() && figures.options.iter().any(|f| f.count != *m)
                        });
                        @for (o, f) in texts.options.iter().zip(&figures.options) {
                            @let leading = most == Some(f.count);
                            tr class=[leading.then_some("leading")] {
                                th scope="row" {
                                    span lang=[clang] { (o.as_str()) }
                                    @if leading { " " span.lead-mark { (t.leading) } }
                                    (bar(f.percent))
                                }
                                td.num { (f.count) }
                                td.num { (share(t, f.count, answered, decimal)) }
                            }
                        }
                    }
                }
            }
            @if let Some(ranked) = &figures.ranked {
                details.pairwise {
                    summary { (t.pairwise_heading) }
                    // The table's words, or the cards': app.css
                    // shows the one that matches what is drawn.
                    p.hint.pairwise-hint-table { (t.pairwise_hint) }
                    p.hint.pairwise-hint-cards { (t.pairwise_hint_cards) }
                    // Wider than a phone with many options: below ~600 px
                    // each row stacks as a card (its answer on top, one line
                    // per other answer, named from `data-label`), the ARIA
                    // roles keeping it a table; wider, a very large one
                    // scrolls in its own box, which takes focus so keyboards
                    // can scroll it.
                    div.table-wrap.scroll role="region" tabindex="0" aria-labelledby=(format!("result-q{i}-pairwise-caption")) {
                        table.tally.pairwise.stacks id=(format!("result-q{i}-pairwise")) role="table" {
                            caption.visually-hidden id=(format!("result-q{i}-pairwise-caption")) { span lang=[clang] { (texts.label.as_str()) } " · " (t.pairwise_heading) }
                            thead role="rowgroup" { tr role="row" { td role="cell" {} @for o in texts.options { th scope="col" role="columnheader" lang=[clang] { (o.as_str()) } } } }
                            tbody role="rowgroup" {
                                @for (a, row) in ranked.pairwise.iter().enumerate() {
                                    tr role="row" {
                                        th scope="row" role="rowheader" lang=[clang] { (texts.options.get(a).map_or("", |o| o.as_str())) }
                                        @for (b, n) in row.iter().enumerate() {
                                            @let label = texts.options.get(b).map_or("", |o| o.as_str());
                                            @if a == b { td.num.self role="cell" data-label=(label) { "–" } } @else { td.num role="cell" data-label=(label) { (n) } }
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
}

/// Whether a question's shares need a decimal: when two different counts
/// would show the same whole percentage, or a count would read as none or
/// as all of them ("0 %" for a real vote, "100 %" beside another answer).
fn needs_decimal(counts: impl Iterator<Item = u64>, of: u64) -> bool {
    let mut seen: Vec<(u64, u64)> = Vec::new();
    for count in counts {
        let whole = whole_percent(count, of);
        if (count > 0 && whole == 0) || (count < of && whole == 100) {
            return true;
        }
        if seen.iter().any(|&(c, w)| w == whole && c != count) {
            return true;
        }
        seen.push((count, whole));
    }
    false
}

/// `count` of `of` as a whole percentage (0 when nothing was answered).
fn whole_percent(count: u64, of: u64) -> u64 {
    if of == 0 { 0 } else { (count * 200 + of) / (2 * of) }
}

/// A share as shown: whole, or with the language's one decimal.
fn share(t: &crate::i18n::Catalogue, count: u64, of: u64, decimal: bool) -> String {
    if decimal { (t.percent)(percent(count, of), 1) } else { (t.percent)(whole_percent(count, of) as f64, 0) }
}

/// A mean or median: whole numbers without decimals, others with up to
/// two, with the decimal sign of `lang`.
fn number(lang: Lang, x: f64) -> String {
    let s = format!("{x:.2}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if lang == Lang::En { s.to_owned() } else { s.replace('.', ",") }
}

/// A bar of `pct` percent; hidden from assistive technology, which reads the
/// numbers in the table instead.
fn bar(pct: f64) -> Markup {
    let width = format!("{:.1}", pct.clamp(0.0, 100.0));
    html! {
        svg.share-bar viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true" focusable="false" {
            rect.track x="0" y="0" width="100" height="6" {}
            rect.fill x="0" y="0" width=(width) height="6" {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::catalogue;

    #[test]
    fn shares_are_whole_unless_two_different_counts_would_look_the_same() {
        let t = catalogue(Lang::En);
        assert!(!needs_decimal([1, 1, 1].into_iter(), 3));
        assert!(!needs_decimal([2, 1, 0].into_iter(), 3));
        // 1 and 2 of 200 both round to 1 %.
        assert!(needs_decimal([1, 2, 197].into_iter(), 200));
        // A real vote never reads as none, nor one answer short of all as all.
        assert!(needs_decimal([1, 299].into_iter(), 300));
        assert!(needs_decimal([1999, 1].into_iter(), 2000));
        assert!(!needs_decimal([0, 300].into_iter(), 300));
        assert_eq!(share(t, 1, 3, false), "33%");
        assert_eq!(share(t, 3, 3, false), "100%");
        assert_eq!(share(t, 0, 0, false), "0%");
        assert_eq!(share(t, 1, 300, true), "0.3%");
        assert_eq!(share(catalogue(Lang::Fr), 2, 3, false), "67\u{202F}%");
        assert_eq!(share(catalogue(Lang::De), 1, 2, false), "50\u{A0}%");
    }

    #[test]
    fn french_labels_and_values_are_joined_with_a_narrow_space_before_the_colon() {
        let ctx = Ctx::new(crate::web::lang::Choice { lang: Lang::Fr, explicit: false }, "/");
        let label = crate::domain::Label::from_text("Note").map_err(|e| format!("{e:?}"));
        let Ok(label) = label else { panic!("label") };
        let texts = Texts { label: &label, options: &[], min_label: None, max_label: None };
        let figures = QuestionFigures {
            answered: 2,
            options: Vec::new(),
            ranked: None,
            scale: Some(crate::domain::results::ScaleFigures {
                distribution: vec![(1, 1), (2, 1)],
                mean: Some(1.5),
                median: Some(1.5),
            }),
            schedule: None,
        };
        let html = question_results(&ctx, None, 0, &texts, &figures, None).into_string();
        assert!(html.contains("Moyenne\u{202F}: "), "{html}");
        assert!(!html.contains(" :"), "{html}");
    }
}
