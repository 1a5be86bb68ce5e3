//! Question types (issue 14) through the JSON API: creation of each type
//! with its defaults filled in, every refusal with its field path and
//! message, language versions of a scale, and the results of each type
//! after votes cast on the share page (the only way to vote).

use serde_json::{Value, json};

use crate::common::*;
use crate::errors;

/// A creation body with these questions (public results, so anyone reads them).
pub(crate) fn poll_with(questions: Value) -> Value {
    with(with(valid_poll_json(), "/questions", questions), "/resultsPublic", json!(true))
}

pub(crate) fn create(server: &Server, questions: Value) -> Created {
    server.create_poll(&poll_with(questions))
}

/// `(field, message)` pairs a 422 is expected to list.
pub(crate) type Expected = Vec<(&'static str, &'static str)>;

pub(crate) fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(f, m)| ((*f).to_owned(), (*m).to_owned())).collect()
}

/// One field of the share form.
pub(crate) fn field(name: impl Into<String>, value: impl ToString) -> (String, String) {
    (name.into(), value.to_string())
}

pub(crate) fn vote(server: &Server, poll: &Created, fields: &[(String, String)]) {
    let xff = Server::fresh_client_ip();
    server.vote_fields(&poll.id, fields, &xff).unwrap_or_else(|e| panic!("vote {fields:?} refused: {e}"));
}

#[test]
fn every_type_is_created_with_its_defaults_filled_in() {
    let server = Server::start();
    let poll = create(
        &server,
        json!([
            {"label": "Lunch?", "options": ["Pizza", "Sushi"]},
            {"type": "multiple", "label": "Toppings", "options": ["Cheese", "Olives", "Basil"], "required": true},
            {"type": "multiple", "label": "Two or three", "options": ["A", "B", "C", "D"], "minChoices": 2, "maxChoices": 3},
            {"type": "ranked", "label": "Rank the days", "options": ["Mon", "Tue", "Wed"]},
            {"type": "scale", "label": "How hungry?", "scaleMin": 0, "scaleMax": 10, "minLabel": " Not at all ", "maxLabel": "Starving"},
            {"type": "scale", "label": "Stars", "scaleMin": 1, "scaleMax": 5, "required": false},
        ]),
    );
    let expected = json!([
        {"type": "single", "label": "Lunch?", "options": ["Pizza", "Sushi"], "required": false},
        {"type": "multiple", "label": "Toppings", "options": ["Cheese", "Olives", "Basil"], "required": true, "minChoices": 1, "maxChoices": 3},
        {"type": "multiple", "label": "Two or three", "options": ["A", "B", "C", "D"], "required": false, "minChoices": 2, "maxChoices": 3},
        {"type": "ranked", "label": "Rank the days", "options": ["Mon", "Tue", "Wed"], "required": false},
        {"type": "scale", "label": "How hungry?", "required": false, "scaleMin": 0, "scaleMax": 10, "minLabel": "Not at all", "maxLabel": "Starving"},
        {"type": "scale", "label": "Stars", "required": false, "scaleMin": 1, "scaleMax": 5},
    ]);
    assert_eq!(poll.body["poll"]["questions"], expected);
    let read = server.get(&poll.path());
    read.assert_status(200);
    assert_eq!(read.json()["questions"], expected);
}

#[test]
fn choice_and_scale_bounds_are_accepted_at_their_limits() {
    let server = Server::start();
    let twelve: Vec<String> = (0..12).map(|i| format!("Option {i}")).collect();
    let poll = create(
        &server,
        json!([
            {"type": "multiple", "label": "All", "options": twelve, "minChoices": 12, "maxChoices": 12},
            {"type": "multiple", "label": "One", "options": ["A", "B"], "minChoices": 1, "maxChoices": 1},
            {"type": "scale", "label": "Top", "scaleMin": 9, "scaleMax": 10, "minLabel": "e".repeat(100)},
            {"type": "scale", "label": "Bottom", "scaleMin": 0, "scaleMax": 1},
        ]),
    );
    let q = &poll.body["poll"]["questions"];
    assert_eq!((q[0]["minChoices"].as_u64(), q[0]["maxChoices"].as_u64()), (Some(12), Some(12)));
    assert_eq!((q[1]["minChoices"].as_u64(), q[1]["maxChoices"].as_u64()), (Some(1), Some(1)));
    assert_eq!((q[2]["scaleMin"].as_u64(), q[2]["scaleMax"].as_u64()), (Some(9), Some(10)));
    assert_eq!(q[2]["minLabel"].as_str().map(str::len), Some(100));
    assert_eq!((q[3]["scaleMin"].as_u64(), q[3]["scaleMax"].as_u64()), (Some(0), Some(1)));
}

