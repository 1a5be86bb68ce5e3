//! How pollctl prints what a command found: the JSON document (`--json`)
//! or the text for people, one pair of functions per kind of result, and
//! the files `export` writes (the API's JSON, CSV per option, CSV per
//! ballot).
//!
//! Why a module of its own: pollctl's output is a documented interface
//! (scripts read its JSON and text, spreadsheets its CSV files;
//! docs/OPERATIONS.md), kept apart from what each verb does
//! (`commands.rs`) so that neither can change the other by accident.
//! Promises: `--json` prints one JSON document and nothing else on stdout;
//! a poll's JSON is the API's own (`api::json`); a CSV cell that starts
//! like a formula never runs as one.

use anyhow::anyhow;
use serde_json::{Value, json};

use super::{Cli, Failure};
use crate::api::json;
use crate::day::Day;
use crate::domain::{Answer, Ballot, Poll, QuestionKind};
use crate::store::{Due, Health, PollCheck, Stats, SweepReport};

/// Prints `value` with `--json`, else the text `text` makes.
pub(super) fn print(cli: &Cli, value: &Value, text: impl FnOnce() -> String) {
    if cli.json {
        println!("{value}");
    } else {
        println!("{}", text());
    }
}

/// What a sweep as of `as_of` would erase (`sweep --dry-run`), in all and
/// per expiry day.
pub(super) fn sweep_preview(as_of: Day, due: &[Due]) -> Value {
    let sum = |f: fn(&Due) -> u64| due.iter().map(f).sum::<u64>();
    let days: Vec<Value> = due
        .iter()
        .map(|d| {
            json!({"expiresOn": d.expires_on.to_string(), "polls": d.polls, "responses": d.responses,
                "media": d.media, "mediaBytes": d.media_bytes})
        })
        .collect();
    json!({"asOf": as_of.to_string(), "dryRun": true, "pollsDue": sum(|d| d.polls),
        "responses": sum(|d| d.responses), "media": sum(|d| d.media), "mediaBytes": sum(|d| d.media_bytes),
        "byExpiryDay": days})
}

/// [`sweep_preview`] for people: its sums (read from `preview`), then a
/// line per expiry day.
pub(super) fn sweep_preview_text(as_of: Day, preview: &Value, due: &[Due]) -> String {
    let mut out = format!(
        "dry run, nothing erased: a sweep as of {as_of} would erase {} poll(s) with {} response(s) \
         and {} media file(s) of {} bytes",
        preview["pollsDue"], preview["responses"], preview["media"], preview["mediaBytes"]
    );
    for d in due {
        out.push_str(&format!(
            "\n  expiring {}: {} poll(s), {} response(s), {} media file(s) of {} bytes",
            d.expires_on, d.polls, d.responses, d.media, d.media_bytes
        ));
    }
    out
}

/// What a sweep as of `as_of` did.
pub(super) fn sweep_report(as_of: Day, report: &SweepReport) -> Value {
    json!({"asOf": as_of.to_string(), "pollsErased": report.polls_erased,
        "pollsRewrapped": report.polls_rewrapped, "pollsSetAside": report.polls_set_aside,
        "keyDay": report.key_day.to_string()})
}

/// [`sweep_report`] for people, with a line per poll set aside.
pub(super) fn sweep_report_text(as_of: Day, report: &SweepReport) -> String {
    let mut out = format!(
        "erased {} expired poll(s) as of {as_of}; re-wrapped {} poll key(s); key state at {}",
        report.polls_erased, report.polls_rewrapped, report.key_day
    );
    for poll in &report.polls_set_aside {
        out.push_str(&format!("\nset aside (its row cannot be read; see pollctl check): {poll}"));
    }
    out
}

/// The operator's figures (`stats`).
pub(super) fn stats(s: &Stats) -> Value {
    json!({
        "livePolls": s.live_polls, "expiredPolls": s.expired_polls,
        "responses": s.responses, "databaseBytes": s.database_bytes,
    })
}

/// [`stats`] for people.
pub(super) fn stats_text(s: &Stats) -> String {
    format!(
        "polls: {} live, {} expired awaiting sweep\nresponses: {}\ndatabase: {} bytes",
        s.live_polls, s.expired_polls, s.responses, s.database_bytes
    )
}

