//! The domain's rules from its types: creation, language versions, changes.

use super::*;

fn poll() -> Value {
    json!({
        "title": "  Lunch?  ",
        "lang": "en",
        "expiryDays": 7,
        "resultsPublic": true,
        "questions": [{"type": "single", "label": "Where", "options": ["Pizza", "Sushi"]}]
    })
}

fn fields(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.path.to_string()).collect()
}

#[test]
fn valid_poll_is_parsed_and_trimmed() {
    let p = NewPoll::from_json(&poll()).unwrap();
    assert_eq!(p.title.as_str(), "Lunch?");
    assert_eq!(p.expiry.get(), 7);
    assert_eq!(p.visibility, ResultsVisibility::Public);
    assert_eq!(p.questions[0].options.len(), 2);
}

#[test]
fn every_invalid_field_is_reported_with_its_path() {
    let mut v = poll();
    v["title"] = json!("");
    v["lang"] = json!("es");
    v["expiryDays"] = json!(8);
    v["resultsPublic"] = json!("yes");
    v["questions"][0]["options"] = json!(["A", " A "]);
    v["extra"] = json!(1);
    let errs = NewPoll::from_json(&v).unwrap_err();
    assert_eq!(fields(&errs), ["extra", "title", "lang", "expiryDays", "resultsPublic", "questions[0].options[1]"]);
}

#[test]
fn bounds_are_enforced_at_their_edges() {
    let mut v = poll();
    v["title"] = json!("x".repeat(200));
    assert!(NewPoll::from_json(&v).is_ok());
    v["title"] = json!("x".repeat(201));
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["title"]);
    v["title"] = json!("a\nb");
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["title"]);

    let mut v = poll();
    let opts: Vec<String> = (0..12).map(|i| format!("o{i}")).collect();
    v["questions"][0]["options"] = json!(opts);
    assert!(NewPoll::from_json(&v).is_ok());
    let opts: Vec<String> = (0..13).map(|i| format!("o{i}")).collect();
    v["questions"][0]["options"] = json!(opts);
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions[0].options"]);

    let mut v = poll();
    let q = v["questions"][0].clone();
    v["questions"] = json!(vec![q.clone(); 20]);
    assert!(NewPoll::from_json(&v).is_ok());
    v["questions"] = json!(vec![q; 21]);
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions"]);
    v["questions"] = json!([]);
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions"]);
}

#[test]
fn non_objects_are_refused() {
    for v in [json!(null), json!([]), json!("x"), json!(3)] {
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), [""]);
    }
    let mut v = poll();
    v["questions"] = json!([1]);
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions[0]"]);
}

#[test]
fn invisible_titles_are_refused_and_so_are_bidi_controls() {
    for blank in ["", " \u{feff}\u{3000}"] {
        assert_eq!(Title::from_text(blank), Err(Problem::Blank), "{blank:?}");
    }
    for invisible in ["\u{200b}", "\u{2060}\u{200b} \u{feff}", " \u{200d}\u{fe0f} ", "\u{3164}", "\u{e0020}\u{2800}"] {
        assert_eq!(Title::from_text(invisible), Err(Problem::Invisible), "{invisible:?}");
    }
    for bidi in ["abc\u{202e}def", "\u{2066}x\u{2069}", "x\u{202a}"] {
        assert_eq!(Title::from_text(bidi), Err(Problem::BidiControl), "{bidi:?}");
    }
    // Invisible characters inside a text carry meaning (emoji variation
    // selectors, joiners, marks in right-to-left text): kept.
    assert_eq!(Title::from_text(" I \u{2764}\u{fe0f} it ").map(|t| t.to_string()), Ok("I \u{2764}\u{fe0f} it".into()));
    assert_eq!(Title::from_text("\u{200f}שלום").map(|t| t.to_string()), Ok("\u{200f}שלום".into()));
}

/// The schema's class of invisible characters is the validator's set:
/// every code point refused as invisible (white space aside: `\s` in the
/// pattern) is in one of its ranges, and nothing visible is.
#[test]
fn the_schema_pattern_names_exactly_the_invisible_characters() {
    let ranges = invisible_ranges();
    for c in (0..=0x10ffff_u32).filter_map(char::from_u32) {
        if u32::from(c) > 0xffff {
            continue;
        }
        let listed = ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&u32::from(c)));
        assert!(!listed || is_invisible(c), "{:04X} is visible", u32::from(c));
        assert!(listed || is_blank(c) || !is_invisible(c), "{:04X} is left out", u32::from(c));
    }
    let pattern = TITLE.schema("")["pattern"].as_str().unwrap_or_default().to_owned();
    // Within the BMP as \uXXXX; nothing beyond it (see TextRule::schema).
    assert!(pattern.chars().all(|c| u32::from(c) <= 0xffff), "{pattern}");
    assert!(pattern.contains("\\u2800") && pattern.contains("\\uFFF0-\\uFFFB"), "{pattern}");
    assert!(!pattern.contains("\\u{"), "{pattern}");
}

#[test]
fn form_texts_of_a_language_version_are_checked_like_json() {
    let texts = |label: &str, options: &[&str]| QuestionTexts {
        label: label.into(),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        ..QuestionTexts::default()
    };
    let qs = vec![texts("Où", &["Ici", " Ici "]), texts("", &[])];
    let errs = LanguageVersion::from_texts(Lang::Fr, "x".repeat(201).as_str(), &qs).unwrap_err();
    assert_eq!(
        fields(&errs),
        ["translations.fr.title", "translations.fr.questions[0].options[1]", "translations.fr.questions[1].label"]
    );
    let ok = vec![texts("Où", &["Ici", "Là"])];
    let v = LanguageVersion::from_texts(Lang::Fr, " Déjeuner ", &ok).unwrap();
    assert_eq!(v.title.as_str(), "Déjeuner");
}