/// Each refused question, alone in a body, with exactly the errors it gets.
#[test]
fn every_refusal_names_its_field_and_says_why() {
    let server = Server::start();
    let long = "x".repeat(101);
    let cases: Vec<(Value, Expected)> = vec![
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B"], "minChoices": 3}),
            vec![("questions[0].minChoices", "must be a whole number from 1 to 2")],
        ),
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B", "C"], "minChoices": 0}),
            vec![("questions[0].minChoices", "must be a whole number from 1 to 3")],
        ),
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B", "C"], "minChoices": 2, "maxChoices": 1}),
            vec![("questions[0].maxChoices", "must be a whole number from 2 to 3")],
        ),
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B", "C"], "maxChoices": 4}),
            vec![("questions[0].maxChoices", "must be a whole number from 1 to 3")],
        ),
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B", "C"], "minChoices": "2"}),
            vec![("questions[0].minChoices", "must be a whole number from 1 to 3")],
        ),
        (
            json!({"type": "multiple", "label": "Q", "options": ["A", "B"], "maxChoices": 1.5}),
            vec![("questions[0].maxChoices", "must be a whole number from 1 to 2")],
        ),
        (json!({"type": "multiple", "label": "Q"}), vec![("questions[0].options", "is required")]),
        (
            json!({"type": "ranked", "label": "Q", "options": ["A"]}),
            vec![("questions[0].options", "must have between 2 and 12 items")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": -1, "scaleMax": 5}),
            vec![("questions[0].scaleMin", "must be a whole number from 0 to 9")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 10, "scaleMax": 10}),
            vec![("questions[0].scaleMin", "must be a whole number from 0 to 9")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 0, "scaleMax": 11}),
            vec![("questions[0].scaleMax", "must be a whole number from 1 to 10")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 5, "scaleMax": 5}),
            vec![("questions[0].scaleMax", "must be a whole number from 6 to 10")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 7, "scaleMax": 3}),
            vec![("questions[0].scaleMax", "must be a whole number from 8 to 10")],
        ),
        (json!({"type": "scale", "label": "Q", "scaleMax": 5}), vec![("questions[0].scaleMin", "is required")]),
        (
            json!({"type": "scale", "label": "Q"}),
            vec![("questions[0].scaleMin", "is required"), ("questions[0].scaleMax", "is required")],
        ),
        (
            json!({"type": "scale", "label": "Q", "options": ["A", "B"], "scaleMin": 1, "scaleMax": 5}),
            vec![("questions[0].options", "is not a field of scale questions")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "minChoices": 1}),
            vec![("questions[0].minChoices", "is not a field of scale questions")],
        ),
        (
            json!({"type": "single", "label": "Q", "options": ["A", "B"], "minChoices": 1}),
            vec![("questions[0].minChoices", "is not a field of single questions")],
        ),
        (
            json!({"label": "Q", "options": ["A", "B"], "maxChoices": 1}),
            vec![("questions[0].maxChoices", "is not a field of single questions")],
        ),
        (
            json!({"type": "ranked", "label": "Q", "options": ["A", "B"], "scaleMin": 0, "minLabel": "low"}),
            vec![
                ("questions[0].scaleMin", "is not a field of ranked questions"),
                ("questions[0].minLabel", "is not a field of ranked questions"),
            ],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "minLabel": long}),
            vec![("questions[0].minLabel", "must be at most 100 characters")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "maxLabel": " \u{200b} "}),
            vec![("questions[0].maxLabel", "must contain a visible character (it has only invisible ones)")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "maxLabel": "a\tb"}),
            vec![("questions[0].maxLabel", "must not contain control characters (such as line breaks or tabs)")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "minLabel": 3}),
            vec![("questions[0].minLabel", "must be a string")],
        ),
        (
            json!({"type": "rank", "label": "Q", "options": ["A", "B"]}),
            vec![("questions[0].type", "must be one of single, multiple, ranked, scale, schedule")],
        ),
        (
            json!({"type": "single", "label": "Q", "options": ["A", "B"], "required": "yes"}),
            vec![("questions[0].required", "must be true or false")],
        ),
    ];
    for (question, expected) in cases {
        let resp = server.post_json("/api/polls", &poll_with(json!([question])));
        assert_eq!(errors(&resp), pairs(&expected), "for {question}");
    }
}