/// What `check` found: the engine's and the schema's health, the key
/// state's day (and whether it is behind today), the polls that do not
/// check out, and whether all is well.
pub(super) struct Checked<'a> {
    pub health: &'a Health,
    pub polls: &'a [PollCheck],
    pub key_day: Day,
    pub behind: bool,
    pub ok: bool,
}

pub(super) fn check(c: &Checked) -> Value {
    let listed: Vec<Value> = c.polls.iter().map(|p| json!({"poll": p.poll, "problem": p.problem})).collect();
    json!({"integrity": c.health.integrity, "schemaVersion": c.health.schema_version,
        "expectedSchemaVersion": c.health.binary_schema_version, "keyDay": c.key_day.to_string(),
        "keyStateBehind": c.behind, "pollsWithProblems": listed, "ok": c.ok})
}

/// [`check`] for people, with a line per poll that does not check out.
pub(super) fn check_text(c: &Checked) -> String {
    let h = c.health;
    let mut out = format!(
        "integrity: {}\nschema version: {} (this pollctl: {})\nkey state: {}{}\npolls checked: {}",
        h.integrity,
        h.schema_version,
        h.binary_schema_version,
        c.key_day,
        if c.behind { " (behind today: the day's key work has not run; run pollctl sweep)" } else { "" },
        if c.polls.is_empty() { "every poll opens, and its counts are a recount of its ballots" } else { "" },
    );
    for p in c.polls {
        out.push_str(&format!("\n  poll {}: {}", p.poll, p.problem));
    }
    out
}

/// The invite codes just issued, for people: `CODE<TAB>URL`, a line each,
/// read from the API's document `issued`.
pub(super) fn issued_text(issued: &Value) -> String {
    let lines: Vec<String> = issued["invites"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| format!("{}\t{}", i["code"].as_str().unwrap_or(""), i["url"].as_str().unwrap_or("")))
        .collect();
    lines.join("\n")
}

