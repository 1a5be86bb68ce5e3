//! `POST /api/polls` with a JSON body that breaks a rule: 422 with the
//! offending field named, several errors together, the server unharmed.

use serde_json::{Value, json};

use crate::common::*;
use crate::errors;

fn post(server: &Server, body: &Value) -> Response {
    server.post_json("/api/polls", body)
}

#[test]
fn title_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/title")), "title");
}

#[test]
fn title_empty_or_blank() {
    let server = Server::start();
    for t in ["", "   ", "\u{3000}\t "] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_201_chars_rejected() {
    let server = Server::start();
    for t in ["t".repeat(201), "é".repeat(201)] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_control_characters_rejected() {
    let server = Server::start();
    for t in ["bad\u{0}title", "bell\u{7}", "esc\u{1b}[31mred", "two\nlines"] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_wrong_types() {
    let server = Server::start();
    for v in [json!(5), json!(null), json!(true), json!(["x"]), json!({"t": "x"})] {
        let resp = post(&server, &with(valid_poll_json(), "/title", v));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn lang_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/lang")), "lang");
}

#[test]
fn lang_unsupported_values() {
    let server = Server::start();
    for v in [json!("es"), json!("EN"), json!(""), json!("en-GB"), json!(1), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/lang", v));
        assert_422_field(&resp, "lang");
    }
}

#[test]
fn expiry_days_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/expiryDays")), "expiryDays");
}

#[test]
fn expiry_days_invalid_values() {
    let server = Server::start();
    for v in [
        json!(0),
        json!(1),
        json!(8),
        json!(29),
        json!(731),
        json!(-7),
        json!(7.5),
        json!("30"),
        json!(null),
        json!([30]),
        json!(1e20),
    ] {
        let resp = post(&server, &with(valid_poll_json(), "/expiryDays", v.clone()));
        assert_422_field(&resp, "expiryDays");
    }
}

#[test]
fn results_public_wrong_types() {
    let server = Server::start();
    for v in [json!("true"), json!(1), json!([])] {
        let resp = post(&server, &with(valid_poll_json(), "/resultsPublic", v));
        assert_422_field(&resp, "resultsPublic");
    }
}

#[test]
fn questions_missing_or_empty() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/questions")), "questions");
    assert_422_field(&post(&server, &with(valid_poll_json(), "/questions", json!([]))), "questions");
}

#[test]
fn questions_21_rejected() {
    let server = Server::start();
    let resp = post(&server, &with(valid_poll_json(), "/questions", questions(21, 2)));
    assert_422_field(&resp, "questions");
}

#[test]
fn questions_wrong_types() {
    let server = Server::start();
    for v in [json!({"type": "single"}), json!("q"), json!(3), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions", v));
        assert_422_field(&resp, "questions");
    }
}

#[test]
fn question_item_not_an_object() {
    let server = Server::start();
    for v in [json!("just a string"), json!(["a", "b"]), json!(null), json!(7)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1", v));
        assert_422_field_prefix(&resp, "questions[1]");
    }
}

#[test]
fn question_type_invalid() {
    let server = Server::start();
    // `multiple`, `ranked` and `scale` are types since issue 14
    // (tests/api/question_types.rs); their neighbours are not.
    for v in [json!("Multiple"), json!("rank"), json!("SINGLE"), json!(""), json!(1), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/type", v));
        assert_422_field(&resp, "questions[0].type");
    }
}

#[test]
fn question_label_invalid() {
    let server = Server::start();
    for v in [json!(""), json!("  "), json!("l".repeat(501)), json!("ctl\u{1}label"), json!(42), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1/label", v));
        assert_422_field(&resp, "questions[1].label");
    }
    let resp = post(&server, &without(valid_poll_json(), "/questions/1/label"));
    assert_422_field(&resp, "questions[1].label");
}

#[test]
fn options_count_out_of_bounds() {
    let server = Server::start();
    for n in [0usize, 1, 13] {
        let opts: Vec<String> = (0..n).map(|i| format!("opt {i}")).collect();
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", json!(opts)));
        assert_422_field(&resp, "questions[0].options");
    }
}

#[test]
fn options_missing_or_not_array() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/questions/0/options")), "questions[0].options");
    for v in [json!("a,b"), json!({"0": "a", "1": "b"}), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", v));
        assert_422_field(&resp, "questions[0].options");
    }
}

#[test]
fn options_duplicates_rejected() {
    let server = Server::start();
    for opts in [json!(["Same", "Same"]), json!(["Same", " Same "]), json!(["A", "B", "A"])] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1/options", opts));
        assert_422_field_prefix(&resp, "questions[1].options");
    }
}