/// Errors of several questions come together, each at its own path.
#[test]
fn errors_of_several_questions_are_listed_together() {
    let server = Server::start();
    let resp = server.post_json(
        "/api/polls",
        &poll_with(json!([
            {"label": "Fine", "options": ["A", "B"]},
            {"type": "multiple", "label": "Q", "options": ["A", "B"], "minChoices": 3},
            {"type": "scale", "label": "Q", "scaleMin": 4, "scaleMax": 2},
        ])),
    );
    assert_eq!(
        errors(&resp),
        pairs(&[
            ("questions[1].minChoices", "must be a whole number from 1 to 2"),
            ("questions[2].scaleMax", "must be a whole number from 5 to 10"),
        ])
    );
}

/// A poll with a single-choice question and a scale with both end labels.
fn scale_poll(server: &Server, labels: bool) -> Created {
    let mut scale = json!({"type": "scale", "label": "How hungry?", "scaleMin": 1, "scaleMax": 5});
    if labels {
        scale["minLabel"] = json!("Not at all");
        scale["maxLabel"] = json!("Starving");
    }
    create(server, json!([{"label": "Lunch?", "options": ["Pizza", "Sushi"]}, scale]))
}

fn french(scale: Value) -> Value {
    json!({"translations": {"fr": {"title": "Déjeuner", "questions": [
        {"label": "Déjeuner ?", "options": ["Pizza", "Sushi"]},
        scale,
    ]}}})
}

#[test]
fn a_language_version_of_a_scale_carries_its_end_labels() {
    let server = Server::start();
    let poll = scale_poll(&server, true);
    let resp = server.patch_json(
        &poll.id,
        &poll.token,
        &french(json!({"label": "Quelle faim ?", "minLabel": "Pas du tout", "maxLabel": "Affamé"})),
    );
    resp.assert_status(200);
    assert_eq!(
        resp.json()["translations"]["fr"]["questions"][1],
        // Like the poll's own scale question, its version has no options.
        json!({"label": "Quelle faim ?", "minLabel": "Pas du tout", "maxLabel": "Affamé"})
    );
    // An empty list of options is a scale's too.
    let resp = server.patch_json(
        &poll.id,
        &poll.token,
        &french(json!({"label": "Faim ?", "options": [], "minLabel": "Non", "maxLabel": "Oui"})),
    );
    resp.assert_status(200);
    assert_eq!(server.get(&poll.path()).json()["translations"]["fr"]["questions"][1]["label"], "Faim ?");
}

#[test]
fn a_language_version_of_a_scale_must_match_its_end_labels() {
    let server = Server::start();
    let labelled = scale_poll(&server, true);
    let bare = scale_poll(&server, false);
    let long = "x".repeat(101);
    let cases: Vec<(&Created, Value, Expected)> = vec![
        (
            &labelled,
            json!({"label": "Quelle faim ?", "minLabel": "Pas du tout"}),
            vec![("translations.fr.questions[1].maxLabel", "is required, like the poll's question")],
        ),
        (
            &labelled,
            json!({"label": "Quelle faim ?"}),
            vec![
                ("translations.fr.questions[1].minLabel", "is required, like the poll's question"),
                ("translations.fr.questions[1].maxLabel", "is required, like the poll's question"),
            ],
        ),
        (
            &bare,
            json!({"label": "Quelle faim ?", "maxLabel": "Affamé"}),
            vec![("translations.fr.questions[1].maxLabel", "must be left out: the poll's question has none")],
        ),
        (
            &labelled,
            json!({"label": "Quelle faim ?", "minLabel": long, "maxLabel": "Affamé"}),
            vec![("translations.fr.questions[1].minLabel", "must be at most 100 characters")],
        ),
        (
            &labelled,
            json!({"label": "Quelle faim ?", "minLabel": " ", "maxLabel": "Affamé"}),
            vec![("translations.fr.questions[1].minLabel", "must not be empty")],
        ),
        (
            &bare,
            json!({"label": "Quelle faim ?", "options": ["Un", "Deux"]}),
            vec![("translations.fr.questions[1].options", "must have exactly 0 options, like the poll's question")],
        ),
        (
            &bare,
            json!({"label": "Quelle faim ?", "options": ["Un"]}),
            vec![("translations.fr.questions[1].options", "must have between 2 and 12 items")],
        ),
    ];
    for (poll, scale, expected) in cases {
        let resp = server.patch_json(&poll.id, &poll.token, &french(scale.clone()));
        assert_eq!(errors(&resp), pairs(&expected), "for {scale}");
    }
    // A choice question's version still needs its options.
    let body = json!({"translations": {"fr": {"title": "Déjeuner", "questions": [
        {"label": "Déjeuner ?"},
        {"label": "Quelle faim ?"},
    ]}}});
    assert_eq!(
        errors(&server.patch_json(&bare.id, &bare.token, &body)),
        pairs(&[("translations.fr.questions[0].options", "must have exactly 2 options, like the poll's question")])
    );
    // Nothing was stored.
    assert_eq!(server.get(&labelled.path()).json()["translations"], json!({}));
}