/// A poll for people: its settings, then its questions with their options.
pub(super) fn describe(poll: &Poll) -> String {
    let langs: Vec<&str> = poll.translations.keys().map(|l| l.code()).collect();
    let mut out = format!(
        "poll {}: {}\nlanguage: {}{}\nstatus: {}\nresults: {}\ncreated on {}, erased on {}\n",
        poll.id,
        poll.title,
        poll.lang.code(),
        if langs.is_empty() { String::new() } else { format!(" (also {})", langs.join(", ")) },
        json::status(poll),
        poll.visibility.as_str(),
        poll.created_on,
        poll.expires_on,
    );
    if let Some(day) = poll.closes_on {
        let passed = crate::domain::settings::deadline_passed(Some(day), Day::today());
        out.push_str(&format!("voting {} on {day}\n", if passed { "closed" } else { "closes" }));
    }
    if let Some(day) = poll.edited_on {
        out.push_str(&format!("title or questions edited on {day}\n"));
    }
    if poll.shuffle_options {
        out.push_str("options shuffled on the share page\n");
    }
    out.push_str(&format!("duplicate check: {}\n", poll.duplicate_check.as_str()));
    out.push_str(if poll.vote_changes {
        "vote changes: on (voters get a receipt to change or withdraw their ballot)\n"
    } else {
        "vote changes: off\n"
    });
    for (i, q) in poll.questions.iter().enumerate() {
        let required = if q.required { ", required" } else { "" };
        let rule = match q.kind {
            QuestionKind::Single => "one answer".to_owned(),
            QuestionKind::Multiple => {
                let (min, max) = q.choice_bounds();
                format!("{min} to {max} answers")
            }
            QuestionKind::Ranked => "ranking".to_owned(),
            QuestionKind::Scale => {
                let (lo, hi) = q.scale().unwrap_or_default();
                let end =
                    |l: &Option<crate::domain::EndLabel>| l.as_ref().map(|l| format!(" ({l})")).unwrap_or_default();
                format!("scale {lo}{} to {hi}{}", end(&q.min_label), end(&q.max_label))
            }
            QuestionKind::Schedule => match &q.time_zone {
                Some(zone) => format!("schedule: yes, if need be or no per slot; times in {}", zone.as_str()),
                None => "schedule: yes, if need be or no per slot".to_owned(),
            },
        };
        out.push_str(&format!("{}. {} [{rule}{required}]\n", i + 1, q.label));
        for o in &q.options {
            out.push_str(&format!("   - {o}\n"));
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// A poll's results for people: per question, each option's count and
/// percentage of the question's answers (a ranking's first choices, then its
/// places by the Schulze method), or a scale's distribution, mean and median.
pub(super) fn results_text(poll: &Poll, results: &crate::domain::results::Results) -> String {
    let mut out =
        format!("poll {}: {}\nstatus: {}\nresponses: {}\n", poll.id, poll.title, json::status(poll), results.total);
    if !results.by_day.is_empty() {
        let days: Vec<String> = results.by_day.iter().map(|(day, n)| format!("{day}: {n}")).collect();
        out.push_str(&format!("responses per day: {}\n", days.join(", ")));
    }
    for (i, (q, f)) in poll.questions.iter().zip(&results.questions).enumerate() {
        out.push_str(&format!("{}. {} ({} answered)\n", i + 1, q.label, f.answered));
        if let Some(scale) = &f.scale {
            for (value, count) in &scale.distribution {
                out.push_str(&format!("   {value:>3}  {count:>6}\n"));
            }
            let figure = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
            out.push_str(&format!("   mean {}, median {}\n", figure(scale.mean), figure(scale.median)));
            continue;
        }
        if let Some(schedule) = &f.schedule {
            out.push_str("   slots, best first (yes, if need be, no):\n");
            if let Some(zone) = &q.time_zone {
                out.push_str(&format!("   times in {}\n", zone.as_str()));
            }
            let slots = q.slots();
            let width = slots.iter().map(|s| s.to_string().len()).max().unwrap_or(0);
            for &j in &schedule.order {
                let (Some(slot), Some(n)) = (slots.get(j), schedule.slots.get(j)) else { continue };
                let best = if n.best { "  best" } else { "" };
                let slot = slot.to_string();
                out.push_str(&format!("   {slot:<width$}  {:>6}  {:>6}  {:>6}{best}\n", n.yes, n.if_need_be, n.no));
            }
            continue;
        }
        let width = q.options.iter().map(|o| o.to_string().chars().count()).max().unwrap_or(0);
        let heading = if f.ranked.is_some() { "   first choices:\n" } else { "" };
        out.push_str(heading);
        for (o, figures) in q.options.iter().zip(&f.options) {
            let label = o.to_string();
            let pad = " ".repeat(width - label.chars().count());
            out.push_str(&format!("   {label}{pad}  {:>6}  {:>5.1} %\n", figures.count, figures.percent));
        }
        if f.ranked.is_some() && f.answered == 0 {
            // Not every option sharing the first place: nobody ranked.
            out.push_str("   ranking (Schulze method): nobody has ranked yet\n");
        } else if let Some(ranked) = &f.ranked {
            out.push_str("   ranking (Schulze method):\n");
            for (place, options) in ranked.places() {
                let names: Vec<String> =
                    options.iter().filter_map(|o| q.options.get(*o)).map(|o| o.to_string()).collect();
                out.push_str(&format!("   {place}. {}\n", names.join(", ")));
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// A spreadsheet cell that starts like a formula is prefixed with `'` so a
/// poll's text can never run as a formula when the export is opened.
fn cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{s}") } else { s.to_owned() }
}

/// CSV: one row per option (per value for a scale, per slot for a
/// schedule), with the question, the option, its count (for a ranking:
/// first choices; for a schedule: yes) and percent of the question's
/// answers; a schedule's rows fill the last three columns too (if need be,
/// no, and `best` for the best slots), which other rows leave empty. The
/// columns are a documented interface (docs/OPERATIONS.md, "Exports").
pub(super) fn csv_export(results: &Value) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "question_number",
        "question",
        "answered",
        "option",
        "count",
        "percent",
        "if_need_be",
        "no",
        "best",
    ])
    .map_err(csv_err)?;
    for (i, q) in results["questions"].as_array().into_iter().flatten().enumerate() {
        let label = cell(q["label"].as_str().unwrap_or(""));
        let answered = q["answered"].to_string();
        let number = |v: &Value| if v.is_null() { String::new() } else { v.to_string() };
        let of = q["answered"].as_u64().unwrap_or(0);
        let share = |n: u64| json!(crate::domain::results::percent(n, of)).to_string();
        // option, count, percent, then a schedule's if-need-be, no and best.
        let rows: Vec<[String; 6]> = if let Some(values) = q["distribution"].as_array() {
            values
                .iter()
                .map(|d| {
                    let n = d["count"].as_u64().unwrap_or(0);
                    [d["value"].to_string(), n.to_string(), share(n), String::new(), String::new(), String::new()]
                })
                .collect()
        } else if let Some(slots) = q["slots"].as_array() {
            slots
                .iter()
                .map(|s| {
                    let yes = s["yes"].as_u64().unwrap_or(0);
                    let best = if s["best"].as_bool() == Some(true) { "best" } else { "" };
                    let slot = cell(s["slot"].as_str().unwrap_or(""));
                    [slot, yes.to_string(), share(yes), number(&s["ifNeedBe"]), number(&s["no"]), best.to_owned()]
                })
                .collect()
        } else {
            q["options"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| {
                    let count = if o["firstChoices"].is_null() { &o["count"] } else { &o["firstChoices"] };
                    let option = cell(o["label"].as_str().unwrap_or(""));
                    [option, number(count), number(&o["percent"]), String::new(), String::new(), String::new()]
                })
                .collect()
        };
        for [option, count, percent, if_need_be, no, best] in rows {
            let record =
                [(i + 1).to_string(), label.clone(), answered.clone(), option, count, percent, if_need_be, no, best];
            w.write_record(record).map_err(csv_err)?;
        }
    }
    w.into_inner().map_err(|e| Failure::from(anyhow!("CSV export failed: {e}")))
}

fn csv_err(e: csv::Error) -> Failure {
    Failure::from(anyhow::Error::from(e))
}

/// CSV of the ballots: one row per ballot, shuffled, without the day it
/// was cast; one column per option of single, multiple and ranked
/// questions (`q1:option`: 1/0 for a choice, the rank for a ranking, empty
/// when left out), one per scale (`q2`: the value) and one per slot of a
/// schedule (`q3:2027-01-14T18:30`: `yes`, `ifneedbe` or `no`).
pub(super) fn ballots_csv(poll: &Poll, ballots: &[Ballot]) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = Vec::new();
    for (i, q) in poll.questions.iter().enumerate() {
        if q.kind == QuestionKind::Scale {
            header.push(format!("q{}", i + 1));
        } else {
            // `q1:…` never starts like a formula; the option text follows it.
            header.extend(q.options.iter().map(|o| format!("q{}:{o}", i + 1)));
        }
    }
    w.write_record(&header).map_err(csv_err)?;
    for ballot in ballots {
        let mut row: Vec<String> = Vec::with_capacity(header.len());
        for (q, answer) in poll.questions.iter().zip(ballot.answers()) {
            let n = q.options.len();
            match answer {
                None if q.kind == QuestionKind::Scale => row.push(String::new()),
                None => row.extend((0..n).map(|_| String::new())),
                Some(Answer::Value(v)) => row.push(v.to_string()),
                Some(Answer::Choice(c)) => row.extend((0..n).map(|j| u8::from(j == *c).to_string())),
                Some(Answer::Choices(cs)) => row.extend((0..n).map(|j| u8::from(cs.contains(&j)).to_string())),
                Some(Answer::Ranks(ranks)) => {
                    row.extend(ranks.iter().map(|r| r.map(|r| r.to_string()).unwrap_or_default()))
                }
                Some(Answer::Availability(per_slot)) => row.extend(per_slot.iter().map(|a| a.word().to_owned())),
            }
        }
        w.write_record(&row).map_err(csv_err)?;
    }
    w.into_inner().map_err(|e| Failure::from(anyhow!("CSV export failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_like_cells_are_defused() {
        assert_eq!(cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(cell("@cmd"), "'@cmd");
        assert_eq!(cell("Pizza"), "Pizza");
    }
}
