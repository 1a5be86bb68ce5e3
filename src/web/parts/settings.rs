//! The poll settings fields (who sees the results and when, the closing day,
//! shuffled options, how one response per person is kept), shared by the
//! creation form and the admin page.
//!
//! Why one module: both pages offer the same controls with the same field
//! names (a documented interface, `docs/WEB.md`: `results`, `closes`,
//! `shuffle`, `duplicate`) and turn them into the same JSON the API takes,
//! so the API's validation, and nothing else, decides what is accepted.

use maud::{Markup, html};
use serde_json::{Value, json};

use super::fields::{described, errors_of};
use crate::domain::{DuplicateCheck, FieldError, Key, Poll, ResultsVisibility, Seg};
use crate::i18n::Catalogue;
use crate::web::form::{Form, Problems};
use crate::web::layout::Ctx;

/// The settings as typed, kept verbatim so they can be shown again.
#[derive(Clone, Debug)]
pub struct SettingsDraft {
    /// One of [`ResultsVisibility::codes`]; anything else is refused by the API's rules.
    pub results: String,
    /// `YYYY-MM-DD`, or empty for no closing day.
    pub closes: String,
    pub shuffle: bool,
    /// One of [`DuplicateCheck::codes`] (`duplicateCheck`); empty means the default.
    pub duplicate: String,
    /// `voteChanges`: `None` when the form did not offer the checkbox (a
    /// form of an older page): the API's default on creation, unchanged in
    /// a PATCH.
    pub vote_changes: Option<bool>,
}

/// A hidden field sent with the `voteChanges` checkbox: an unchecked box
/// sends nothing, so this tells "unchecked" from "not offered".
pub const VOTE_CHANGES_OFFERED: &str = "voteChangesOffered";

impl Default for SettingsDraft {
    fn default() -> SettingsDraft {
        SettingsDraft {
            results: ResultsVisibility::AfterVote.as_str().to_owned(),
            closes: String::new(),
            shuffle: false,
            duplicate: DuplicateCheck::default().as_str().to_owned(),
            vote_changes: None,
        }
    }
}

impl SettingsDraft {
    pub fn from_form(form: &Form) -> SettingsDraft {
        SettingsDraft {
            results: form.text("results"),
            closes: form.text("closes"),
            shuffle: form.get("shuffle").is_some_and(|v| !v.is_empty()),
            duplicate: form.text("duplicate"),
            vote_changes: if form.get("voteChanges").is_some_and(|v| !v.is_empty()) {
                Some(true)
            } else if form.get(VOTE_CHANGES_OFFERED).is_some() {
                Some(false)
            } else {
                None
            },
        }
    }

    pub fn from_poll(poll: &Poll) -> SettingsDraft {
        SettingsDraft {
            results: poll.visibility.as_str().to_owned(),
            closes: poll.closes_on.map(|d| d.to_string()).unwrap_or_default(),
            shuffle: poll.shuffle_options,
            duplicate: poll.duplicate_check.as_str().to_owned(),
            vote_changes: Some(poll.vote_changes),
        }
    }

    /// Adds the settings to an API body (creation or PATCH). An empty
    /// closing day is left out of a creation and is `null` (no closing day)
    /// in a PATCH.
    pub fn add_to(&self, body: &mut Value, patch: bool) {
        let results = if self.results.trim().is_empty() { "private" } else { self.results.trim() };
        body["resultsVisibility"] = json!(results);
        let closes = self.closes.trim();
        if !closes.is_empty() {
            body["closesOn"] = json!(closes);
        } else if patch {
            body["closesOn"] = Value::Null;
        }
        body["shuffleOptions"] = json!(self.shuffle);
        // Left out when not sent (a form of an older page): the API's default
        // on creation, unchanged in a PATCH. Anything else sent goes to the
        // API as is, which refuses what is not one of its values.
        let duplicate = self.duplicate.trim();
        if !duplicate.is_empty() {
            body["duplicateCheck"] = json!(duplicate);
        }
        if let Some(v) = self.vote_changes {
            body["voteChanges"] = json!(v);
        }
    }
}

/// Who sees the results of `poll`, and when, in a sentence.
pub fn visibility_text(t: &Catalogue, poll: &Poll) -> String {
    match (poll.visibility, poll.closes_on) {
        (ResultsVisibility::Public, _) => t.results_public.to_owned(),
        (ResultsVisibility::Private, _) => t.created_results_private.to_owned(),
        (ResultsVisibility::AfterVote, _) => t.withheld_after_vote.to_owned(),
        (ResultsVisibility::AfterClose, None) => t.withheld_after_close.to_owned(),
        (ResultsVisibility::AfterClose, Some(day)) => (t.withheld_after_close_on)(&t.day(&day.to_string())),
    }
}