/// The poll of the results tests: multiple, ranked, two scales, single.
fn mixed_poll(server: &Server, visibility: &str) -> Created {
    let mut body = poll_with(json!([
        {"type": "multiple", "label": "Toppings", "options": ["Cheese", "Olives", "Basil"]},
        {"type": "ranked", "label": "Days", "options": ["Mon", "Tue", "Wed"]},
        {"type": "scale", "label": "Stars", "scaleMin": 1, "scaleMax": 5},
        {"type": "scale", "label": "Small", "scaleMin": 0, "scaleMax": 2},
        {"label": "Drink", "options": ["Water", "Juice"]},
    ]));
    body.as_object_mut().unwrap().remove("resultsPublic");
    body["resultsVisibility"] = json!(visibility);
    server.create_poll(&body)
}

/// Four ballots on [`mixed_poll`], cast on its share page.
fn cast_mixed_ballots(server: &Server, poll: &Created) {
    // Toppings {Cheese, Olives}; days Mon > Tue (Wed unranked); 5 stars; small 1.
    vote(
        server,
        poll,
        &[field("q0", 0), field("q0", 1), field("q1r0", 1), field("q1r1", 2), field("q2", 5), field("q3", 1)],
    );
    // Toppings {Cheese}; days Tue > Mon > Wed; 4 stars; small 1.
    vote(
        server,
        poll,
        &[field("q0", 0), field("q1r1", 1), field("q1r0", 2), field("q1r2", 3), field("q2", 4), field("q3", 1)],
    );
    // Toppings all three; days Wed first (Mon, Tue unranked, an empty rank
    // is no rank); 4 stars; small 2.
    vote(
        server,
        poll,
        &[
            field("q0", 0),
            field("q0", 1),
            field("q0", 2),
            field("q1r2", 1),
            field("q1r0", ""),
            field("q2", 4),
            field("q3", 2),
        ],
    );
    // Only the scale and the single choice.
    vote(server, poll, &[field("q2", 1), field("q4", 0)]);
}

#[test]
fn results_of_every_type_after_votes_on_the_share_page() {
    let server = Server::start();
    let poll = mixed_poll(&server, "public");
    cast_mixed_ballots(&server, &poll);
    let resp = server.get(&poll.results_path());
    resp.assert_status(200);
    let r = resp.json();
    assert_eq!(r["totalResponses"], 4);
    let q = &r["questions"];

    // Multiple: answered counts ballots, options count choices; the
    // percents (of answered) add up to more than 100.
    assert_eq!(
        q[0],
        json!({"label": "Toppings", "type": "multiple", "answered": 3, "options": [
            {"label": "Cheese", "count": 3, "percent": 100.0},
            {"label": "Olives", "count": 2, "percent": 66.7},
            {"label": "Basil", "count": 1, "percent": 33.3},
        ]})
    );
    let sum: f64 = q[0]["options"].as_array().unwrap().iter().map(|o| o["percent"].as_f64().unwrap()).sum();
    assert!(sum > 100.0, "percents of a multiple-choice question sum to {sum}");

    // Ranked: first choices; pairwise[i][j] = ballots ranking i above j
    // (unranked below ranked, tied with each other): Mon and Tue beat each
    // other once, each beats Wed twice, so Schulze ties them on place 1 and
    // Wed comes 3rd.
    assert_eq!(
        q[1],
        json!({"label": "Days", "type": "ranked", "answered": 3,
            "options": [
                {"label": "Mon", "firstChoices": 1, "percent": 33.3},
                {"label": "Tue", "firstChoices": 1, "percent": 33.3},
                {"label": "Wed", "firstChoices": 1, "percent": 33.3},
            ],
            "pairwise": [[0, 1, 2], [1, 0, 2], [1, 1, 0]],
            "ranking": [{"place": 1, "options": ["Mon", "Tue"]}, {"place": 3, "options": ["Wed"]}],
            "method": "schulze"})
    );

    // Scale: every value listed, mean and median of 5, 4, 4, 1.
    assert_eq!(
        q[2],
        json!({"label": "Stars", "type": "scale", "answered": 4,
            "distribution": [
                {"value": 1, "count": 1}, {"value": 2, "count": 0}, {"value": 3, "count": 0},
                {"value": 4, "count": 2}, {"value": 5, "count": 1},
            ],
            "mean": 3.5, "median": 4.0})
    );
    // 1, 1, 2: the mean has two decimals, the median is the middle value.
    assert_eq!(
        q[3],
        json!({"label": "Small", "type": "scale", "answered": 3,
            "distribution": [{"value": 0, "count": 0}, {"value": 1, "count": 2}, {"value": 2, "count": 1}],
            "mean": 1.33, "median": 1.0})
    );
    // Single choice, answered by one ballot of four.
    assert_eq!(
        q[4],
        json!({"label": "Drink", "type": "single", "answered": 1, "options": [
            {"label": "Water", "count": 1, "percent": 100.0},
            {"label": "Juice", "count": 0, "percent": 0.0},
        ]})
    );
}

