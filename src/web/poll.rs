//! `/p/{id}`: the share page, where people answer a poll, and the vote.
//!
//! A vote is counted only with a valid one-time ballot token (`ballot.rs`)
//! and within the per-client throttle (`throttle.rs`). Whatever goes wrong,
//! the person sees why, and, when it makes sense to try again, the form comes
//! back with their choices kept and a fresh token: no vote is lost silently.

use maud::{Markup, html};

use super::ballot::Verdict;
use super::errors::{self, with_headers};
use super::form::{Form, problem_text, vote_problem};
use super::layout::{Ctx, lang_attr, notice, page, poll_subtitle, respond};
use super::media::figure;
use super::{Web, WebWorker};
use crate::app::Links;
use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{
    Answer, Ballot, DuplicateCheck, Poll, Problem, Question, QuestionKind, ResultsVisibility, Slot, Texts,
};
use crate::error::{Error, InviteRefusal};
use crate::http::{Request, Response};
use crate::i18n::Catalogue;
use crate::secret::Receipt;
use crate::store::Settle;

pub fn share_page(w: &mut WebWorker, req: &Request, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    share_response(&w.web, &ctx, poll, today, 200, &Entered::default(), None)
}

/// What a voter entered, kept to show the form again as they left it: per
/// question the values sent (`q{i}`), and for a ranking the rank per option
/// (`q{i}r{j}`, 0 for none), and the invite code typed. Empty: a blank form.
#[derive(Clone, Debug, Default)]
pub(super) struct Entered {
    values: Vec<Vec<usize>>,
    /// Per question, whether "No answer" was chosen: sent as the empty
    /// value, or unanswered in a stored ballot (the own-ballot page). Its
    /// radio then shows checked.
    none: Vec<bool>,
    /// Given back when the form returns for another reason than the code
    /// (a question left out, an expired form), so a voter who came by an
    /// invite link, whose fragment the script already removed, need not
    /// find the code again; never given back when the code was refused.
    invite: String,
    /// Why the code was refused, shown at its field.
    invite_error: Option<&'static str>,
    /// A broken rule of one question (issue 25): said at that question
    /// (its own error text, its controls `aria-invalid`) and in a summary
    /// at the top that links to it and takes the focus.
    problem: Option<Problem>,
}

impl Entered {
    /// The choices, without the code, which was refused for `why`.
    fn code_refused(&self, why: &'static str) -> Entered {
        Entered {
            values: self.values.clone(),
            none: self.none.clone(),
            invite: String::new(),
            invite_error: Some(why),
            problem: None,
        }
    }

    /// A stored ballot, to show it in the vote form's fields.
    pub(super) fn from_ballot(ballot: &Ballot) -> Entered {
        let values = ballot
            .answers()
            .iter()
            .map(|a| match a {
                None => Vec::new(),
                Some(Answer::Choice(j)) => vec![*j],
                Some(Answer::Choices(js)) => js.clone(),
                Some(Answer::Ranks(ranks)) => ranks.iter().map(|r| r.map_or(0, usize::from)).collect(),
                Some(Answer::Value(v)) => vec![usize::from(*v)],
            })
            .collect();
        let none = ballot.answers().iter().map(Option::is_none).collect();
        Entered { values, none, ..Entered::default() }
    }

