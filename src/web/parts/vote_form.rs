//! The vote form's questions, shown and read: the share page's vote and a
//! voter's own-ballot page (a change is read exactly like a vote).
//!
//! Promises: field names are a documented interface (`docs/WEB.md`); what
//! a voter entered comes back as they left it when the form returns; a
//! broken rule of one question is said at that question and in a summary
//! that links to it; the rules themselves are checked by `Ballot::new`
//! alone, not here.

use maud::{Markup, html};

use crate::domain::{Answer, Availability, Ballot, Poll, Problem, Question, QuestionKind, Slot, Texts};
use crate::i18n::Catalogue;
use crate::web::form::{Form, problem_text, vote_problem};
use crate::web::layout::Ctx;
use crate::web::media::figure;
use crate::web::parts::schedule;

/// What a voter entered, kept to show the form again as they left it: per
/// question the values sent (`q{i}`), for a ranking the rank per option
/// (`q{i}r{j}`, 0 for none), for a schedule the answer per slot
/// (`q{i}s{j}`: `schedule::entered_code`, 0 for none), and the invite code
/// typed. Empty: a blank form.
#[derive(Clone, Debug, Default)]
pub struct Entered {
    values: Vec<Vec<usize>>,
    /// Per question, whether "No answer" was chosen: sent as the empty
    /// value, or unanswered in a stored ballot (the own-ballot page). Its
    /// radio then shows checked.
    none: Vec<bool>,
    /// Given back when the form returns for another reason than the code
    /// (a question left out, an expired form), so a voter who came by an
    /// invite link, whose fragment the script already removed, need not
    /// find the code again; never given back when the code was refused.
    pub invite: String,
    /// Why the code was refused, shown at its field.
    pub invite_error: Option<&'static str>,
    /// A broken rule of one question: said at that question
    /// (its own error text, its controls `aria-invalid`) and in a summary
    /// at the top that links to it and takes the focus.
    problem: Option<Problem>,
}

impl Entered {
    /// The choices, without the code, which was refused for `why`.
    pub fn code_refused(&self, why: &'static str) -> Entered {
        Entered {
            values: self.values.clone(),
            none: self.none.clone(),
            invite: String::new(),
            invite_error: Some(why),
            problem: None,
        }
    }

    /// A stored ballot, to show it in the vote form's fields.
    pub fn from_ballot(ballot: &Ballot) -> Entered {
        let values = ballot
            .answers()
            .iter()
            .map(|a| match a {
                None => Vec::new(),
                Some(Answer::Choice(j)) => vec![*j],
                Some(Answer::Choices(js)) => js.clone(),
                Some(Answer::Ranks(ranks)) => ranks.iter().map(|r| r.map_or(0, usize::from)).collect(),
                Some(Answer::Value(v)) => vec![usize::from(*v)],
                Some(Answer::Availability(per_slot)) => per_slot.iter().map(|a| schedule::entered_code(*a)).collect(),
            })
            .collect();
        let none = ballot.answers().iter().map(Option::is_none).collect();
        Entered { values, none, ..Entered::default() }
    }

    /// These answers with the problem that sent them back. A problem of
    /// no single question (nothing answered) is the page's message instead:
    /// `Some` of its text.
    pub fn refused(mut self, t: &Catalogue, problem: &Problem) -> (Entered, Option<String>) {
        if vote_problem(t, problem).is_some() {
            self.problem = Some(problem.clone());
            (self, None)
        } else {
            (self, Some(problem_text(t, problem)))
        }
    }

    /// The question with a problem, and what it is.
    fn marked(&self, t: &Catalogue) -> Option<(usize, String)> {
        self.problem.as_ref().and_then(|p| vote_problem(t, p))
    }

    /// Whether "No answer" was chosen for question `i`.
    fn none(&self, question: usize) -> bool {
        self.none.get(question).copied().unwrap_or(false)
    }

    fn has(&self, question: usize, value: usize) -> bool {
        self.values.get(question).is_some_and(|v| v.contains(&value))
    }