#[test]
fn option_text_invalid() {
    let server = Server::start();
    for v in [
        json!(""),
        json!("   "),
        json!("o".repeat(201)),
        json!("tab\there"),
        json!("nul\u{0}"),
        json!(5),
        json!(null),
        json!(["nested"]),
    ] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options/1", v));
        assert_422_field(&resp, "questions[0].options[1]");
    }
}

#[test]
fn unknown_fields_rejected() {
    let server = Server::start();
    for (ptr, v) in [
        ("/extra", json!(1)),
        ("/id", json!("AAAAAAAAAAAAAAAA")),
        ("/adminToken", json!("x".repeat(43))),
        ("/status", json!("closed")),
        ("/questions/0/extra", json!(true)),
    ] {
        let resp = post(&server, &with(valid_poll_json(), ptr, v));
        assert_422(&resp);
    }
}

#[test]
fn several_errors_are_reported_together() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("");
    body["lang"] = json!("xx");
    body["questions"][1]["options"] = json!(["only one"]);
    let fields = assert_422(&post(&server, &body));
    for f in ["title", "lang", "questions[1].options"] {
        assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
    }
}

#[test]
fn top_level_not_an_object() {
    let server = Server::start();
    for v in [json!([valid_poll_json()]), json!("poll"), json!(1), json!(null), json!({})] {
        let resp = post(&server, &v);
        assert_422(&resp);
    }
}

#[test]
fn nested_junk_within_parser_limits_is_422() {
    let server = Server::start();
    let junk: Value = serde_json::from_str(&("[".repeat(60) + &"]".repeat(60))).unwrap();
    let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", junk));
    assert_422_field_prefix(&resp, "questions[0].options");
    let junk = json!({"a": {"b": {"c": {"d": [1, {"e": null}]}}}});
    let resp = post(&server, &with(valid_poll_json(), "/title", junk));
    assert_422_field(&resp, "title");
}

#[test]
fn extremely_deep_nesting_is_rejected_and_server_survives() {
    let server = Server::start();
    for body in [
        format!(r#"{{"title":{}1{}}}"#, "[".repeat(100_000), "]".repeat(100_000)),
        "{\"a\":".repeat(40_000) + "1" + &"}".repeat(40_000),
    ] {
        assert!(body.len() < BODY_LIMIT);
        let resp = server.post_bytes("/api/polls", Some("application/json"), body.as_bytes());
        assert!(resp.status == 400 || resp.status == 422, "deep nesting: {}", resp.describe());
        assert_problem(&resp, resp.status);
    }
    server.get("/api").assert_status(200);
    server.create_default();
}

/// Issue 13, item 6: input that means different things to different readers
/// is refused, not guessed at.
#[test]
fn duplicate_keys_invisible_texts_and_bidi_controls_are_refused() {
    let server = Server::start();
    let poll = r#"{"title": "A", "lang": "en", "expiryDays": 7, "title": "B",
                   "questions": [{"label": "Q", "options": ["a", "b"]}]}"#;
    let resp = server.post_bytes("/api/polls", Some("application/json"), poll.as_bytes());
    let problem = assert_problem(&resp, 400);
    assert!(problem["detail"].as_str().unwrap().contains("duplicate key \"title\""), "{problem}");
    let nested = r#"{"title": "A", "lang": "en", "expiryDays": 7,
                     "questions": [{"label": "Q", "options": ["a", "b"], "label": "R"}]}"#;
    assert_problem(&server.post_bytes("/api/polls", Some("application/json"), nested.as_bytes()), 400);
    let created = server.create_default();
    let patch = server
        .request("PATCH", &format!("/api/polls/{}", created.id))
        .bearer(&created.token)
        .header("Content-Type", "application/json")
        .body(br#"{"closed": true, "closed": false}"#.to_vec())
        .send();
    assert_problem(&patch, 400);
    assert_eq!(server.get(&format!("/api/polls/{}", created.id)).json()["status"], "open", "nothing changed");

    for blank in ["\u{200b}", "\u{2060}\u{200b}\u{feff}", " \u{200d} "] {
        assert_422_field(&post(&server, &with(valid_poll_json(), "/title", json!(blank))), "title");
    }
    for (ptr, field) in [
        ("/title", "title"),
        ("/questions/0/label", "questions[0].label"),
        ("/questions/0/options/1", "questions[0].options[1]"),
    ] {
        for bidi in ["abc\u{202e}fed", "\u{2066}x\u{2069}"] {
            let resp = post(&server, &with(valid_poll_json(), ptr, json!(bidi)));
            assert_422_field(&resp, field);
            assert!(resp.text().contains("bidirectional"), "{}", resp.text());
        }
    }
    // Invisible characters inside visible text carry meaning: kept as sent.
    let hearts = server.create_poll(&with(valid_poll_json(), "/title", json!("I \u{2764}\u{fe0f} polls")));
    assert_eq!(server.get(&format!("/api/polls/{}", hearts.id)).json()["title"], "I \u{2764}\u{fe0f} polls");
}