/// The HTML ids of the settings fields (prefix `f` on the creation form, `a` on the admin page).
pub fn field_id(prefix: &str, key: Key) -> Option<String> {
    match key {
        Key::ResultsVisibility | Key::ResultsPublic => Some(format!("{prefix}-results-private")),
        Key::ClosesOn => Some(format!("{prefix}-closes-on")),
        Key::ShuffleOptions => Some(format!("{prefix}-shuffle")),
        Key::DuplicateCheck => Some(format!("{prefix}-duplicate-network")),
        Key::VoteChanges => Some(format!("{prefix}-vote-changes")),
        _ => None,
    }
}

/// The settings field a problem points at, with its name for the summary.
pub fn field_of(ctx: &Ctx, prefix: &str, error: &FieldError) -> Option<(String, String)> {
    let t = ctx.t;
    let [Seg::Key(key)] = error.path.segs() else { return None };
    let name = match key {
        Key::ResultsVisibility | Key::ResultsPublic => t.field_results,
        Key::ClosesOn => t.field_closes_on,
        Key::ShuffleOptions => t.field_shuffle,
        Key::DuplicateCheck => t.field_duplicate,
        Key::VoteChanges => t.vote_changes_label,
        _ => return None,
    };
    Some((field_id(prefix, *key)?, name.to_owned()))
}