#[test]
fn results_of_every_type_without_votes() {
    let server = Server::start();
    let poll = mixed_poll(&server, "public");
    let q = server.get(&poll.results_path()).json()["questions"].clone();
    assert_eq!(q[0]["options"][2], json!({"label": "Basil", "count": 0, "percent": 0.0}));
    assert_eq!(q[1]["pairwise"], json!([[0, 0, 0], [0, 0, 0], [0, 0, 0]]));
    assert_eq!(q[1]["ranking"], json!([{"place": 1, "options": ["Mon", "Tue", "Wed"]}]));
    assert_eq!(q[1]["options"][0], json!({"label": "Mon", "firstChoices": 0, "percent": 0.0}));
    assert_eq!(
        (q[2]["mean"].clone(), q[2]["median"].clone(), q[2]["answered"].clone()),
        (json!(null), json!(null), json!(0))
    );
    assert_eq!(q[2]["distribution"].as_array().map(Vec::len), Some(5));
}

/// A ballot cannot break a question's rules through the share form; the
/// results show only what was accepted.
#[test]
fn ballots_that_break_a_types_rules_leave_the_results_unchanged() {
    let server = Server::start();
    let poll = create(
        &server,
        json!([
            {"type": "multiple", "label": "Two", "options": ["A", "B", "C"], "minChoices": 2, "maxChoices": 2},
            {"type": "scale", "label": "Stars", "scaleMin": 1, "scaleMax": 5},
        ]),
    );
    for fields in [
        vec![field("q0", 0)],
        vec![field("q0", 0), field("q0", 1), field("q0", 2)],
        vec![field("q1", 6)],
        vec![field("q1", 0)],
    ] {
        let xff = Server::fresh_client_ip();
        assert!(server.vote_fields(&poll.id, &fields, &xff).is_err(), "{fields:?} was accepted");
    }
    vote(&server, &poll, &[field("q0", 0), field("q0", 2), field("q1", 3)]);
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 1);
    let counts: Vec<u64> =
        r["questions"][0]["options"].as_array().unwrap().iter().map(|o| o["count"].as_u64().unwrap()).collect();
    assert_eq!(counts, [1, 0, 1]);
    assert_eq!(r["questions"][1]["mean"], 3.0);
}

/// Results of every type stay withheld as their visibility says: the
/// admin token reads them, anyone else gets the problem document.
#[test]
fn withheld_results_rules_are_unchanged_for_every_type() {
    let server = Server::start();
    for (visibility, status) in [("private", 401), ("afterVote", 403), ("afterClose", 403)] {
        let poll = mixed_poll(&server, visibility);
        cast_mixed_ballots(&server, &poll);
        assert_problem(&server.get(&poll.results_path()), status);
        let r = server.get_auth(&poll.results_path(), &poll.token);
        r.assert_status(200);
        let r = r.json();
        assert_eq!(r["totalResponses"], 4, "{visibility}");
        assert_eq!(r["questions"][1]["ranking"][1], json!({"place": 3, "options": ["Wed"]}), "{visibility}");
        assert_eq!(r["questions"][2]["mean"], 3.5, "{visibility}");
    }
    // afterClose: public once closed, every type's figures included.
    let poll = mixed_poll(&server, "afterClose");
    cast_mixed_ballots(&server, &poll);
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    let r = server.get(&poll.results_path());
    r.assert_status(200);
    assert_eq!(r.json()["questions"][1]["pairwise"], json!([[0, 1, 2], [1, 0, 2], [1, 1, 0]]));
}
