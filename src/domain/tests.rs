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

/// The problems of a creation body, as `path: problem` lines.
fn problems(v: &Value) -> Vec<(String, Problem)> {
    NewPoll::from_json(v).unwrap_err().into_iter().map(|e| (e.path.to_string(), e.problem)).collect()
}

/// U+2028 and U+2029 are line breaks, refused as `\n` is: in a title, a
/// label, an option, an end label and a language version's texts alike,
/// at the ends of a text too (where trimming would have hidden them).
#[test]
fn line_and_paragraph_separators_are_refused_in_every_text() {
    for sep in ['\u{2028}', '\u{2029}'] {
        for text in [format!("Lunch{sep}today"), format!("Lunch{sep}"), format!("{sep}")] {
            assert_eq!(Title::from_text(&text), Err(Problem::LineSeparator), "{text:?}");
            assert_eq!(Label::parse(&json!(text)), Err(Problem::LineSeparator), "{text:?}");
            assert_eq!(OptionText::parse(&json!(text)), Err(Problem::LineSeparator), "{text:?}");
            assert_eq!(EndLabel::from_text(&text), Err(Problem::LineSeparator), "{text:?}");
        }
        let text = format!("Pi{sep}zza");
        for ptr in ["/title", "/questions/0/label", "/questions/0/options/1"] {
            let mut v = poll();
            *v.pointer_mut(ptr).unwrap() = json!(text);
            let field = ptr.trim_start_matches('/').replace("/0/", "[0].").replace("/1", "[1]");
            assert_eq!(problems(&v), [(field, Problem::LineSeparator)], "{ptr}");
        }
        let version = json!({"title": "Déjeuner", "questions": [{"label": "Où", "options": ["Pizza", text]}]});
        let errs = LanguageVersion::from_json(&version, Lang::Fr).unwrap_err();
        assert_eq!(fields(&errs), ["translations.fr.questions[0].options[1]"]);
        let form = QuestionTexts {
            label: format!("O{sep}ù"),
            options: vec!["Pizza".into(), "Sushis".into()],
            ..QuestionTexts::default()
        };
        let errs = LanguageVersion::from_texts(Lang::Fr, "Déjeuner", &[form]).unwrap_err();
        assert_eq!(errs[0].problem, Problem::LineSeparator);
        assert_eq!(fields(&errs), ["translations.fr.questions[0].label"]);
    }
}

/// A text is stored in NFC, whichever form it was sent in: "café" typed as
/// `e` and a combining acute is stored with the one character `é`.
#[test]
fn texts_are_stored_in_nfc() {
    use unicode_normalization::is_nfc;
    let nfd = "Cafe\u{301} au lait";
    assert_eq!(Title::from_text(nfd).map(|t| t.to_string()), Ok("Caf\u{e9} au lait".into()));
    let mut v = poll();
    v["title"] = json!(format!(" {nfd} "));
    v["questions"][0]["label"] = json!("Pre\u{301}fe\u{301}rence ?");
    v["questions"][0]["options"] = json!(["Cre\u{300}me bru\u{302}le\u{301}e", "A\u{30a}ngstro\u{308}m"]);
    let p = NewPoll::from_json(&v).unwrap();
    assert_eq!(p.title.as_str(), "Caf\u{e9} au lait");
    assert_eq!(p.questions[0].label.as_str(), "Pr\u{e9}f\u{e9}rence ?");
    assert_eq!(p.questions[0].options[0].as_str(), "Cr\u{e8}me br\u{fb}l\u{e9}e");
    assert_eq!(p.questions[0].options[1].as_str(), "\u{c5}ngstr\u{f6}m");
    for text in [p.title.as_str(), p.questions[0].label.as_str()]
        .into_iter()
        .chain(p.questions[0].options.iter().map(OptionText::as_str))
    {
        assert!(is_nfc(text), "{text:?}");
    }
    // The bound holds for the text as stored as well as sent: U+0958 is
    // U+0915 U+093C in NFC (a composition exclusion), so 200 of them are 400.
    assert_eq!(Title::from_text(&"\u{958}".repeat(100)).map(|t| t.as_str().chars().count()), Ok(200));
    assert_eq!(Title::from_text(&"\u{958}".repeat(101)), Err(Problem::TooLong { max: 200 }));
}