#[test]
fn patch_needs_a_known_key_and_checks_structure() {
    assert!(PollPatch::from_json(&json!({})).is_err());
    assert!(PollPatch::from_json(&json!({"closed": "no"})).is_err());
    assert!(PollPatch::from_json(&json!({"foo": 1})).is_err());
    let p = PollPatch::from_json(&json!({"closed": false, "expiryDays": 30})).unwrap();
    assert_eq!(p.closed, Some(false));
    assert_eq!(p.expiry.map(ExpiryDays::get), Some(30));

    let base = NewPoll::from_json(&poll()).unwrap();
    let today = Day::parse("2026-03-10").unwrap();
    let shape = Shape { lang: Lang::En, questions: &base.questions, expires_on: today.plus_days(7), closes_on: None };
    let ok = json!({"translations": {"fr": {"title": "Déjeuner ?", "questions": [{"label": "Où", "options": ["Pizza", "Sushis"]}]}, "de": null}});
    let p = PollPatch::from_json(&ok).unwrap();
    assert!(p.check_against(&shape, today).is_ok());
    assert_eq!(p.translations.get(&Lang::De), Some(&None));

    let own = json!({"translations": {"en": null}});
    assert!(PollPatch::from_json(&own).unwrap().check_against(&shape, today).is_err());
    let short = json!({"translations": {"it": {"title": "Pranzo", "questions": [{"label": "Dove", "options": ["Pizza", "Sushi", "Kebab"]}]}}});
    let errs = PollPatch::from_json(&short).unwrap().check_against(&shape, today).unwrap_err();
    assert_eq!(fields(&errs), ["translations.it.questions[0].options"]);
    assert!(PollPatch::from_json(&json!({"translations": {"es": null}})).is_err());
    assert!(PollPatch::from_json(&json!({"translations": {}})).is_err());
}

#[test]
fn a_patch_keeps_the_closing_day_between_today_and_expiry() {
    let day = |s: &str| Day::parse(s).unwrap();
    let base = NewPoll::from_json(&poll()).unwrap();
    let today = day("2026-03-10");
    let shape = Shape {
        lang: Lang::En,
        questions: &base.questions,
        expires_on: day("2026-04-09"),
        closes_on: Some(day("2026-03-20")),
    };
    let check = |body: Value| PollPatch::from_json(&body).unwrap().check_against(&shape, today);
    assert!(check(json!({"closesOn": "2026-04-08"})).is_ok());
    assert_eq!(fields(&check(json!({"closesOn": "2026-04-09"})).unwrap_err()), ["closesOn"]);
    assert!(check(json!({"closesOn": null})).is_ok());
    assert_eq!(fields(&check(json!({"closesOn": "2026-03-10"})).unwrap_err()), ["closesOn"]);
    assert_eq!(fields(&check(json!({"closesOn": "2026-04-10"})).unwrap_err()), ["closesOn"]);
    // Seven days from today ends before the closing day on the 20th...
    let errs = check(json!({"expiryDays": 7})).unwrap_err();
    assert_eq!(errs[0].problem, Problem::ExpiresBeforeDeadline { closes_on: day("2026-03-20") });
    // ...unless the same patch moves or removes it.
    assert!(check(json!({"expiryDays": 7, "closesOn": "2026-03-16"})).is_ok());
    assert!(check(json!({"expiryDays": 7, "closesOn": null})).is_ok());
    // A new expiry is checked against a new closing day.
    assert_eq!(fields(&check(json!({"expiryDays": 7, "closesOn": "2026-03-17"})).unwrap_err()), ["closesOn"]);
    // The poll's own day sent back unchanged passes, even once passed.
    let past = Shape { closes_on: Some(day("2026-03-05")), ..shape };
    let patch = PollPatch::from_json(&json!({"closesOn": "2026-03-05", "resultsVisibility": "public"})).unwrap();
    assert!(patch.check_against(&past, today).is_ok());
    let other = PollPatch::from_json(&json!({"closesOn": "2026-03-06"})).unwrap();
    assert!(other.check_against(&past, today).is_err());

    // Reopening a poll past its closing day removes that day.
    let reopen = PollPatch::from_json(&json!({"closed": false})).unwrap();
    assert!(reopen.reopens_past(Some(today), today));
    assert!(!reopen.reopens_past(Some(day("2026-03-11")), today));
    assert!(
        !PollPatch::from_json(&json!({"closed": false, "closesOn": "2026-03-12"}))
            .unwrap()
            .reopens_past(Some(today), today)
    );
}

#[test]
fn settings_default_as_the_specification_had_them() {
    let p = NewPoll::from_json(
        &json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [{"label": "q", "options": ["a", "b"]}]}),
    )
    .unwrap();
    assert_eq!((p.visibility, p.closes_on, p.shuffle_options), (ResultsVisibility::Private, None, false));
    let mut v = poll();
    v["closesOn"] = json!("2026-03-12");
    v["shuffleOptions"] = json!(true);
    v["resultsVisibility"] = json!("afterClose");
    v["resultsPublic"] = json!(false);
    let p = NewPoll::from_json(&v).unwrap();
    assert_eq!(
        (p.visibility, p.closes_on, p.shuffle_options),
        (ResultsVisibility::AfterClose, Day::parse("2026-03-12"), true)
    );
    let today = Day::parse("2026-03-10").unwrap();
    assert!(p.check_on(today).is_ok());
    assert_eq!(fields(&p.check_on(Day::parse("2026-03-12").unwrap()).unwrap_err()), ["closesOn"]);
    v["shuffleOptions"] = json!("yes");
    v["closesOn"] = json!(null);
    assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["closesOn", "shuffleOptions"]);
}