    fn rank(&self, question: usize, option: usize) -> usize {
        self.values.get(question).and_then(|r| r.get(option)).copied().unwrap_or(0)
    }
}

/// One question of the vote form, with the widget of its type. Field names
/// are a documented interface (docs/WEB.md).
pub fn question_fieldset(
    ctx: &Ctx,
    poll: &Poll,
    clang: Option<&str>,
    i: usize,
    q: &Question,
    texts: &Texts<'_>,
    entered: &Entered,
) -> Markup {
    let t = ctx.t;
    let name = format!("q{i}");
    let hint_id = format!("q{i}-hint");
    let hint = match q.kind {
        QuestionKind::Single => None,
        QuestionKind::Multiple => {
            let (min, max) = q.choice_bounds();
            Some((t.choose_between)(min, max, q.options.len()))
        }
        QuestionKind::Ranked => Some(t.rank_hint.to_owned()),
        QuestionKind::Scale => q.scale().map(|(lo, hi)| (t.scale_hint)(lo, hi)),
        QuestionKind::Schedule => Some(t.schedule_hint.to_owned()),
    };
    let order = option_order(texts.options.len(), poll.shuffle_options);
    let error = entered.marked(t).filter(|(at, _)| *at == i).map(|(_, text)| text);
    let invalid = error.as_ref().map(|_| "true");
    let error_id = format!("q{i}-error");
    let described: Vec<&str> = [hint.as_ref().map(|_| hint_id.as_str()), error.as_ref().map(|_| error_id.as_str())]
        .into_iter()
        .flatten()
        .collect();
    // With script, a multiple-choice question stops a box beyond its
    // maximum at once, and says why (the server still checks).
    let most = (q.kind == QuestionKind::Multiple).then(|| q.choice_bounds());
    html! {
        fieldset class=(format!("question q-{}", q.kind.as_str())) id=(format!("q{i}-set")) tabindex="-1"
            aria-describedby=[(!described.is_empty()).then(|| described.join(" "))]
            data-max=[most.map(|(_, max)| max)] data-max-text=[most.map(|(_, max)| (t.vote_max_reached)(max))] {
            legend lang=[clang] {
                (texts.label.as_str())
                @if q.required { " " span.required { (t.required_mark) } }
            }
            @if let Some(m) = poll.media_at(Slot::Question(i)) { (figure(ctx, m, poll.lang)) }
            @if let Some(h) = &hint { p.hint id=(hint_id) { (h) } }
            @if let Some(e) = &error { p.field-error id=(error_id) { (e) } }
            @if most.is_some() { p.limit-note data-max-live role="status" hidden {} }
            @match q.kind {
                QuestionKind::Single | QuestionKind::Multiple => {
                    @let kind = if q.kind == QuestionKind::Single { "radio" } else { "checkbox" };
                    // Each answer is a full-width row: the label wraps the
                    // control, so the whole row is the click target.
                    @for j in order {
                        label.choice for=(format!("q{i}-{j}")) {
                            input type=(kind) id=(format!("q{i}-{j}")) name=(name) value=(j)
                                required[q.required && kind == "radio"] checked[entered.has(i, j)] aria-invalid=[invalid];
                            span.choice-text lang=[clang] { (texts.options[j].as_str()) }
                        }
                    }
                    @if kind == "radio" && !q.required { (no_answer(ctx, i, entered.none(i))) }
                }
                QuestionKind::Ranked => {
                    // The script makes each row's move buttons (named from
                    // data-up and data-down: without script they would do
                    // nothing, and a ranking of 20 x 12 would carry 100 KB
                    // of them), keeps the rows in the order of their ranks,
                    // and the live region says where a moved option now is.
                    ol.ranking data-ranking data-live=(format!("q{i}-live"))
                        data-moved=((t.rank_now)("{option}", "{rank}")) data-unranked=((t.rank_now_none)("{option}"))
                        data-up=(t.rank_up) data-down=(t.rank_down) {
                        @for j in order {
                            @let id = format!("q{i}r{j}");
                            @let text = texts.options[j].as_str();
                            li.rank-row {
                                select id=(id) name=(id) aria-label=((t.rank_of)(text)) aria-invalid=[invalid] {
                                    option value="" selected[entered.rank(i, j) == 0] { (t.rank_none) }
                                    // An option without a value sends its text (HTML's
                                    // rule), the rank: 12 x 240 values fewer.
                                    @for r in 1..=texts.options.len() {
                                        option selected[entered.rank(i, j) == r] { (r) }
                                    }
                                }
                                label for=(id) lang=[clang] { (text) }
                            }
                        }
                    }
                    p.visually-hidden id=(format!("q{i}-live")) role="status" aria-live="polite" {}
                }
                QuestionKind::Schedule => {
                    (schedule::vote_widget(ctx, i, texts.options, q.time_zone.as_ref().map(|z| z.as_str()), |j| entered.rank(i, j), invalid))
                    // An optional schedule can be taken back as a whole.
                    @if !q.required { (no_answer(ctx, i, entered.none(i))) }
                }
                QuestionKind::Scale => {
                    @if let Some((lo, hi)) = q.scale() {
                        @let (low_id, high_id) = (format!("q{i}-low"), format!("q{i}-high"));
                        div.scale {
                            div.scale-values {
                                @for v in lo..=hi {
                                    @let id = format!("q{i}-{v}");
                                    // The end labels describe the values at the ends.
                                    @let end = match (v == lo, v == hi) {
                                        (true, _) if texts.min_label.is_some() => Some(low_id.as_str()),
                                        (_, true) if texts.max_label.is_some() => Some(high_id.as_str()),
                                        _ => None,
                                    };
                                    span.scale-value {
                                        input type="radio" id=(id) name=(name) value=(v) aria-describedby=[end]
                                            required[q.required] checked[entered.has(i, usize::from(v))] aria-invalid=[invalid];
                                        label for=(id) { (v) }
                                    }
                                }
                            }
                            @if texts.min_label.is_some() || texts.max_label.is_some() {
                                div.scale-ends {
                                    span.scale-end.low id=(low_id) lang=[clang] { @if let Some(l) = texts.min_label { (l.as_str()) } }
                                    span.scale-end.high id=(high_id) lang=[clang] { @if let Some(l) = texts.max_label { (l.as_str()) } }
                                }
                            }
                        }
                        @if !q.required { (no_answer(ctx, i, entered.none(i))) }
                    }
                }
            }
        }
    }
}