/// Options equal in NFC are duplicates: "café" with `é` and with `e` and a
/// combining acute read the same and are the same text once stored.
#[test]
fn options_equal_in_nfc_are_duplicates() {
    let mut v = poll();
    v["questions"][0]["options"] = json!(["Caf\u{e9}", "Tea", "Cafe\u{301}"]);
    assert_eq!(problems(&v), [("questions[0].options[2]".into(), Problem::DuplicateOption { option: 0 })]);
    assert_eq!(
        Problem::DuplicateOption { option: 0 }.to_string(),
        "duplicates another option of this question (option 1)"
    );
}

/// Options that look the same are refused, naming the option they look
/// like: a Cyrillic Р for a Latin P, a zero-width space inside a word (a
/// text the invisible rule lets through, since it shows something), a
/// variation selector, a no-break space for a space. Case still tells
/// options apart, as before.
#[test]
fn options_that_look_alike_are_refused() {
    // The zero-width space alone does not make an option invalid.
    assert_eq!(OptionText::parse(&json!("Ye\u{200b}s")).map(|o| o.to_string()), Ok("Ye\u{200b}s".into()));
    for (first, second) in [
        ("Pizza", "\u{420}izza"),
        ("Yes", "Ye\u{200b}s"),
        ("Yes", "Yes\u{fe0f}"),
        ("Hot dog", "Hot\u{a0}dog"),
        ("Paypal", "\u{420}\u{430}yp\u{430}l"),
    ] {
        let mut v = poll();
        v["questions"][0]["options"] = json!([first, "Sushi", second]);
        assert_eq!(
            problems(&v),
            [("questions[0].options[2]".into(), Problem::LookalikeOption { option: 0 })],
            "{first:?} {second:?}"
        );
    }
    assert_eq!(
        Problem::LookalikeOption { option: 0 }.to_string(),
        "duplicates another option of this question: it looks the same as option 1, though written with other characters"
    );
    for ok in
        [["Yes", "yes"], ["Pizza", "pizza"], ["Pizza", "Pasta"], ["Oui", "Non"], ["Si", "S\u{ec}"], ["No", "N\u{f6}"]]
    {
        let mut v = poll();
        v["questions"][0]["options"] = json!(ok);
        assert!(NewPoll::from_json(&v).is_ok(), "{ok:?}");
    }
    // In a language version, sent as JSON (PATCH, pollctl) or typed on the
    // admin page.
    let version = json!({"title": "Pranzo", "questions": [{"label": "Dove", "options": ["Pizza", "\u{420}izza"]}]});
    let errs = LanguageVersion::from_json(&version, Lang::It).unwrap_err();
    assert_eq!(fields(&errs), ["translations.it.questions[0].options[1]"]);
    assert_eq!(errs[0].problem, Problem::LookalikeOption { option: 0 });
    let typed = QuestionTexts {
        label: "Dove".into(),
        options: vec!["S\u{ec}".into(), "Si\u{300}".into(), "Ye\u{200b}s".into(), "Yes".into()],
        ..QuestionTexts::default()
    };
    let errs = LanguageVersion::from_texts(Lang::It, "Pranzo", &[typed]).unwrap_err();
    assert_eq!(
        errs.iter().map(|e| (e.path.to_string(), e.problem.clone())).collect::<Vec<_>>(),
        [
            ("translations.it.questions[0].options[1]".into(), Problem::DuplicateOption { option: 0 }),
            ("translations.it.questions[0].options[3]".into(), Problem::LookalikeOption { option: 2 }),
        ]
    );
}