    /// These answers with the problem that sent them back. A problem of
    /// no single question (nothing answered) is the page's message instead:
    /// `Some` of its text.
    pub(super) fn refused(mut self, t: &Catalogue, problem: &Problem) -> (Entered, Option<String>) {
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

/// The share page with what was `entered` and an optional message. It needs
/// only what all workers share, so answers built after a commit use it too.
fn share_response(
    web: &Web,
    ctx: &Ctx,
    poll: &Poll,
    today: Day,
    status: u16,
    entered: &Entered,
    message: Option<&str>,
) -> Result<Response, Error> {
    let t = ctx.t;
    let (content_lang, title, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let token = if poll.closed { None } else { Some(web.ballots.issue(&poll.id, today).map_err(Error::internal)?) };
    let body = html! {
        h1 lang=[clang] { (title) }
        (facts(ctx, poll, today))
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        @if let Some(m) = message { (notice("error", m)) }
        (problem_summary(ctx, clang, &questions, entered))
        @if let Some(token) = token {
            p.notice.info id="already-voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) role="status" hidden { (t.already_voted) }
            @if poll.vote_changes {
                // Shown by the script when this browser keeps a receipt for
                // the poll: the ballot page then opens with it by itself;
                // with several (one per ballot), a link to each.
                div.notice.info.receipt-remembered id="receipt-remembered" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) role="status" hidden {
                    p { (t.receipt_remembered) }
                    p.actions {
                        a.button href=(ctx.href(&super::own::path(&poll.id))) data-receipt-open { (t.receipt_open) }
                        span data-receipt-links data-nth=((t.receipt_open_nth)(987_654).replace("987654", "{n}")) hidden {}
                        " "
                        button.secondary type="button" data-forget-receipt { (t.receipt_forget) }
                    }
                }
            }
            // After a vote from this browser the script folds the form
            // behind this button: one's own response comes first, and a
            // second vote is a choice, not the page's main action.
            p.answer-again { button.secondary type="button" id="answer-again" hidden { (t.answer_again) } }
            div id="answer-form" {
            p.lead { (t.vote_intro) }
            form.vote method="post" action=(ctx.action()) {
                input type="hidden" name="ballot" value=(token);
                @if poll.duplicate_check == DuplicateCheck::Invite {
                    // Filled from an invite link's `#invite=` by the script;
                    // typed from the invitation otherwise.
                    div.field.invite {
                        label for="invite" { (t.invite_label) }
                        p.hint id="invite-hint" { (t.invite_hint) }
                        @if let Some(e) = entered.invite_error { p.field-error id="invite-error" { (e) } }
                        input type="text" id="invite" name="invite" value=(entered.invite) required autocomplete="off"
                            spellcheck="false" autocapitalize="characters"
                            aria-invalid=[entered.invite_error.map(|_| "true")]
                            aria-describedby=(if entered.invite_error.is_some() { "invite-hint invite-error" } else { "invite-hint" });
                    }
                }
                @for (i, (q, texts)) in poll.questions.iter().zip(&questions).enumerate() {
                    (question_fieldset(ctx, poll, clang, i, q, texts, entered))
                }
                div.submit { button.primary type="submit" { (t.vote_submit) } }
            }
            }
        } @else {
            div.notice.closed role="status" {
                h2 { (t.closed_title) }
                p { (t.closed_text) }
            }
        }
        @if poll.results_open_to_all() {
            p { a href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        } @else if matches!(poll.visibility, ResultsVisibility::AfterVote | ResultsVisibility::AfterClose) {
            p.hint.results-when { (super::settings::visibility_text(t, poll)) }
        }
        @if poll.vote_changes && !poll.closed {
            // For a voter without script, or on another device: the receipt
            // is typed on that page.
            p.hint.own-ballot id="own-ballot-link" { a href=(ctx.href(&super::own::path(&poll.id))) { (t.receipt_have) } }
        }
    };
    Ok(respond(status, ctx.lang, page(ctx, title.as_str(), body)))
}

/// One question of the vote form, with the widget of its type. Field names
/// are a documented interface (docs/WEB.md).
pub(super) fn question_fieldset(
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
            data-max=[most.map(|(_, max)| max)] data-max-text=[most.map(|(min, max)| (t.vote_err_choice_count)(min, max))] {
            legend lang=[clang] {
                (texts.label.as_str())
                @if q.required { " " span.required { (t.required_mark) } }
            }
            @if let Some(m) = poll.media_at(Slot::Question(i)) { (figure(ctx, m, poll.lang)) }
            @if let Some(h) = &hint { p.hint id=(hint_id) { (h) } }
            @if let Some(e) = &error { p.field-error id=(error_id) { (e) } }
            @if most.is_some() { p.field-error data-max-live role="status" hidden {} }
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
                    // The script shows the move buttons and keeps the rows in
                    // the order of their ranks; the live region says where a
                    // moved option now is.
                    ol.ranking data-ranking data-live=(format!("q{i}-live"))
                        data-moved=((t.rank_now)("{option}", "{rank}")) data-unranked=((t.rank_now_none)("{option}")) {
                        @for j in order {
                            @let id = format!("q{i}r{j}");
                            @let text = texts.options[j].as_str();
                            li.rank-row {
                                select id=(id) name=(id) aria-label=((t.rank_of)(text)) aria-invalid=[invalid] {
                                    option value="" selected[entered.rank(i, j) == 0] { (t.rank_none) }
                                    @for r in 1..=texts.options.len() {
                                        option value=(r) selected[entered.rank(i, j) == r] { (r) }
                                    }
                                }
                                label for=(id) lang=[clang] { (text) }
                                span.rank-move data-move-buttons hidden {
                                    @for (dir, arrow, name) in [("up", "▲", t.rank_up), ("down", "▼", t.rank_down)] {
                                        button.secondary.move type="button" data-move=(dir) title=(name) {
                                            span aria-hidden="true" { (arrow) }
                                            span.visually-hidden { (name) ", " span lang=[clang] { (text) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    p.visually-hidden id=(format!("q{i}-live")) role="status" aria-live="polite" {}
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
pub(super) fn problem_summary(ctx: &Ctx, clang: Option<&str>, questions: &[Texts<'_>], entered: &Entered) -> Markup {
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

/// Status, closing day and erase day of a poll.
pub fn facts(ctx: &Ctx, poll: &Poll, today: Day) -> Markup {
    let t = ctx.t;
    let expires = poll.expires_on.to_string();
    let closes = poll.closes_on.map(|d| d.to_string());
    html! {
        p.meta {
            span class=(if poll.closed { "status closed" } else { "status open" }) {
                (if poll.closed { t.status_closed } else { t.status_open })
            }
            // A poll closed by its admin before its closing day no longer
            // "closes on" it (issue 25): the status says it all.
            @if let Some(closes) = closes.as_ref().filter(|_| !poll.closed || deadline_passed(poll.closes_on, today)) {
                " · "
                time.closes datetime=(closes) {
                    @if deadline_passed(poll.closes_on, today) { ((t.closed_on)(&t.day(closes))) } @else { ((t.closes_on)(&t.day(closes))) }
                }
            }
            " · "
            time datetime=(expires) { ((t.erased_on)(&t.day(&expires))) }
        }
    }
}

/// The field names of the vote form besides the answers (`docs/WEB.md`).
const VOTE_FIELDS: [&str; 2] = ["ballot", "invite"];

/// Why a vote form cannot be read as a ballot.
pub(super) enum BadVote {
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
/// rank of option `j` for a ranking. Answers come back as the voter sent
/// them, with what they entered; their rules are checked by `Ballot::new`.
/// `extra` names the form's fields that are no answers (`VOTE_FIELDS` for
/// the share page).
pub(super) fn answers(form: &Form, poll: &Poll, extra: &[&str]) -> Result<(Vec<Option<Answer>>, Entered), BadVote> {
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
        let (i, r) = match rest.split_once('r') {
            Some((i, j)) => (i, Some(j)),
            None => (rest, None),
        };
        let i = i.parse::<usize>().ok().filter(|&i| i < qs.len()).ok_or(BadVote::Changed)?;
        let q = &qs[i];
        match r {
            Some(j) if q.kind == QuestionKind::Ranked => {
                let j = j.parse::<usize>().ok().filter(|&j| j < q.options.len()).ok_or(BadVote::Changed)?;
                // Only as the form writes it (`q00`, `q0r+1` parse as
                // numbers too, but would then never be read).
                if name != format!("q{i}r{j}") || !ranks_sent.insert((i, j)) {
                    return Err(BadVote::Changed);
                }
            }
            None if name != format!("q{i}") => return Err(BadVote::Changed),
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

pub fn vote(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    let (answers, mut entered) = match answers(form, poll, &VOTE_FIELDS) {
        Ok(read) => read,
        Err(BadVote::Malformed) => {
            return Err(Error::Malformed("The vote form holds an answer its poll does not have.".into()));
        }
        // Nothing is kept of a changed form: the voter answers afresh.
        Err(BadVote::Changed) => {
            return share_response(&w.web, &ctx, poll, today, 422, &Entered::default(), Some(t.err_vote_form));
        }
        Err(BadVote::Rule(problem, mut entered)) => {
            entered.invite = form.text("invite");
            let (entered, message) = entered.refused(t, &problem);
            return share_response(&w.web, &ctx, poll, today, 422, &entered, message.as_deref());
        }
    };
    entered.invite = form.text("invite");
    // The one-time form token is looked at first (without using it up), so
    // a replayed form costs the client nothing of its vote budget.
    // Trimmed as the ballot box reads it: the token goes into a Location.
    let token = form.get("ballot").unwrap_or("").trim();
    match w.web.ballots.check(&poll.id, token, today) {
        Verdict::Valid => {}
        // Sent twice: an afterVote voter still gets to the results.
        Verdict::Used if poll.visibility == ResultsVisibility::AfterVote => {
            return Ok(after_vote_redirect(&ctx, poll, token));
        }
        Verdict::Used | Verdict::Reserved => return Ok(used_page(&ctx, poll)),
        Verdict::Invalid if poll.closed => {
            return share_response(&w.web, &ctx, poll, today, 409, &Entered::default(), None);
        }
        Verdict::Invalid => {
            return share_response(&w.web, &ctx, poll, today, 409, &entered, Some(t.err_ballot_expired));
        }
    }
    let admitted = match w.session.admit_vote(req.client, poll, answers, form.get("invite"), today) {
        Ok(admitted) => admitted,
        Err(Error::Closed) => return share_response(&w.web, &ctx, poll, today, 409, &Entered::default(), None),
        Err(Error::Invalid(errors)) => {
            let Some(e) = errors.first() else {
                return share_response(&w.web, &ctx, poll, today, 422, &entered, Some(t.err_no_answer));
            };
            let (entered, message) = entered.clone().refused(t, &e.problem);
            return share_response(&w.web, &ctx, poll, today, 422, &entered, message.as_deref());
        }
        // The choices stay; the code is not echoed back.
        Err(Error::InviteRefused(refusal)) => {
            let (text, at_field) = refusal_texts(t, refusal);
            return share_response(&w.web, &ctx, poll, today, 403, &entered.code_refused(at_field), Some(text));
        }
        Err(e @ Error::VotesThrottled { .. }) => {
            let r = share_response(&w.web, &ctx, poll, today, 429, &entered, Some(t.err_throttled))?;
            return Ok(with_headers(r, &e));
        }
        Err(e) => return Err(e),
    };
    // Reserved only now, so a refused attempt leaves the form usable; two
    // concurrent sends of one form still count once (reserving is atomic).
    match w.web.ballots.reserve(&poll.id, token, today) {
        Verdict::Valid => {}
        // The first send is still being stored: this one is not counted.
        _ => return Ok(used_page(&ctx, poll)),
    }
    // Where several nodes share the database, the form is spent there too,
    // with its ballot: sent to two nodes, it counts once.
    let admitted = admitted.with_form(w.web.ballots.form_of(&poll.id, token).filter(|_| w.web.shared_store()));
    // Taken before the ballot goes to the writer: shown once, on the page
    // that answers this vote, and kept nowhere here.
    let receipt = admitted.receipt().map(Receipt::expose);
    // The token counts (and opens afterVote results) once the ballot is
    // committed, and is free again if it is not: settled by the writer, so
    // a client that hangs up meanwhile changes nothing (issue 24, item 2).
    let settle = {
        let (web, id, token) = (w.web.clone(), poll.id.clone(), token.to_owned());
        Settle::new(move |stored| web.ballots.settle(&id, &token, stored))
    };
    // The answer waits for the commit on the connection, not on this worker.
    let pending = w.web.app.cast(admitted, Some(settle));
    let (web, poll, path) = (w.web.clone(), poll.clone(), req.path.clone());
    let (choice, page_choice) = (super::lang::negotiate(req, Some(poll.lang)), super::lang::negotiate(req, None));
    let ballot = token.to_owned();
    let answer = move |result: Result<(), Error>| {
        let ctx = Ctx::new(choice, &path);
        let r = match result {
            // The results this voter may now see, at an address that a
            // reload does not send the vote again to.
            // With a receipt, the page that shows it answers instead, with a
            // link to those results: a redirect would lose the receipt.
            Ok(()) if poll.visibility == ResultsVisibility::AfterVote && receipt.is_none() => {
                Ok(after_vote_redirect(&ctx, &poll, &ballot))
            }
            Ok(()) => Ok(thanks_page(&ctx, &poll, receipt.as_deref(), &ballot)),
            Err(Error::Closed) => share_response(
                &web,
                &ctx,
                &Poll { closed: true, ..poll.clone() },
                today,
                409,
                &Entered::default(),
                None,
            ),
            Err(Error::NotFound) => Ok(errors::page(&Ctx::new(page_choice, &path), &Error::NotFound)),
            // Another node stored this form's vote first.
            Err(Error::FormSpent) => Ok(used_page(&ctx, &poll)),
            // Decided in the ballot's transaction: unknown or spent meanwhile,
            // or the poll turned invite-only since the form was read (then
            // the form comes back with its code field).
            Err(Error::InviteRefused(refusal)) => {
                let (text, at_field) = refusal_texts(t, refusal);
                let poll = Poll { duplicate_check: DuplicateCheck::Invite, ..poll.clone() };
                share_response(&web, &ctx, &poll, today, 403, &entered.code_refused(at_field), Some(text))
            }
            // The vote is not stored: the form comes back with the choices.
            Err(e) => {
                if let Error::Internal(cause) = &e {
                    eprintln!("anonpoll: internal error: {cause:#}");
                }
                share_response(&web, &ctx, &poll, today, e.status().max(500), &entered, Some(t.err_vote_not_saved))
                    .map(|r| with_headers(r, &e))
            }
        };
        r.unwrap_or_else(|e| errors::page(&Ctx::new(page_choice, &path), &e))
    };
    Ok(match pending {
        Ok(pending) => Response::after(pending, answer),
        Err(e) => answer(Err(e)),
    })
}

/// What the page and the code field say of a refused invite code.
fn refusal_texts(t: &crate::i18n::Catalogue, refusal: InviteRefusal) -> (&'static str, &'static str) {
    match refusal {
        InviteRefusal::Missing => (t.err_invite_missing, t.invite_field_missing),
        InviteRefusal::NotACode => (t.err_invite_not_a_code, t.invite_field_not_a_code),
        InviteRefusal::UnknownOrUsed => (t.err_invite_refused, t.invite_field_refused),
    }
}

/// `303` to the results a voter on an `afterVote` poll may see, carrying
/// the form token just redeemed (docs/WEB.md).
fn after_vote_redirect(ctx: &Ctx, poll: &Poll, ballot: &str) -> Response {
    Response::new(303).with_header("Location", ctx.href_with(&super::results::after_vote_path(poll, ballot)))
}

/// After a vote: thanks, the poll's title, the receipt when the poll gives
/// one, and where the results are. `ballot` is the form token just redeemed
/// (the way to an `afterVote` poll's results).
fn thanks_page(ctx: &Ctx, poll: &Poll, receipt: Option<&str>, ballot: &str) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.thanks_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        // The script notes the vote in localStorage, with the day the poll is
        // erased so the note can be dropped then.
        p.notice.ok role="status" id="voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) { (t.thanks_text) }
        @if let Some(receipt) = receipt {
            // The script keeps the receipt in localStorage for this poll,
            // until its erase day. It is in no query string: the link
            // carries it in the fragment, which browsers never send.
            section.receipt aria-labelledby="receipt-heading" data-receipt-poll=(poll.id)
                data-until=(poll.expires_on.to_string()) {
                h2 id="receipt-heading" { (t.receipt_heading) }
                p { (t.receipt_text) }
                p.receipt-code {
                    code id="receipt" { (receipt) }
                    button.secondary type="button" data-copy="receipt" data-copied=(t.copied) hidden { (t.copy) }
                }
                p { a id="receipt-link" href=(format!("{}#receipt={receipt}", super::own::path(&poll.id))) { (t.receipt_link) } }
            }
        }
        @if poll.visibility == ResultsVisibility::AfterVote {
            p { a.button href=(ctx.href_with(&super::results::after_vote_path(poll, ballot))) { (t.see_results) } }
        } @else if poll.results_open_to_all() {
            p { a.button href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        } @else if poll.visibility == ResultsVisibility::AfterClose {
            p { (super::settings::visibility_text(t, poll)) }
        } @else {
            p { (t.thanks_private) }
        }
    };
    // A page that shows a receipt has no language switcher: its links would
    // leave for a page without it, and it is shown only this once.
    let once;
    let ctx = if receipt.is_some() {
        once = ctx.shown_once();
        &once
    } else {
        ctx
    };
    respond(200, ctx.lang, page(ctx, t.thanks_title, body))
}

fn used_page(ctx: &Ctx, poll: &Poll) -> Response {
    let t = ctx.t;
    let body = html! {
        h1 { (t.thanks_title) }
        (notice("info", t.err_ballot_used))
        @if poll.results_open_to_all() {
            p { a href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        }
    };
    respond(409, ctx.lang, page(ctx, t.thanks_title, body))
}
