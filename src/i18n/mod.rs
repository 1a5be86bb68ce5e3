//! The interface text in every language anonpoll speaks.
//!
//! Why a struct and not a key/value file: each language is one `const`
//! [`Catalogue`] value, and a struct literal that lacks a field does not
//! compile. A message added for one language is therefore a build failure
//! until every language has it; no reader ever sees a blank or a key name.
//! Messages that take numbers or names are plain functions, so each language
//! handles its own plurals, word order and typography (the French narrow
//! no-break space before `:`/`?`/`%`, for instance).
//!
//! Texts are plain text: the page templates escape them like any other value.

mod de;
mod en;
mod fr;
mod it;

use crate::domain::{DateSlot, Lang};

/// One row of the privacy page's table: what, where, for how long.
pub type KeptRow = (&'static str, &'static str, &'static str);

/// Every message of the interface, in one language.
pub struct Catalogue {
    // --- Names and formats ---------------------------------------------------
    /// Names of en, fr, de, it in this language (lower-case where the
    /// language writes them so in running text).
    pub lang_names: [&'static str; 4],
    /// A calendar day, e.g. "3 March 2025".
    pub date: fn(i32, u8, u8) -> String,
    /// A percentage with the given number of decimals, e.g. (33.3, 1) →
    /// "33.3%", (33.0, 0) → "33%".
    pub percent: fn(f64, usize) -> String,

    // --- Layout --------------------------------------------------------------
    pub skip_link: &'static str,
    pub nav_label: &'static str,
    pub nav_create: &'static str,
    pub nav_privacy: &'static str,
    pub lang_switch_label: &'static str,
    pub footer: &'static str,

    // --- Creation form -------------------------------------------------------
    pub create_title: &'static str,
    pub create_intro: &'static str,
    pub field_title: &'static str,
    pub field_title_hint: &'static str,
    pub field_lang: &'static str,
    pub field_lang_hint: &'static str,
    pub field_expiry: &'static str,
    pub field_expiry_hint: &'static str,
    pub expiry_option: fn(u16) -> String,
    pub field_results: &'static str,
    pub results_public: &'static str,
    pub results_private: &'static str,
    pub questions_heading: &'static str,
    pub questions_hint: &'static str,
    pub question_legend: fn(usize) -> String,
    pub field_question: &'static str,
    pub field_option: fn(usize) -> String,
    pub add_option: &'static str,
    pub add_question: &'static str,
    pub remove_question: &'static str,
    pub move_up: &'static str,
    pub submit_create: &'static str,
    pub errors_heading: &'static str,

    // --- Field errors --------------------------------------------------------
    pub err_required: &'static str,
    pub err_too_long: fn(usize) -> String,
    pub err_control: &'static str,
    pub err_bidi: &'static str,
    pub err_separator: &'static str,
    pub err_marks: fn(usize) -> String,
    pub err_invisible: &'static str,
    pub err_questions_count: fn(usize, usize) -> String,
    pub err_options_count: fn(usize, usize) -> String,
    /// The same answer as answer `n` of the question (1-based).
    pub err_duplicate: fn(usize) -> String,
    /// An answer that looks the same as answer `n`, other characters aside.
    pub err_lookalike: fn(usize) -> String,
    pub err_choice: &'static str,
    pub err_generic: &'static str,
    pub err_rate_limited: fn(u64) -> String,
    pub err_unavailable: &'static str,

    // --- Creation done -------------------------------------------------------
    pub created_title: &'static str,
    pub created_share: &'static str,
    pub created_share_hint: &'static str,
    pub created_results: &'static str,
    pub created_results_private: &'static str,
    pub created_admin: &'static str,
    pub created_admin_hint: &'static str,
    pub created_warning_title: &'static str,
    pub created_warning: &'static str,
    pub copy: &'static str,
    pub copied: &'static str,
    pub open_poll: &'static str,

    // --- Poll facts ----------------------------------------------------------
    pub status_open: &'static str,
    pub status_closed: &'static str,
    pub erased_on: fn(&str) -> String,
    pub created_on: fn(&str) -> String,

    // --- Poll settings: results visibility, closing day, shuffled options ---
    pub results_after_vote: &'static str,
    pub results_after_close: &'static str,
    pub field_closes_on: &'static str,
    pub field_closes_on_hint: &'static str,
    pub field_shuffle: &'static str,
    pub field_shuffle_hint: &'static str,
    pub closes_on: fn(&str) -> String,
    pub closed_on: fn(&str) -> String,
    pub err_not_a_day: &'static str,
    pub err_deadline_not_after_today: &'static str,
    pub err_deadline_after_expiry: fn(&str) -> String,
    pub err_expires_before_deadline: fn(&str) -> String,
    pub withheld_title: &'static str,
    pub withheld_after_vote: &'static str,
    pub withheld_after_close: &'static str,
    pub withheld_after_close_on: fn(&str) -> String,
    pub voted_results: &'static str,
    pub settings_heading: &'static str,
    pub settings_save: &'static str,
    pub settings_done: &'static str,

    // --- Share page and vote -------------------------------------------------
    pub vote_intro: &'static str,
    pub vote_submit: &'static str,
    pub already_voted: &'static str,
    pub closed_title: &'static str,
    pub closed_text: &'static str,
    pub see_results: &'static str,
    pub err_no_answer: &'static str,
    pub err_vote_form: &'static str,
    pub err_ballot_used: &'static str,
    pub err_ballot_expired: &'static str,
    /// The creation form was sent a second time (Back to it, or a reload of
    /// "Your poll is ready"): nothing is wrong, the poll exists; the page
    /// says so and how to get back to it. Paragraphs.
    pub create_sent_title: &'static str,
    pub create_sent_text: [&'static str; 3],
    /// The creation form's one-time code is unknown or from a rotated key.
    pub err_create_expired: &'static str,
    pub err_throttled: &'static str,
    /// A `network` poll's response from one network beyond the (n) it
    /// takes a day: what happened, and what the creator can choose instead.
    pub err_voted_from_network: fn(u32) -> String,
    pub err_paced: &'static str,
    pub err_vote_not_saved: &'static str,
    pub thanks_title: &'static str,
    pub thanks_text: &'static str,
    pub thanks_private: &'static str,

    // --- Results -------------------------------------------------------------
    pub results_heading: &'static str,
    pub responses_total: fn(u64) -> String,
    pub answered: fn(u64) -> String,
    pub col_answer: &'static str,
    pub col_votes: &'static str,
    pub col_share: &'static str,
    pub by_day_heading: &'static str,
    pub col_day: &'static str,
    pub col_responses: &'static str,
    pub no_responses: &'static str,

    // --- Token prompt (private results, admin) -------------------------------
    pub private_results_title: &'static str,
    pub private_results_text: &'static str,
    pub token_label: &'static str,
    pub token_hint: &'static str,
    pub token_show_results: &'static str,
    pub token_open_admin: &'static str,
    pub err_bad_token: &'static str,

    // --- Admin ---------------------------------------------------------------
    pub admin_title: &'static str,
    pub admin_intro: &'static str,
    pub links_heading: &'static str,
    pub status_heading: &'static str,
    pub close_poll: &'static str,
    pub reopen_poll: &'static str,
    pub closed_done: &'static str,
    pub reopened_done: &'static str,
    pub expiry_heading: &'static str,
    pub expiry_label: &'static str,
    pub expiry_submit: &'static str,
    pub expiry_done: fn(&str) -> String,
    pub versions_heading: &'static str,
    pub versions_intro: &'static str,
    pub version_heading: fn(&str) -> String,
    pub version_exists: &'static str,
    pub version_missing: &'static str,
    pub version_title: &'static str,
    pub original: fn(&str) -> String,
    pub version_save: &'static str,
    pub version_remove: &'static str,
    pub version_saved: fn(&str) -> String,
    pub version_removed: fn(&str) -> String,
    pub delete_heading: &'static str,
    pub delete_text: &'static str,
    pub delete_button: &'static str,
    pub delete_confirm_title: &'static str,
    pub delete_confirm_text: &'static str,
    pub delete_confirm_button: &'static str,
    pub delete_cancel: &'static str,
    pub deleted_title: &'static str,
    pub deleted_text: &'static str,

    // --- Errors as pages -----------------------------------------------------
    pub not_found_title: &'static str,
    pub not_found_text: &'static str,
    pub page_not_found_title: &'static str,
    pub page_not_found_text: &'static str,
    pub bad_form: &'static str,
    pub too_large: &'static str,

    // --- Media ---------------------------------------------------------------
    /// image, sound, video (lower case, for running text).
    pub media_kind_names: [&'static str; 3],
    pub media_poll_legend: &'static str,
    pub media_question_legend: &'static str,
    pub media_file: &'static str,
    /// Accepted types and the limits in MB: image, audio, video.
    pub media_file_hint: fn(u64, u64, u64) -> String,
    pub media_alt: &'static str,
    pub media_alt_hint: &'static str,
    pub media_drop: &'static str,
    pub media_open: &'static str,
    pub err_media_type: &'static str,
    /// Kind name and its limit in MB.
    pub err_media_too_large: fn(&str, u64) -> String,
    /// The limit in megapixels.
    pub err_media_pixels: fn(u64) -> String,
    pub err_media_corrupt: &'static str,
    pub err_media_codec: &'static str,
    pub err_media_empty: &'static str,
    pub err_media_busy: &'static str,
    pub err_media_full: &'static str,
    pub err_media_quota: &'static str,
    pub err_media_lost: &'static str,
    pub err_alt_required: &'static str,
    pub media_heading: &'static str,
    pub media_intro: &'static str,
    pub media_slot: &'static str,
    pub media_slot_poll: &'static str,
    pub media_attach: &'static str,
    pub media_attached: &'static str,
    pub media_removed: &'static str,
    pub media_none: &'static str,
    pub media_remove: &'static str,
    pub cross_site: &'static str,
    pub method_not_allowed: &'static str,
    pub error_title: &'static str,
    pub error_text: &'static str,
    pub back_home: &'static str,

    // --- Privacy page --------------------------------------------------------
    pub privacy_title: &'static str,
    pub privacy_intro: &'static str,
    pub privacy_table_caption: &'static str,
    pub privacy_col_what: &'static str,
    pub privacy_col_where: &'static str,
    pub privacy_col_until: &'static str,
    pub privacy_rows: [KeptRow; 10],
    /// The vote throttle's row; takes the window in minutes.
    pub privacy_throttle_row: fn(u64) -> (String, String, String),
    pub privacy_never_heading: &'static str,
    pub privacy_never: [&'static str; 5],
    pub privacy_browser_heading: &'static str,
    pub privacy_browser: &'static str,

    // --- Question types (multiple, ranked, scale) ---------------------------
    /// Marks a question that must be answered.
    pub required_mark: &'static str,
    /// How many answers a multiple-choice question takes: (min, max, options).
    pub choose_between: fn(usize, usize, usize) -> String,
    pub rank_hint: &'static str,
    /// The choice that clears an optional single-choice or scale question
    /// (sent as an empty value: unanswered).
    pub no_answer: &'static str,
    /// The empty choice of a rank select.
    pub rank_none: &'static str,
    /// The rank select's label for an option: "Rank of {option}".
    pub rank_of: fn(&str) -> String,
    pub rank_up: &'static str,
    pub rank_down: &'static str,
    /// Said (politely) after a ranking changed: (option, rank).
    pub rank_now: fn(&str, &str) -> String,
    /// Said after an option left the ranking: (option).
    pub rank_now_none: fn(&str) -> String,
    /// A scale question's hint: (min, max).
    pub scale_hint: fn(u8, u8) -> String,
    pub field_type: &'static str,
    /// Names of single, multiple, ranked, scale.
    pub type_names: [&'static str; 5],
    /// A schedule question (`schedule`): the three answers per slot, the
    /// vote form's hint, the results' mark, the creation form's slot fields.
    pub avail_yes: &'static str,
    pub avail_if_need_be: &'static str,
    pub avail_no: &'static str,
    pub schedule_hint: &'static str,
    pub times_in: fn(&str) -> String,
    pub all_day: &'static str,
    pub weekdays: [&'static str; 7],
    /// A slot's day with its weekday: (weekday, date as `date` writes it).
    pub slot_day: fn(&str, &str) -> String,
    pub best_slot: &'static str,
    pub slots_best_first: &'static str,
    pub err_not_a_slot: &'static str,
    pub err_slot_order: fn(&str) -> String,
    pub err_time_zone: &'static str,
    pub err_times: &'static str,
    pub err_slots_count: fn(usize, usize) -> String,
    pub field_slots: &'static str,
    pub field_slots_hint: &'static str,
    pub field_slot_day: fn(usize) -> String,
    pub field_slot_time: fn(usize) -> String,
    pub field_times: &'static str,
    pub field_times_hint: &'static str,
    pub field_time_zone: &'static str,
    pub field_time_zone_hint: &'static str,
    pub add_slot: &'static str,
    pub field_required: &'static str,
    pub field_min_choices: &'static str,
    pub field_max_choices: &'static str,
    /// What a blank "at least" / "at most" means.
    pub field_choices_hint: &'static str,
    pub field_scale_min: &'static str,
    pub field_scale_max: &'static str,
    /// The scale's ends as the error summary names them: "To" alone says
    /// nothing away from its field.
    pub field_scale_min_named: &'static str,
    pub field_scale_max_named: &'static str,
    pub field_min_label: &'static str,
    pub field_max_label: &'static str,
    pub err_range: fn(usize, usize) -> String,
    pub err_not_for_type: &'static str,
    /// Ballot problems, with the 1-based question number.
    pub err_choice_count: fn(usize, usize, usize) -> String,
    pub err_repeated_rank: fn(usize) -> String,
    pub err_rank_gap: fn(usize) -> String,
    pub err_off_scale: fn(usize, u8, u8) -> String,
    pub err_unanswered: fn(usize) -> String,
    /// An option index the question does not have (1-based question).
    pub err_no_such_option: fn(usize) -> String,

    // --- Duplicate check and invite codes ------------------------------------
    pub invite_label: &'static str,
    pub invite_hint: &'static str,
    /// Said only where the script runs (it does what this says).
    pub invite_hint_link: &'static str,
    pub err_invite_missing: &'static str,
    pub err_invite_refused: &'static str,
    pub err_invite_not_a_code: &'static str,
    /// The invite form was sent a second time (a reload of the sheet).
    pub err_invites_sent: &'static str,
    /// The invite form's one-time code is unknown or from a rotated key.
    pub err_invites_expired: &'static str,
    /// (codes the poll has, the most it may have)
    pub err_too_many_invites: fn(u64, u64) -> String,

    // --- Duplicate check setting and the admin's invite codes ----------------
    pub field_duplicate: &'static str,
    /// The `network` check, by the responses (n) it takes from one network
    /// a day on this server; 0: none such, only the short-term limit.
    pub duplicate_network: fn(u32) -> String,
    pub duplicate_network_hint: fn(u32) -> String,
    pub duplicate_invite: &'static str,
    pub duplicate_invite_hint: &'static str,
    pub duplicate_none: &'static str,
    pub duplicate_none_hint: &'static str,
    pub invites_heading: &'static str,
    pub invites_intro: &'static str,
    /// On the admin page of a poll that does not ask for codes now.
    pub invites_not_in_use: &'static str,
    /// (codes issued, codes used)
    pub invites_status: fn(u64, u64) -> String,
    pub invites_count_label: &'static str,
    pub invites_count_hint: &'static str,
    pub invites_issue: &'static str,
    pub invites_issue_csv: &'static str,
    pub invites_sheet_title: &'static str,
    /// (codes on the sheet)
    pub invites_sheet_count: fn(u64) -> String,
    pub invites_once: &'static str,
    pub invites_print_hint: &'static str,
    pub print_button: &'static str,
    pub invite_card_text: &'static str,
    /// The card's text while the poll does not take codes yet: it promises
    /// no "one response per code".
    pub invite_card_text_open: &'static str,
    pub invite_card_code: &'static str,
    pub invite_card_link: &'static str,
    pub invite_qr: &'static str,
    pub invites_back: &'static str,
    /// At the vote form's code field: no code, and a refused one.
    pub invite_field_missing: &'static str,
    pub invite_field_refused: &'static str,
    pub invite_field_not_a_code: &'static str,
    pub first_choices: &'static str,
    pub ranking_heading: &'static str,
    /// In place of a ranking's places while nobody has ranked its options.
    pub ranking_none: &'static str,
    /// A place in a ranking: 1 → "1st".
    pub place: fn(usize) -> String,
    /// A place two or more options share: ("2nd") → "2nd (shared)".
    pub place_shared: fn(&str) -> String,
    pub col_place: &'static str,
    pub pairwise_heading: &'static str,
    pub pairwise_hint: &'static str,
    pub col_value: &'static str,
    pub scale_mean: &'static str,
    pub scale_median: &'static str,

    // --- Design ---------------------------------------------------
    /// What joins a label and its text ("Mean: 3"): French puts a narrow
    /// no-break space before the colon.
    pub colon: &'static str,
    /// The one-line promise under the home page's title.
    pub tagline: &'static str,
    /// The heading of the problem list on pages other than creation.
    pub problems_heading: &'static str,
    /// Above a file kept from an earlier send.
    pub media_kept: &'static str,
    /// The file field's label when a file is already kept.
    pub media_replace: &'static str,
    /// The mark beside the answer(s) with the most votes.
    pub leading: &'static str,
    /// The QR code of the share link, for screen readers.
    pub share_qr: &'static str,
    /// The remove button of answer n in the creation form (script).
    pub remove_option: fn(usize) -> String,
    /// Under public results while the script refreshes them.
    pub results_live: &'static str,

    // --- Receipts: change or withdraw one's own ballot ----------------------
    /// Checkbox in the settings (`voteChanges`).
    pub vote_changes_label: &'static str,
    pub vote_changes_hint: &'static str,
    /// After a vote: the receipt.
    pub receipt_heading: &'static str,
    pub receipt_text: &'static str,
    /// Said only where the script runs (it does what this says).
    pub receipt_kept: &'static str,
    /// The receipt's field and its label.
    pub receipt_label: &'static str,
    pub receipt_link: &'static str,
    pub receipt_open: &'static str,
    /// On the share page, when this browser keeps a receipt for the poll.
    pub receipt_remembered: &'static str,
    pub receipt_forget: &'static str,
    /// The page of one's own ballot (`/p/{id}/ballot`).
    pub own_ballot_title: &'static str,
    pub own_ballot_prompt: &'static str,
    pub own_ballot_show: &'static str,
    pub own_ballot_intro: &'static str,
    pub own_ballot_change: &'static str,
    pub own_ballot_withdraw: &'static str,
    pub own_ballot_withdraw_hint: &'static str,
    pub own_ballot_changed: &'static str,
    pub own_ballot_withdrawn_title: &'static str,
    pub own_ballot_withdrawn_text: &'static str,
    /// Receipt refusals.
    pub err_receipt_not_a_receipt: &'static str,
    pub err_receipt_unknown: &'static str,
    pub err_receipt_changes_off: &'static str,
    pub err_receipt_closed: &'static str,

    // --- The web flows -------------------------------------------
    /// "Your poll is ready": the opt-in checkbox that keeps the admin link
    /// in this browser's localStorage (script only), and its hint.
    pub keep_admin_label: &'static str,
    pub keep_admin_hint: &'static str,
    /// Said (visually hidden) after a link that opens a new tab.
    pub opens_new_tab: &'static str,
    /// The home page's list of admin links kept in this browser.
    pub my_polls_heading: &'static str,
    pub my_polls_hint: &'static str,
    pub my_polls_forget: &'static str,
    /// On the share page after a vote: the button that unfolds the form.
    pub answer_again: &'static str,
    /// One of several receipts this browser keeps for a poll: (n).
    /// The `n`th ballot of this browser, told apart by its receipt's start `r`.
    pub receipt_open_nth: fn(usize, &str) -> String,
    /// The share page's plain link to the ballot page, for a receipt typed.
    pub receipt_have: &'static str,
    /// The invite form sent again (a reload of the sheet).
    pub invites_sent_title: &'static str,
    /// "Your poll is ready" of an invite-only poll.
    pub created_share_hint_invite: &'static str,
    pub created_next_invites: &'static str,
    /// Said (by the script) when "Next" is pressed before the admin link
    /// was copied or kept.
    pub created_save_first: &'static str,
    /// A refused vote: the summary's heading, and each problem at its
    /// question, without the question's number (the page shows none; the
    /// summary names the question by its text).
    pub vote_not_sent: &'static str,
    /// (min, max)
    pub vote_err_choice_count: fn(usize, usize) -> String,
    /// Said (by the script) when a box beyond a question's maximum was not
    /// ticked: the answer is still valid, so it is a note, not an error.
    pub vote_max_reached: fn(usize) -> String,
    pub vote_err_repeated_rank: &'static str,
    pub vote_err_rank_gap: &'static str,
    /// (min, max)
    pub vote_err_off_scale: fn(u8, u8) -> String,
    pub vote_err_unanswered: &'static str,
    pub vote_err_no_such_option: &'static str,
    /// "Results not visible yet": the way to the poll (to vote, on a poll
    /// that shows results after a vote; else to the poll itself).
    pub withheld_vote: &'static str,
    pub withheld_open_poll: &'static str,
    /// The withdraw warning's sentence for a poll with invite codes.
    pub own_ballot_withdraw_code: &'static str,
    /// The creation form's question count, by what is wrong: none at all,
    /// or more than (max).
    pub err_questions_none: &'static str,
    pub err_questions_many: fn(usize) -> String,
    /// A scale whose end is not above its start: (start).
    pub err_scale_to_above: fn(u8) -> String,
    /// The head-to-head hint where the table is shown as cards (narrow screens).
    pub pairwise_hint_cards: &'static str,

    // --- Sent again, a voter back at the results, the day rule's number -----
    /// The page for a creation form sent again: the way to a new poll, with
    /// what was typed.
    pub create_another: &'static str,
    pub create_another_hint: &'static str,
    /// A voter back at an `afterVote` poll: the share page's link to the
    /// results page (for a receipt typed), and the receipt form there.
    pub voter_results_link: &'static str,
    pub voter_results_hint: &'static str,
    /// The privacy page's row for the day rule of `network` polls, by the
    /// responses (n ≥ 1) it takes from one network a day.
    pub privacy_network_day_row: fn(u32) -> (String, String, String),
    // --- Issue 37: fixing a poll after creation, and the admin page after an action ---
    /// Under a poll's title: the day its title or questions last changed.
    pub edited_on: fn(&str) -> String,
    /// The admin page's section for the title and the questions.
    pub edit_heading: &'static str,
    /// Its intro while nobody has answered, and once the poll has responses.
    pub edit_intro_open: &'static str,
    pub edit_intro_locked: &'static str,
    /// What voters see of a change.
    pub edit_shown: &'static str,
    /// On a poll with language versions: a change of questions or answers removes them.
    pub edit_versions_note: &'static str,
    pub edit_save: &'static str,
    pub edit_saved: &'static str,
    pub edit_saved_versions_dropped: &'static str,
    /// A change the poll's responses forbid (only texts may change).
    pub err_fixed_by_responses: &'static str,
    /// A vote read against questions that changed since (the share page).
    pub err_poll_changed: &'static str,
    /// The key prompt after an action, when the page cannot open the dashboard by itself.
    pub admin_done_again: &'static str,
    /// The dashboard a reload of the invite sheet loads: the codes are not shown again.
    pub invites_shown_done: &'static str,
}

/// The catalogue of `lang`.
pub fn catalogue(lang: Lang) -> &'static Catalogue {
    match lang {
        Lang::En => &en::EN,
        Lang::Fr => &fr::FR,
        Lang::De => &de::DE,
        Lang::It => &it::IT,
    }
}

impl Catalogue {
    /// The name of `lang` in this catalogue's language.
    pub fn lang_name(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.lang_names[0],
            Lang::Fr => self.lang_names[1],
            Lang::De => self.lang_names[2],
            Lang::It => self.lang_names[3],
        }
    }

    /// A schedule slot's day in this language, with its weekday.
    pub fn slot_day(&self, slot: &DateSlot) -> String {
        let (y, m, d) = slot.day.parts();
        let weekday = self.weekdays.get(slot.day.weekday()).copied().unwrap_or("");
        (self.slot_day)(weekday, &(self.date)(y, m, d))
    }

    /// A slot's time (its own local time, unchanged), or "all day".
    pub fn slot_time(&self, slot: &DateSlot) -> String {
        slot.clock().unwrap_or_else(|| self.all_day.to_owned())
    }

    /// The whole slot in one line: "Thursday 14 January 2027, 18:30" (or
    /// "…, all day": the words in the middle of the line, not heading it).
    pub fn slot(&self, slot: &DateSlot) -> String {
        let time = slot.clock().unwrap_or_else(|| {
            let mut chars = self.all_day.chars();
            chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
        });
        format!("{}, {time}", self.slot_day(slot))
    }

    /// A `YYYY-MM-DD` day in this language; the text unchanged if it is not one.
    pub fn day(&self, ymd: &str) -> String {
        let mut parts = ymd.splitn(3, '-');
        let parsed = (|| {
            let y = parts.next()?.parse().ok()?;
            let m = parts.next()?.parse().ok()?;
            let d = parts.next()?.parse().ok()?;
            ((1..=12).contains(&m)).then_some((y, m, d))
        })();
        match parsed {
            Some((y, m, d)) => (self.date)(y, m, d),
            None => ymd.to_owned(),
        }
    }
}

/// A whole number with its digit groups marked by `mark` ("1,000",
/// "1 000", "1.000"), as each language writes numbers in running text.
pub(crate) fn grouped(n: usize, mark: &str) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push_str(mark);
        }
        out.push(c);
    }
    out
}

/// The name of a language in that language, for the language switcher.
pub fn endonym(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "English",
        Lang::Fr => "Français",
        Lang::De => "Deutsch",
        Lang::It => "Italiano",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// French typography: a narrow no-break space (U+202F) before `:;?!%`
    /// and inside « ».
    const NNBSP: char = '\u{202F}';

    /// Every message of every language, as text, with sample arguments.
    /// `all_texts` lists every field of the catalogue, so that each
    /// check over all texts sees a new message too (23 were once left out).
    #[test]
    fn all_texts_lists_every_message() {
        let src = include_str!("mod.rs");
        let fields = &src[src.find("pub struct Catalogue").unwrap()..];
        let fields = &fields[..fields.find("\n}\n").unwrap()];
        // (Split, or this line would be found instead of the function.)
        let body = &src[src.find(concat!("fn all", "_texts(")).unwrap()..];
        let body = &body[..body.find("\n    }\n").unwrap()];
        let mut seen = 0;
        for line in fields.lines() {
            if let Some((name, _)) = line.trim().strip_prefix("pub ").and_then(|l| l.split_once(':')) {
                seen += 1;
                let named = body
                    .match_indices(&format!("c.{name}"))
                    .any(|(at, m)| body[at + m.len()..].starts_with(|ch: char| !(ch.is_alphanumeric() || ch == '_')));
                assert!(named, "all_texts leaves out {name}");
            }
        }
        assert!(seen > 200, "{seen} fields read");
    }

    fn all_texts(c: &Catalogue) -> Vec<String> {
        let mut v: Vec<String> = vec![
            (c.date)(2025, 3, 1),
            (c.percent)(33.3, 1),
            (c.expiry_option)(7),
            (c.expiry_option)(365),
            (c.expiry_option)(730),
            (c.question_legend)(2),
            (c.field_option)(3),
            (c.err_too_long)(200),
            (c.err_marks)(8),
            (c.err_duplicate)(2),
            (c.err_lookalike)(2),
            (c.err_questions_count)(1, 20),
            (c.err_options_count)(2, 12),
            (c.err_rate_limited)(1),
            (c.err_rate_limited)(30),
            (c.erased_on)("x"),
            (c.created_on)("x"),
            (c.responses_total)(0),
            (c.responses_total)(1),
            (c.responses_total)(5),
            (c.answered)(1),
            (c.answered)(5),
            (c.expiry_done)("x"),
            (c.version_heading)("x"),
            (c.original)("x"),
            (c.version_saved)("x"),
            (c.version_removed)("x"),
            (c.media_file_hint)(10, 20, 50),
            (c.err_media_too_large)("x", 10),
            (c.err_media_pixels)(40),
            (c.closes_on)("x"),
            (c.closed_on)("x"),
            (c.err_deadline_after_expiry)("x"),
            (c.err_expires_before_deadline)("x"),
            (c.withheld_after_close_on)("x"),
            (c.err_too_many_invites)(10, 10_000),
            (c.invites_status)(0, 0),
            (c.invites_status)(1, 1),
            (c.invites_status)(12, 3),
            (c.invites_sheet_count)(1),
            (c.invites_sheet_count)(12),
        ];
        // Every plain message, in the order of the struct.
        v.extend(
            [
                c.skip_link,
                c.nav_label,
                c.nav_create,
                c.nav_privacy,
                c.lang_switch_label,
                c.footer,
                c.create_title,
                c.create_intro,
                c.field_title,
                c.field_title_hint,
                c.field_lang,
                c.field_lang_hint,
                c.field_expiry,
                c.field_expiry_hint,
                c.field_results,
                c.results_public,
                c.results_private,
                c.questions_heading,
                c.questions_hint,
                c.field_question,
                c.add_option,
                c.add_question,
                c.remove_question,
                c.move_up,
                c.submit_create,
                c.errors_heading,
                c.err_required,
                c.err_control,
                c.err_bidi,
                c.err_separator,
                c.err_invisible,
                c.err_choice,
                c.err_generic,
                c.err_unavailable,
                c.created_title,
                c.created_share,
                c.created_share_hint,
                c.created_results,
                c.created_results_private,
                c.created_admin,
                c.created_admin_hint,
                c.created_warning_title,
                c.created_warning,
                c.copy,
                c.copied,
                c.open_poll,
                c.status_open,
                c.status_closed,
                c.results_after_vote,
                c.results_after_close,
                c.field_closes_on,
                c.field_closes_on_hint,
                c.field_shuffle,
                c.field_shuffle_hint,
                c.err_not_a_day,
                c.err_deadline_not_after_today,
                c.withheld_title,
                c.withheld_after_vote,
                c.withheld_after_close,
                c.voted_results,
                c.settings_heading,
                c.settings_save,
                c.settings_done,
                c.vote_intro,
                c.vote_submit,
                c.already_voted,
                c.closed_title,
                c.closed_text,
                c.see_results,
                c.err_no_answer,
                c.err_vote_form,
                c.err_ballot_used,
                c.err_ballot_expired,
                c.create_sent_title,
                c.err_create_expired,
                c.err_throttled,
                c.err_paced,
                c.err_vote_not_saved,
                c.thanks_title,
                c.thanks_text,
                c.thanks_private,
                c.results_heading,
                c.col_answer,
                c.col_votes,
                c.col_share,
                c.by_day_heading,
                c.col_day,
                c.col_responses,
                c.no_responses,
                c.private_results_title,
                c.private_results_text,
                c.token_label,
                c.token_hint,
                c.token_show_results,
                c.token_open_admin,
                c.err_bad_token,
                c.admin_title,
                c.admin_intro,
                c.links_heading,
                c.status_heading,
                c.close_poll,
                c.reopen_poll,
                c.closed_done,
                c.reopened_done,
                c.expiry_heading,
                c.expiry_label,
                c.expiry_submit,
                c.versions_heading,
                c.versions_intro,
                c.version_exists,
                c.version_missing,
                c.version_title,
                c.version_save,
                c.version_remove,
                c.delete_heading,
                c.delete_text,
                c.delete_button,
                c.delete_confirm_title,
                c.delete_confirm_text,
                c.delete_confirm_button,
                c.delete_cancel,
                c.deleted_title,
                c.deleted_text,
                c.not_found_title,
                c.not_found_text,
                c.page_not_found_title,
                c.page_not_found_text,
                c.bad_form,
                c.too_large,
                c.media_poll_legend,
                c.media_question_legend,
                c.media_file,
                c.media_alt,
                c.media_alt_hint,
                c.media_drop,
                c.media_open,
                c.err_media_type,
                c.err_media_corrupt,
                c.err_media_codec,
                c.err_media_empty,
                c.err_media_busy,
                c.err_media_full,
                c.err_media_quota,
                c.err_media_lost,
                c.err_alt_required,
                c.media_heading,
                c.media_intro,
                c.media_slot,
                c.media_slot_poll,
                c.media_attach,
                c.media_attached,
                c.media_removed,
                c.media_none,
                c.media_remove,
                c.cross_site,
                c.method_not_allowed,
                c.error_title,
                c.error_text,
                c.back_home,
                c.privacy_title,
                c.privacy_intro,
                c.privacy_table_caption,
                c.privacy_col_what,
                c.privacy_col_where,
                c.privacy_col_until,
                c.privacy_never_heading,
                c.privacy_browser_heading,
                c.privacy_browser,
                c.required_mark,
                c.rank_hint,
                c.no_answer,
                c.rank_none,
                c.rank_up,
                c.rank_down,
                c.field_type,
                c.field_required,
                c.field_min_choices,
                c.field_max_choices,
                c.field_choices_hint,
                c.field_scale_min,
                c.field_scale_max,
                c.field_scale_min_named,
                c.field_scale_max_named,
                c.field_min_label,
                c.field_max_label,
                c.err_not_for_type,
                c.invite_label,
                c.invite_hint,
                c.invite_hint_link,
                c.err_invite_missing,
                c.err_invite_refused,
                c.err_invite_not_a_code,
                c.err_invites_sent,
                c.err_invites_expired,
                c.field_duplicate,
                c.duplicate_invite,
                c.duplicate_invite_hint,
                c.duplicate_none,
                c.duplicate_none_hint,
                c.invites_heading,
                c.invites_intro,
                c.invites_not_in_use,
                c.invites_count_label,
                c.invites_count_hint,
                c.invites_issue,
                c.invites_issue_csv,
                c.invites_sheet_title,
                c.invites_once,
                c.invites_print_hint,
                c.print_button,
                c.invite_card_text,
                c.invite_card_text_open,
                c.invite_card_code,
                c.invite_card_link,
                c.invite_qr,
                c.invites_back,
                c.invite_field_missing,
                c.invite_field_refused,
                c.invite_field_not_a_code,
                c.first_choices,
                c.ranking_heading,
                c.ranking_none,
                c.col_place,
                c.pairwise_heading,
                c.pairwise_hint,
                c.col_value,
                c.scale_mean,
                c.scale_median,
                c.colon,
                c.tagline,
                c.problems_heading,
                c.media_kept,
                c.media_replace,
                c.leading,
                c.share_qr,
                c.results_live,
                c.vote_changes_label,
                c.vote_changes_hint,
                c.receipt_heading,
                c.receipt_text,
                c.receipt_kept,
                c.receipt_label,
                c.receipt_link,
                c.receipt_open,
                c.receipt_remembered,
                c.receipt_forget,
                c.own_ballot_title,
                c.own_ballot_prompt,
                c.own_ballot_show,
                c.own_ballot_intro,
                c.own_ballot_change,
                c.own_ballot_withdraw,
                c.own_ballot_withdraw_hint,
                c.own_ballot_changed,
                c.own_ballot_withdrawn_title,
                c.own_ballot_withdrawn_text,
                c.err_receipt_not_a_receipt,
                c.err_receipt_unknown,
                c.err_receipt_changes_off,
                c.err_receipt_closed,
                c.keep_admin_label,
                c.keep_admin_hint,
                c.opens_new_tab,
                c.my_polls_heading,
                c.my_polls_hint,
                c.my_polls_forget,
                c.answer_again,
                c.receipt_have,
                c.invites_sent_title,
                c.created_share_hint_invite,
                c.created_next_invites,
                c.created_save_first,
                c.vote_not_sent,
                c.vote_err_repeated_rank,
                c.vote_err_rank_gap,
                c.vote_err_unanswered,
                c.vote_err_no_such_option,
                c.withheld_vote,
                c.withheld_open_poll,
                c.own_ballot_withdraw_code,
                c.err_questions_none,
                c.pairwise_hint_cards,
                c.create_another,
                c.create_another_hint,
                c.voter_results_link,
                c.voter_results_hint,
                c.edit_heading,
                c.edit_intro_open,
                c.edit_intro_locked,
                c.edit_shown,
                c.edit_versions_note,
                c.edit_save,
                c.edit_saved,
                c.edit_saved_versions_dropped,
                c.err_fixed_by_responses,
                c.err_poll_changed,
                c.admin_done_again,
                c.invites_shown_done,
            ]
            .map(str::to_owned),
        );
        v.extend([
            (c.err_questions_count)(2, 20),
            (c.choose_between)(1, 4, 4),
            (c.choose_between)(2, 2, 4),
            (c.choose_between)(1, 2, 4),
            (c.choose_between)(2, 3, 4),
            (c.rank_of)("x"),
            (c.rank_now)("x", "2"),
            (c.rank_now_none)("x"),
            (c.scale_hint)(1, 5),
            (c.err_range)(1, 10),
            (c.err_choice_count)(2, 2, 2),
            (c.err_choice_count)(2, 1, 3),
            (c.err_repeated_rank)(2),
            (c.err_rank_gap)(2),
            (c.err_off_scale)(2, 1, 5),
            (c.err_unanswered)(2),
            (c.err_no_such_option)(2),
            (c.place)(1),
            (c.place)(2),
            (c.place)(3),
            (c.place)(11),
            (c.place_shared)("x"),
            (c.remove_option)(3),
            (c.receipt_open_nth)(2, "AB12"),
            (c.vote_err_choice_count)(1, 1),
            (c.vote_err_choice_count)(2, 2),
            (c.vote_err_choice_count)(1, 3),
            (c.vote_max_reached)(2),
            (c.vote_err_off_scale)(1, 5),
            (c.err_questions_many)(20),
            (c.err_scale_to_above)(5),
            (c.err_range)(3, 3),
            (c.edited_on)("x"),
        ]);
        v.extend(c.type_names.iter().map(|s| s.to_string()));
        v.extend(c.weekdays.iter().map(|s| s.to_string()));
        v.extend([
            c.avail_yes.to_owned(),
            c.avail_if_need_be.to_owned(),
            c.avail_no.to_owned(),
            c.schedule_hint.to_owned(),
            (c.times_in)("Europe/Paris"),
            c.all_day.to_owned(),
            (c.slot_day)("x", "y"),
            c.best_slot.to_owned(),
            c.slots_best_first.to_owned(),
            c.err_not_a_slot.to_owned(),
            (c.err_slot_order)("x"),
            c.err_time_zone.to_owned(),
            c.err_times.to_owned(),
            (c.err_slots_count)(1, 12),
            c.field_slots.to_owned(),
            c.field_slots_hint.to_owned(),
            (c.field_slot_day)(2),
            (c.field_slot_time)(2),
            c.field_times.to_owned(),
            c.field_times_hint.to_owned(),
            c.field_time_zone.to_owned(),
            c.field_time_zone_hint.to_owned(),
            c.add_slot.to_owned(),
        ]);
        v.extend(c.media_kind_names.iter().map(|s| s.to_string()));
        let (a, b, d) = (c.privacy_throttle_row)(10);
        v.extend([a, b, d]);
        v.extend(c.lang_names.iter().map(|s| s.to_string()));
        v.extend(c.privacy_never.iter().map(|s| s.to_string()));
        v.push(c.create_sent_title.to_owned());
        // The day rule, by the number this server takes (0: no such rule).
        for n in [0, 1, 3, 1_000] {
            v.extend([(c.duplicate_network)(n), (c.duplicate_network_hint)(n), (c.err_voted_from_network)(n)]);
            let (a, b, d) = (c.privacy_network_day_row)(n);
            v.extend([a, b, d]);
        }
        v.extend(c.create_sent_text.iter().map(|s| s.to_string()));
        for (a, b, d) in c.privacy_rows {
            v.extend([a.to_string(), b.to_string(), d.to_string()]);
        }
        v
    }

    #[test]
    fn no_message_is_blank() {
        for lang in Lang::ALL {
            for text in all_texts(catalogue(lang)) {
                assert!(!text.trim().is_empty(), "{lang:?} has a blank message");
            }
        }
    }

    #[test]
    fn translations_differ_from_english() {
        // A copied English text in another catalogue is a forgotten translation.
        let en = catalogue(Lang::En);
        for lang in [Lang::Fr, Lang::De, Lang::It] {
            let c = catalogue(lang);
            for (a, b) in [
                (en.create_title, c.create_title),
                (en.vote_submit, c.vote_submit),
                (en.created_warning, c.created_warning),
                (en.privacy_intro, c.privacy_intro),
                (en.delete_confirm_text, c.delete_confirm_text),
                (en.err_bad_token, c.err_bad_token),
                (en.results_after_vote, c.results_after_vote),
                (en.field_closes_on_hint, c.field_closes_on_hint),
                (en.withheld_after_close, c.withheld_after_close),
                (en.invites_once, c.invites_once),
                (en.invite_card_text, c.invite_card_text),
                (en.create_sent_title, c.create_sent_title),
                (en.create_sent_text[2], c.create_sent_text[2]),
            ] {
                assert_ne!(a, b, "{lang:?}");
            }
            for n in [0, 1, 3] {
                assert_ne!((en.duplicate_network_hint)(n), (c.duplicate_network_hint)(n), "{lang:?}");
            }
        }
    }

    #[test]
    fn french_uses_narrow_no_break_spaces() {
        // Before each of `: ; ? ! % »` and after `«`: a narrow no-break space,
        // never a plain space, a full no-break space or nothing.
        for text in all_texts(catalogue(Lang::Fr)) {
            let chars: Vec<char> = text.chars().collect();
            for (i, &ch) in chars.iter().enumerate() {
                if matches!(ch, '?' | '!' | ';' | ':' | '%' | '»') {
                    let before = i.checked_sub(1).map(|j| chars[j]);
                    assert_eq!(before, Some(NNBSP), "French spacing before {ch:?} in {text:?}");
                }
                if ch == '«' {
                    assert_eq!(chars.get(i + 1), Some(&NNBSP), "French spacing after « in {text:?}");
                }
            }
        }
    }

    /// The words of a text, split at anything that is not a letter or digit.
    fn words(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
    }

    #[test]
    fn italian_speaks_to_the_reader_informally_throughout() {
        // The formal "Lei" register must not come back beside the informal
        // "tu" of the rest of the interface: no polite pronoun or possessive,
        // no capitalised enclitic ("mostrarLe", "ricordarLe"), no polite
        // imperative (which, unlike most, cannot be read as a "tu" form).
        let polite_words = ["Lei", "lei", "Suo", "Sua", "Suoi", "Sue"];
        let polite_imperatives =
            ["scelga", "inserisca", "risponda", "apra", "aggiunga", "descriva", "rimuova", "chiuda", "ricarichi"];
        for text in all_texts(catalogue(Lang::It)) {
            for w in words(&text) {
                assert!(!polite_words.contains(&w), "polite {w:?} in Italian {text:?}");
                let lower = w.to_lowercase();
                assert!(!polite_imperatives.contains(&lower.as_str()), "polite imperative {w:?} in Italian {text:?}");
                let enclitic = ["Le", "La", "Lo", "Gli"]
                    .iter()
                    .any(|e| w.strip_suffix(e).is_some_and(|stem| stem.chars().last().is_some_and(char::is_lowercase)));
                assert!(!enclitic, "polite enclitic {w:?} in Italian {text:?}");
            }
        }
    }

    #[test]
    fn german_says_audio_optional_and_loeschdatum() {
        for text in all_texts(catalogue(Lang::De)) {
            for w in words(&text) {
                for banned in ["Ton", "Töne", "Tönen", "freiwillig", "freiwillige", "Bildunterschrift", "Löschtag"] {
                    assert_ne!(w, banned, "German {text:?}");
                }
            }
        }
        let de = catalogue(Lang::De);
        assert_eq!(de.expiry_heading, "Löschdatum");
        assert_eq!(de.media_slot_poll, "Ganze Umfrage");
        assert_eq!(de.media_kind_names[1], "Audio");
    }

    #[test]
    fn fingerprints_are_keyed_not_encrypted() {
        // The fingerprints are keyed hashes (HMAC): nothing is encrypted, and
        // no text may say so.
        for lang in Lang::ALL {
            for text in all_texts(catalogue(lang)) {
                let lower = text.to_lowercase();
                for wrong in ["chiffré", "chiffrement", "cifrat", "verschlüssel", "encrypt"] {
                    assert!(!lower.contains(wrong), "{lang:?} calls a keyed hash encryption: {text:?}");
                }
            }
        }
    }

    #[test]
    fn reviewed_wordings_stay() {
        // What native readers asked for.
        let en = catalogue(Lang::En);
        for text in all_texts(en) {
            assert!(!text.contains("not even we"), "{text:?}");
            assert!(!text.contains("Everyone who has the link"), "{text:?}");
        }
        assert_eq!(en.results_public, "Anyone with the link");
        assert!(en.results_after_close.starts_with("Anyone with the link"));
        assert_eq!((en.erased_on)("1 May 2026"), "Will be erased on 1 May 2026");
        let fr = catalogue(Lang::Fr);
        assert_eq!((fr.erased_on)("1er mai 2026"), "Sera effacé le 1er mai 2026");
        assert_eq!((fr.col_votes, fr.col_share), ("Votes", "Pourcentage"));
        for text in all_texts(fr) {
            assert!(!words(&text).any(|w| w == "Voix" || w == "voix"), "{text:?}");
        }
        assert_eq!(catalogue(Lang::It).col_share, "Percentuale");
    }

    /// The day rule is said in the server's number, with each language's
    /// plural, and not at all where it is off (0).
    #[test]
    fn the_day_rule_says_the_servers_number() {
        let day_words = ["a day", "par jour", "am Tag", "und Tag", "al giorno"];
        for lang in Lang::ALL {
            let c = catalogue(lang);
            let off = [(c.duplicate_network)(0), (c.duplicate_network_hint)(0)];
            for text in &off {
                assert!(!day_words.iter().any(|w| text.contains(w)), "{lang:?} claims a day rule when off: {text}");
            }
            for text in [(c.duplicate_network)(3), (c.duplicate_network_hint)(3), (c.err_voted_from_network)(3)] {
                assert!(text.contains('3'), "{lang:?}: {text}");
            }
            assert!((c.privacy_network_day_row)(3).0.contains('3'), "{lang:?}");
            assert!(!(c.duplicate_network)(1).contains('1'), "{lang:?}: one is a word");
        }
        let en = catalogue(Lang::En);
        assert_eq!((en.duplicate_network)(3), "3 responses per network a day (the usual choice)");
        assert_eq!((en.duplicate_network)(1), "One response per network a day (the usual choice)");
        assert!((en.err_voted_from_network)(3).starts_with("3 responses to this poll from your network were"));
        assert!((en.duplicate_network)(1_000).starts_with("1,000 responses"));
        assert_eq!((catalogue(Lang::Fr).duplicate_network)(2), "2 réponses par réseau et par jour (le choix habituel)");
        assert_eq!((catalogue(Lang::De).duplicate_network)(2), "2 Antworten pro Netz und Tag (die übliche Wahl)");
        assert_eq!((catalogue(Lang::It).duplicate_network)(2), "2 risposte per rete al giorno (la scelta abituale)");
        assert!((catalogue(Lang::Fr).duplicate_network)(1_000).starts_with("1\u{202F}000 réponses"));
    }

    #[test]
    fn dates_and_percentages_follow_each_language() {
        assert_eq!(catalogue(Lang::En).day("2025-03-01"), "1 March 2025");
        assert_eq!(catalogue(Lang::Fr).day("2025-03-01"), "1er mars 2025");
        assert_eq!(catalogue(Lang::De).day("2025-03-01"), "1. März 2025");
        assert_eq!(catalogue(Lang::It).day("2025-03-01"), "1º marzo 2025");
        assert_eq!(catalogue(Lang::It).day("2025-03-02"), "2 marzo 2025");
        assert_eq!(catalogue(Lang::En).day("garbage"), "garbage");
        assert_eq!((catalogue(Lang::En).percent)(33.3, 1), "33.3%");
        assert_eq!((catalogue(Lang::Fr).percent)(33.3, 1), "33,3\u{202F}%");
        assert_eq!((catalogue(Lang::De).percent)(100.0, 1), "100,0\u{A0}%");
        assert_eq!((catalogue(Lang::It).percent)(5.0, 0), "5%");
        assert_eq!((catalogue(Lang::Fr).percent)(67.0, 0), "67\u{202F}%");
    }
}