/// Where [`with_a_scale`] holds each kind of user text: (pointer, field).
const TEXTS: [(&str, &str); 4] = [
    ("/title", "title"),
    ("/questions/0/label", "questions[0].label"),
    ("/questions/0/options/0", "questions[0].options[0]"),
    ("/questions/2/minLabel", "questions[2].minLabel"),
];

/// `valid_poll_json()` with a third question, a scale with an end label.
fn with_a_scale() -> Value {
    let mut body = valid_poll_json();
    let scale = json!({"type": "scale", "label": "S", "scaleMin": 1, "scaleMax": 5, "minLabel": "low"});
    body["questions"].as_array_mut().unwrap().push(scale);
    body
}

/// Issue 24, item 7: the audit's invisible titles (a braille blank, tag
/// characters, an interlinear annotation anchor, musical and shorthand
/// format controls, an Egyptian hieroglyph joiner, a null notehead) and the
/// same in every other user text: refused as invisible, where they were
/// taken before. Visible text around them is kept.
#[test]
fn texts_made_only_of_invisible_characters_are_refused() {
    let server = Server::start();
    let audit = [
        "\u{2800}",
        "\u{e0020}",
        "\u{e0001}",
        "\u{fff9}",
        "\u{1d173}",
        "\u{1d159}",
        "\u{1bca0}",
        "\u{13430}",
        "\u{e0001}\u{e0020}\u{e0020} \u{2800}\u{1d173}",
        " \u{200b}\u{ffa0}\u{180e}\u{2064} ",
    ];
    for text in audit {
        for (ptr, field) in TEXTS {
            let resp = post(&server, &with(with_a_scale(), ptr, json!(text)));
            assert_422_field(&resp, field);
            assert!(resp.text().contains("visible character"), "{text:?} at {field}: {}", resp.text());
        }
    }
    let created = server.create_default();
    let resp = server.patch_json(
        &created.id,
        &created.token,
        &json!({"translations": {"fr": with(valid_translation(), "/title", json!("\u{e0020}"))}}),
    );
    assert_422_field(&resp, "translations.fr.title");
    // Among visible characters they stay as sent.
    let tagged =
        server.create_poll(&with(valid_poll_json(), "/title", json!("Flag \u{1f3f4}\u{e0067}\u{e0062}\u{e007f}")));
    assert_eq!(
        server.get(&format!("/api/polls/{}", tagged.id)).json()["title"],
        "Flag \u{1f3f4}\u{e0067}\u{e0062}\u{e007f}"
    );
}

/// Issue 24, item 8 (OpenAPI): the creation answer lists every problem of a
/// body at once, the day rules too: a blank title, a closing day in the past
/// and `resultsPublic` disagreeing with `resultsVisibility` in one body were
/// answered with the first alone (the day rule ran only on a body that
/// parsed).
#[test]
fn the_creation_answer_lists_every_problem_of_a_body() {
    let server = Server::start();
    let mut body = with(valid_poll_json(), "/title", json!(" "));
    body["closesOn"] = json!("2000-01-01");
    body["resultsPublic"] = json!(true);
    body["resultsVisibility"] = json!("afterVote");
    body["expiryDays"] = json!(7);
    let mut fields = assert_422(&post(&server, &body));
    fields.sort();
    assert_eq!(fields, ["closesOn", "resultsPublic", "title"]);
    // A closing day past the expiry beside an unknown field: both.
    let mut body = valid_poll_json();
    body["closesOn"] = json!("2999-01-01");
    body["colour"] = json!("red");
    let mut fields = assert_422(&post(&server, &body));
    fields.sort();
    assert_eq!(fields, ["closesOn", "colour"]);
}