/// The controls, with the problems found at them.
pub fn fields(ctx: &Ctx, prefix: &str, draft: &SettingsDraft, p: &Problems) -> Markup {
    let t = ctx.t;
    let results_id = format!("{prefix}-results-private");
    let closes_id = format!("{prefix}-closes-on");
    let shuffle_id = format!("{prefix}-shuffle");
    let duplicate_id = format!("{prefix}-duplicate-network");
    let vote_changes_id = format!("{prefix}-vote-changes");
    let closes_errors = p.of(&closes_id);
    let duplicate_errors = p.of(&duplicate_id);
    // Each choice says in plain words what it does and what it costs.
    let duplicates = [
        // The day rule in this server's number (`--network-votes-per-day`).
        (DuplicateCheck::Network, (t.duplicate_network)(ctx.network_day), (t.duplicate_network_hint)(ctx.network_day)),
        (DuplicateCheck::Invite, t.duplicate_invite.to_owned(), t.duplicate_invite_hint.to_owned()),
        (DuplicateCheck::None, t.duplicate_none.to_owned(), t.duplicate_none_hint.to_owned()),
    ];
    let known = DuplicateCheck::from_code(draft.duplicate.trim());
    let choices = [
        (ResultsVisibility::Private, t.results_private),
        (ResultsVisibility::Public, t.results_public),
        (ResultsVisibility::AfterVote, t.results_after_vote),
        (ResultsVisibility::AfterClose, t.results_after_close),
    ];
    html! {
        fieldset.field.choices {
            legend { (t.field_results) }
            (errors_of(&results_id, &p.of(&results_id)))
            @for (v, label) in choices {
                @let id = format!("{prefix}-results-{}", v.as_str().to_lowercase());
                div.choice {
                    input type="radio" id=(id) name="results" value=(v.as_str())
                        checked[draft.results == v.as_str() || (v == ResultsVisibility::Private && !ResultsVisibility::codes().contains(&draft.results.as_str()))];
                    label for=(id) { (label) }
                }
            }
        }
        div.field {
            label for=(closes_id) { (t.field_closes_on) }
            p.hint id=(format!("{closes_id}-hint")) { (t.field_closes_on_hint) }
            (errors_of(&closes_id, &closes_errors))
            input type="date" id=(closes_id) name="closes" value=(draft.closes)
                aria-invalid=[(!closes_errors.is_empty()).then_some("true")]
                aria-describedby=[described(&closes_id, true, &closes_errors)];
        }
        div.field.check {
            input type="checkbox" id=(shuffle_id) name="shuffle" value="1" checked[draft.shuffle]
                aria-describedby=(format!("{shuffle_id}-hint"));
            label for=(shuffle_id) { (t.field_shuffle) }
            p.hint id=(format!("{shuffle_id}-hint")) { (t.field_shuffle_hint) }
        }
        fieldset.field.choices {
            legend { (t.field_duplicate) }
            (errors_of(&duplicate_id, &duplicate_errors))
            @for (v, label, hint) in duplicates {
                @let id = format!("{prefix}-duplicate-{}", v.as_str());
                div.choice.described {
                    input type="radio" id=(id) name="duplicate" value=(v.as_str())
                        checked[known.unwrap_or_default() == v]
                        aria-describedby=(format!("{id}-hint"));
                    label for=(id) { (label) }
                    p.hint id=(format!("{id}-hint")) { (hint) }
                }
            }
        }
        div.field.check {
            input type="hidden" name=(VOTE_CHANGES_OFFERED) value="1";
            input type="checkbox" id=(vote_changes_id) name="voteChanges" value="1" checked[draft.vote_changes.unwrap_or(true)]
                aria-describedby=(format!("{vote_changes_id}-hint"));
            label for=(vote_changes_id) { (t.vote_changes_label) }
            p.hint id=(format!("{vote_changes_id}-hint")) { (t.vote_changes_hint) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{NewPoll, PollPatch};

    fn body() -> Value {
        json!({"title": "t", "lang": "en", "expiryDays": 30, "questions": [{"label": "q", "options": ["a", "b"]}]})
    }

    #[test]
    fn the_form_fields_become_the_apis_settings() {
        let form = Form::from_pairs(&[("results", "afterClose"), ("closes", " 2030-01-02 "), ("shuffle", "1")]);
        let mut b = body();
        SettingsDraft::from_form(&form).add_to(&mut b, false);
        assert_eq!(b["resultsVisibility"], "afterClose");
        assert_eq!(b["closesOn"], "2030-01-02");
        assert_eq!(b["shuffleOptions"], true);
        let poll = NewPoll::from_json(&b).map_err(|e| format!("{e:?}"));
        assert_eq!(poll.map(|p| (p.visibility, p.shuffle_options)), Ok((ResultsVisibility::AfterClose, true)));

        // Nothing chosen: private, no closing day, no shuffle (a blank form's values).
        let mut b = body();
        SettingsDraft::from_form(&Form::from_pairs(&[])).add_to(&mut b, false);
        assert_eq!((b["resultsVisibility"].clone(), b.get("closesOn")), (json!("private"), None));

        // On the admin page an empty day removes the closing day.
        let mut b = json!({});
        SettingsDraft::from_form(&Form::from_pairs(&[("results", "public")])).add_to(&mut b, true);
        let patch = PollPatch::from_json(&b).map_err(|e| format!("{e:?}"));
        assert_eq!(patch.map(|p| (p.visibility, p.closes_on)), Ok((Some(ResultsVisibility::Public), Some(None))));
    }

    #[test]
    fn the_duplicate_field_becomes_duplicate_check() {
        for (typed, wanted) in
            [("invite", DuplicateCheck::Invite), ("none", DuplicateCheck::None), ("network", DuplicateCheck::Network)]
        {
            let mut b = body();
            SettingsDraft::from_form(&Form::from_pairs(&[("duplicate", typed)])).add_to(&mut b, false);
            let poll = NewPoll::from_json(&b).map_err(|e| format!("{e:?}"));
            assert_eq!(poll.map(|p| p.duplicate_check), Ok(wanted), "{typed}");
        }
        // Not sent: the default on creation, unchanged by a PATCH.
        let mut b = json!({});
        SettingsDraft::from_form(&Form::from_pairs(&[])).add_to(&mut b, true);
        assert_eq!(PollPatch::from_json(&b).map(|p| p.duplicate_check).map_err(|e| format!("{e:?}")), Ok(None));
        // Anything else is the API's to refuse, at the field.
        let mut b = body();
        SettingsDraft::from_form(&Form::from_pairs(&[("duplicate", "cookie")])).add_to(&mut b, false);
        let errors = NewPoll::from_json(&b).err().unwrap_or_default();
        assert_eq!(errors.len(), 1);
        assert_eq!(field_id("f", Key::DuplicateCheck).as_deref(), Some("f-duplicate-network"));
        assert!(matches!(errors[0].path.segs(), [Seg::Key(Key::DuplicateCheck)]), "{errors:?}");
    }

    #[test]
    fn the_vote_changes_box_tells_unchecked_from_not_offered() {
        let read = |pairs: &[(&str, &str)], patch: bool| {
            let mut b = if patch { json!({}) } else { body() };
            SettingsDraft::from_form(&Form::from_pairs(pairs)).add_to(&mut b, patch);
            b.get("voteChanges").cloned()
        };
        assert_eq!(read(&[(VOTE_CHANGES_OFFERED, "1"), ("voteChanges", "1")], false), Some(json!(true)));
        assert_eq!(read(&[(VOTE_CHANGES_OFFERED, "1")], false), Some(json!(false)));
        assert_eq!(read(&[(VOTE_CHANGES_OFFERED, "1")], true), Some(json!(false)));
        // Not offered: the API's default on creation, unchanged by a PATCH.
        assert_eq!(read(&[], false), None);
        assert_eq!(read(&[], true), None);
        let mut b = body();
        SettingsDraft::from_form(&Form::from_pairs(&[(VOTE_CHANGES_OFFERED, "1")])).add_to(&mut b, false);
        assert_eq!(NewPoll::from_json(&b).map(|p| p.vote_changes).map_err(|e| format!("{e:?}")), Ok(false));
        assert_eq!(NewPoll::from_json(&body()).map(|p| p.vote_changes).map_err(|e| format!("{e:?}")), Ok(true));
    }
}