/// The summary at the top of a vote form sent back for a broken rule: the
/// question named by its text, linked to its fieldset, with what is wrong.
/// It takes the focus (the script's `data-focus`), like the creation form's.
pub fn problem_summary(ctx: &Ctx, clang: Option<&str>, questions: &[Texts<'_>], entered: &Entered) -> Markup {
    let t = ctx.t;
    let Some((i, text)) = entered.marked(t) else { return html! {} };
    let label = questions.get(i).map_or("", |q| q.label.as_str());
    html! {
        div.error-summary role="alert" tabindex="-1" data-focus aria-labelledby="error-summary-heading" {
            h2 id="error-summary-heading" { (t.vote_not_sent) }
            ul { li { a href=(format!("#q{i}-set")) lang=[clang] { (label) } (t.colon) (text) } }
        }
    }
}

/// The last radio of an optional single-choice or scale question: "No
/// answer", an empty value (read as unanswered by `answers`), so that a
/// chosen answer can be taken back without scripting.
fn no_answer(ctx: &Ctx, i: usize, checked: bool) -> Markup {
    let id = format!("q{i}-none");
    html! {
        label.choice.no-answer for=(id) {
            input type="radio" id=(id) name=(format!("q{i}")) value="" checked[checked];
            span.choice-text { (ctx.t.no_answer) }
        }
    }
}

/// The order in which the share page lists `n` options: as written, or
/// (`shuffleOptions`) a fresh random order at every page view. The values
/// sent stay the options' indices, so the order changes nothing else.
fn option_order(n: usize, shuffle: bool) -> Vec<usize> {
    use rand::seq::SliceRandom;
    let mut order: Vec<usize> = (0..n).collect();
    if shuffle {
        order.shuffle(&mut rand::rng());
    }
    order
}

/// Why a vote form cannot be read as a ballot.
pub enum BadVote {
    /// A value no form of ours sends (a value that is not a number).
    Malformed,
    /// A question answered more often than it can be, or a field that is no
    /// question of this poll: the form was changed, and the voter should
    /// look again.
    Changed,
    /// A value outside its question's range (an option index, a rank, a
    /// scale value): the form comes back with the rest of what was entered
    /// (boxed: it is large, and rare).
    Rule(Problem, Box<Entered>),
}

/// Reads the vote form (docs/WEB.md): `q{i}` once for single choice and
/// scale, once per chosen option for multiple choice, `q{i}r{j}` with the
/// rank of option `j` for a ranking, `q{i}s{j}` with `yes`, `ifneedbe` or
/// `no` for slot `j` of a schedule. Answers come back as the voter sent
/// them, with what they entered; their rules are checked by `Ballot::new`.
/// `extra` names the form's fields that are no answers (the share page's
/// `VOTE_FIELDS`, the own-ballot page's `FIELDS`).
pub fn answers(form: &Form, poll: &Poll, extra: &[&str]) -> Result<(Vec<Option<Answer>>, Entered), BadVote> {
    let qs = &poll.questions;
    // How often each field was sent: at most once, but a multiple-choice
    // question once per option.
    let mut sent = vec![0usize; qs.len()];
    let mut ranks_sent = std::collections::HashSet::new();
    for name in form.names() {
        if extra.contains(&name) {
            continue;
        }
        let rest = name.strip_prefix('q').ok_or(BadVote::Changed)?;
        // `q{i}`, or `q{i}r{j}` (a rank), `q{i}s{j}` (a slot's answer).
        let (i, r) = match rest.find(['r', 's']) {
            Some(at) => (&rest[..at], Some((&rest[at..at + 1], &rest[at + 1..]))),
            None => (rest, None),
        };
        let i = i.parse::<usize>().ok().filter(|&i| i < qs.len()).ok_or(BadVote::Changed)?;
        let q = &qs[i];
        match r {
            Some((sep, j))
                if (sep == "r" && q.kind == QuestionKind::Ranked)
                    || (sep == "s" && q.kind == QuestionKind::Schedule) =>
            {
                let j = j.parse::<usize>().ok().filter(|&j| j < q.options.len()).ok_or(BadVote::Changed)?;
                // Only as the form writes it (`q00`, `q0r+1` parse as
                // numbers too, but would then never be read).
                if name != format!("q{i}{sep}{j}") || !ranks_sent.insert((i, j)) {
                    return Err(BadVote::Changed);
                }
            }
            None if name != format!("q{i}") => return Err(BadVote::Changed),
            // A schedule's own field is its "No answer" (empty), once.
            None if q.kind != QuestionKind::Ranked => {
                sent[i] += 1;
                let most = if q.kind == QuestionKind::Multiple { q.options.len() } else { 1 };
                if sent[i] > most {
                    return Err(BadVote::Changed);
                }
            }
            _ => return Err(BadVote::Changed),
        }
    }
    let mut answers = Vec::with_capacity(qs.len());
    let mut entered = Vec::with_capacity(qs.len());
    let mut none = Vec::with_capacity(qs.len());
    // The first value out of its question's range: the form comes back
    // with the rest of what was entered, as for any other broken rule.
    let mut out_of_range = None;
    for (i, q) in qs.iter().enumerate() {
        let field = format!("q{i}");
        // The "No answer" radio sends the empty value.
        none.push(form.all(&field).all(|v| v.trim().is_empty()) && form.all(&field).next().is_some());
        // One spelling per number (`+1`, `01`, ` 1` are malformed).
        let number = |v: &str| crate::domain::form_number(v).ok_or(BadVote::Malformed);
        let mut values: Vec<usize> =
            form.all(&field).filter(|v| !v.trim().is_empty()).map(number).collect::<Result<_, _>>()?;
        if q.kind.has_options()
            && let Some(&option) = values.iter().find(|&&j| j >= q.options.len())
        {
            out_of_range.get_or_insert(Problem::NoSuchOption { question: i, option });
            values.retain(|&j| j < q.options.len());
        }
        let (answer, kept) = match q.kind {
            QuestionKind::Single => (values.first().map(|&j| Answer::Choice(j)), values),
            QuestionKind::Multiple => {
                let mut chosen = values.clone();
                chosen.sort_unstable();
                chosen.dedup();
                if chosen.len() != values.len() {
                    return Err(BadVote::Changed);
                }
                ((!chosen.is_empty()).then_some(Answer::Choices(chosen)), values)
            }
            QuestionKind::Scale => {
                // A number too large for any scale is off it, like 11 on 1–5.
                let value = values.first().and_then(|&v| u8::try_from(v).ok());
                if !values.is_empty() && value.is_none() {
                    let (min, max) = q.scale().unwrap_or_default();
                    out_of_range.get_or_insert(Problem::OffScale { question: i, min, max });
                }
                (value.map(Answer::Value), values)
            }
            // "No answer" takes the whole question back, whatever its slots
            // still say (without script they stay checked beside it).
            QuestionKind::Schedule if !values.is_empty() => return Err(BadVote::Malformed),
            QuestionKind::Schedule if none.last() == Some(&true) => (None, vec![0; q.options.len()]),
            QuestionKind::Schedule => {
                // A slot left out is no; the question is answered when any
                // of its slots is.
                let mut kept = vec![0; q.options.len()];
                let mut per_slot = vec![Availability::No; q.options.len()];
                for (j, (k, a)) in kept.iter_mut().zip(per_slot.iter_mut()).enumerate() {
                    if let Some(v) = form.get(&format!("q{i}s{j}")) {
                        *a = Availability::from_word(v).ok_or(BadVote::Malformed)?;
                        *k = schedule::entered_code(*a);
                    }
                }
                (kept.iter().any(|&k| k > 0).then_some(Answer::Availability(per_slot)), kept)
            }
            QuestionKind::Ranked => {
                let mut ranks = vec![0; q.options.len()];
                let mut ranked = Vec::new();
                for (j, rank) in ranks.iter_mut().enumerate() {
                    match form.get(&format!("q{i}r{j}")) {
                        None => {}
                        Some(v) if v.trim().is_empty() => {}
                        Some(v) => {
                            let r = number(v)?;
                            // No place beyond the options, nor a zeroth.
                            if r == 0 || r > q.options.len() {
                                out_of_range.get_or_insert(Problem::RankGap { question: i });
                                continue;
                            }
                            *rank = r;
                            ranked.push((j, r));
                        }
                    }
                }
                // Repeated ranks and gaps are the voter's to fix (a form
                // without scripting cannot prevent them): the ballot check
                // reports them with the form back.
                let answer = match Answer::from_ranks(i, q.options.len(), &ranked) {
                    Ok(a) => a,
                    Err(_) => {
                        Some(Answer::Ranks(ranks.iter().map(|&r| u8::try_from(r).ok().filter(|&r| r > 0)).collect()))
                    }
                };
                (answer, ranks)
            }
        };
        answers.push(answer);
        entered.push(kept);
    }
    match out_of_range {
        Some(problem) => Err(BadVote::Rule(problem, Box::new(Entered { values: entered, none, ..Entered::default() }))),
        None => Ok((answers, Entered { values: entered, none, ..Entered::default() })),
    }
}