/// Issue 37: U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are line
/// breaks and refused as `\n` is, at the field that holds them: a title, a
/// label, an option, an end label, a language version's option. They were
/// taken before (they are not control characters).
#[test]
fn line_and_paragraph_separators_are_refused_at_their_field() {
    let server = Server::start();
    let message = "must not contain line or paragraph separators (U+2028, U+2029): a text is one line";
    for sep in ['\u{2028}', '\u{2029}'] {
        for (ptr, field) in TEXTS {
            let resp = post(&server, &with(with_a_scale(), ptr, json!(format!("Two{sep}lines"))));
            assert_eq!(errors(&resp), [(field.to_owned(), message.to_owned())], "{sep:?} at {field}");
        }
    }
    let created = server.create_default();
    let version = with(valid_translation(), "/questions/0/options/2", json!("Sa\u{2029}lade"));
    let resp = server.patch_json(&created.id, &created.token, &json!({"translations": {"fr": version}}));
    assert_eq!(errors(&resp), [("translations.fr.questions[0].options[2]".to_owned(), message.to_owned())]);
}

/// Issue 37: options that look the same are refused as duplicates, naming
/// the option they look like: "café" with `é` and with `e` + U+0301 (the
/// same text in NFC), "Pizza" with a Cyrillic Р, "Yes" with a zero-width
/// space inside. At creation and in a language version alike; options
/// that differ only in case are still two options.
#[test]
fn options_that_look_alike_are_refused_naming_the_option() {
    let server = Server::start();
    let field = "questions[0].options[2]".to_owned();
    let duplicate = "duplicates another option of this question (option 1)".to_owned();
    let lookalike = "duplicates another option of this question: it looks the same as option 1, though written with \
                     other characters"
        .to_owned();
    for (first, second, message) in [
        ("Caf\u{e9}", "Cafe\u{301}", &duplicate),
        ("Pizza", "\u{420}izza", &lookalike),
        ("Yes", "Ye\u{200b}s", &lookalike),
    ] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", json!([first, "Sushi", second])));
        assert_eq!(errors(&resp), [(field.clone(), message.clone())], "{first:?} {second:?}");
    }
    let case = server.create_poll(&with(valid_poll_json(), "/questions/0/options", json!(["Yes", "yes", "YES"])));
    assert_eq!(
        server.get(&format!("/api/polls/{}", case.id)).json()["questions"][0]["options"],
        json!(["Yes", "yes", "YES"])
    );

    let created = server.create_default();
    let version = with(valid_translation(), "/questions/0/options", json!(["Pizza", "Sushis", "\u{420}izza"]));
    let resp = server.patch_json(&created.id, &created.token, &json!({"translations": {"fr": version}}));
    assert_eq!(errors(&resp), [("translations.fr.questions[0].options[2]".to_owned(), lookalike)]);
    assert!(server.get(&format!("/api/polls/{}", created.id)).json()["translations"].get("fr").is_none());
}

/// Issue 37: a text is stored in NFC, whatever form it was sent in, so that
/// the API answers one spelling of what a reader sees.
#[test]
fn texts_sent_decomposed_are_stored_in_nfc() {
    let server = Server::start();
    let mut body = with(valid_poll_json(), "/title", json!("Cafe\u{301} ou the\u{301} ?"));
    body["questions"][0]["options"] = json!(["Cre\u{300}me", "Bru\u{302}le\u{301}e"]);
    let created = server.create_poll(&body);
    let poll = server.get(&format!("/api/polls/{}", created.id)).json();
    assert_eq!(poll["title"], "Caf\u{e9} ou th\u{e9} ?");
    assert_eq!(poll["questions"][0]["options"], json!(["Cr\u{e8}me", "Br\u{fb}l\u{e9}e"]));
}

/// Issue 37: a letter with 190 combining marks is refused at its field; a
/// letter may carry 8, which written languages never pass.
#[test]
fn a_letter_may_carry_at_most_eight_combining_marks() {
    let server = Server::start();
    let tower = format!("Z{}algo", "\u{351}".repeat(190));
    let message = "must not stack more than 8 combining marks on one character".to_owned();
    for (ptr, field) in [
        ("/title", "title"),
        ("/questions/0/label", "questions[0].label"),
        ("/questions/0/options/0", "questions[0].options[0]"),
    ] {
        let resp = post(&server, &with(valid_poll_json(), ptr, json!(tower)));
        assert_eq!(errors(&resp), [(field.to_owned(), message.clone())], "{field}");
    }
    let eight = format!("x{}y", "\u{353}".repeat(8));
    let created = server.create_poll(&with(valid_poll_json(), "/title", json!(eight)));
    assert_eq!(server.get(&format!("/api/polls/{}", created.id)).json()["title"], json!(eight));
    let nine = format!("x{}y", "\u{353}".repeat(9));
    assert_eq!(
        errors(&post(&server, &with(valid_poll_json(), "/title", json!(nine)))),
        [("title".to_owned(), message)]
    );
}