/// A character carries at most [`MAX_MARKS`] combining marks: the audit's
/// letter with 190 is refused; the marks of written languages and emoji
/// are far fewer and pass.
#[test]
fn combining_marks_on_one_character_are_bounded() {
    let tower = format!("Z{}algo", "\u{351}\u{36b}\u{300}".repeat(190 / 3 + 1));
    assert_eq!(Title::from_text(&tower), Err(Problem::TooManyMarks { max: 8 }));
    let mut v = poll();
    v["questions"][0]["options"][1] = json!(tower);
    assert_eq!(problems(&v), [("questions[0].options[1]".into(), Problem::TooManyMarks { max: 8 })]);
    assert_eq!(
        Problem::TooManyMarks { max: 8 }.to_string(),
        "must not stack more than 8 combining marks on one character"
    );
    // At the bound: eight marks that NFC cannot compose pass, nine do not;
    // a run is counted after NFC has composed what it can.
    let marks = |n: usize| format!("x{}y", "\u{353}".repeat(n));
    assert!(Title::from_text(&marks(MAX_MARKS)).is_ok());
    assert_eq!(Title::from_text(&marks(MAX_MARKS + 1)), Err(Problem::TooManyMarks { max: MAX_MARKS }));
    assert!(Title::from_text(&format!("e\u{301}{}", "\u{353}".repeat(MAX_MARKS))).is_ok());
    // Marks split by characters that show nothing stack on one letter all
    // the same: counted as one run.
    let joined = format!("a{}", format!("{}\u{200d}", "\u{353}".repeat(MAX_MARKS)).repeat(3));
    assert_eq!(Title::from_text(&joined), Err(Problem::TooManyMarks { max: MAX_MARKS }));
    for written in [
        "Ti\u{ea}\u{301}ng Vi\u{ea}\u{323}t",
        "Tie\u{302}\u{301}ng Vie\u{323}\u{302}t",
        "\u{5d1}\u{5bc}\u{5b0}\u{5bc}\u{591}\u{5bd}\u{5e8}\u{5b5}\u{5d0}\u{5e9}\u{5c1}\u{5b4}\u{596}\u{5d9}\u{5ea}",
        "\u{f67}\u{fa8}\u{fb1}\u{f71}\u{f74}\u{f7e}",
        "1\u{fe0f}\u{20e3} \u{1f44d}\u{1f3fd}",
    ] {
        assert!(Title::from_text(written).is_ok(), "{written:?}");
    }
}

/// A PATCH's `title` and `questions` are parsed as on creation, and only a
/// change of texts keeps the structure a poll's responses rest on; the
/// language versions of the same PATCH are checked against its questions.
#[test]
fn a_patch_of_questions_tells_texts_from_structure() {
    let qs = |v: Value| PollPatch::from_json(&json!({"questions": v}));
    let poll = NewPoll::from_json(&json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [
        {"label": "Where", "options": ["Pizza", "Sushi"]},
        {"type": "multiple", "label": "What", "options": ["a", "b", "c"], "maxChoices": 2},
        {"type": "scale", "label": "How", "scaleMin": 1, "scaleMax": 5, "minLabel": "bad"}
    ]}))
    .unwrap();
    let changes = |v: Value| -> Vec<String> {
        qs(v).unwrap().restructures(&poll.questions).iter().map(|e| format!("{}: {}", e.path, e.problem)).collect()
    };
    let texts = json!([
        {"label": " Where? ", "options": ["Pizza!", "Sushis"]},
        {"type": "multiple", "label": "What?", "options": ["A", "B", "C"], "maxChoices": 2},
        {"type": "scale", "label": "How?", "scaleMin": 1, "scaleMax": 5, "minLabel": "poor"}
    ]);
    assert!(changes(texts.clone()).is_empty());
    assert_eq!(qs(texts).unwrap().questions.unwrap()[0].label.as_str(), "Where?");
    let fixed = "cannot change: the poll has responses, so only its texts can (the title, labels, options and scale \
                 end labels)";
    assert_eq!(changes(json!([{"label": "Where", "options": ["Pizza", "Sushi"]}])), [format!("questions: {fixed}")]);
    assert_eq!(
        changes(json!([
            {"label": "Where", "options": ["Pizza", "Sushi", "Salad"], "required": true},
            {"type": "ranked", "label": "What", "options": ["a", "b", "c"]},
            {"type": "scale", "label": "How", "scaleMin": 0, "scaleMax": 5, "maxLabel": "good"}
        ])),
        [
            format!("questions[0].options: {fixed}"),
            format!("questions[0].required: {fixed}"),
            format!("questions[1].type: {fixed}"),
            format!("questions[2].scaleMin: {fixed}"),
            format!("questions[2].minLabel: {fixed}"),
            format!("questions[2].maxLabel: {fixed}"),
        ]
    );
    assert_eq!(
        changes(json!([
            {"label": "Where", "options": ["Pizza", "Sushi"]},
            {"type": "multiple", "label": "What", "options": ["a", "b", "c"]},
            {"type": "scale", "label": "How", "scaleMin": 1, "scaleMax": 5, "minLabel": "bad"}
        ])),
        [format!("questions[1].maxChoices: {fixed}")]
    );
    // A schedule's label is a text; its slots and zone are what its answers mean.
    let when = NewPoll::from_json(&json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [
        {"type": "schedule", "label": "When", "options": ["2027-01-14", "2027-01-15T18:00"], "timeZone": "Europe/Paris"}
    ]}))
    .unwrap();
    let schedule_changes = |v: Value| -> Vec<String> {
        qs(v).unwrap().restructures(&when.questions).iter().map(|e| format!("{}", e.path)).collect()
    };
    let slots = json!(["2027-01-14", "2027-01-15T18:00"]);
    let same = json!([{"type": "schedule", "label": "When?", "options": slots, "timeZone": "Europe/Paris"}]);
    assert!(schedule_changes(same).is_empty());
    let moved = json!([{"type": "schedule", "label": "When", "options": ["2027-01-14", "2027-01-16T18:00"]}]);
    assert_eq!(schedule_changes(moved), ["questions[0].options", "questions[0].timeZone"]);
    // Parsed as on creation: every problem at its path, nothing else kept.
    let errs =
        PollPatch::from_json(&json!({"title": " ", "questions": [{"label": "a", "options": ["x", "x"]}]})).unwrap_err();
    assert_eq!(fields(&errs), ["title", "questions[0].options[1]"]);
    assert_eq!(fields(&qs(json!([])).unwrap_err()), ["questions"]);
    // A language version given with new questions must match them.
    let today = Day::parse("2026-03-10").unwrap();
    let shape = Shape { lang: Lang::En, questions: &poll.questions, expires_on: today.plus_days(7), closes_on: None };
    let one = json!([{"label": "Where", "options": ["Pizza", "Sushi"]}]);
    let fr = |options: Value| json!({"title": "t", "questions": [{"label": "Où", "options": options}]});
    let patch =
        PollPatch::from_json(&json!({"questions": one, "translations": {"fr": fr(json!(["P", "S"]))}})).unwrap();
    assert!(patch.check_against(&shape, today).is_ok());
    let patch = PollPatch::from_json(&json!({"questions": one, "translations": {"fr": fr(json!(["P"]))}}));
    assert!(patch.is_err(), "one option is no list of options");
    let patch =
        PollPatch::from_json(&json!({"questions": one, "translations": {"fr": fr(json!(["P", "S", "X"]))}})).unwrap();
    assert_eq!(fields(&patch.check_against(&shape, today).unwrap_err()), ["translations.fr.questions[0].options"]);
}
