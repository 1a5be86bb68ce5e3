//! Schedule questions ("when can you come?") through the JSON API: slots
//! created and read back in their one spelling with the time zone as the
//! IANA database spells it, every refusal with its field path and message,
//! language versions (which give no slots), votes cast on the share page
//! (`q{i}s{j}` = `yes` | `ifneedbe` | `no`, docs/WEB.md), and the results:
//! yes, if need be and no per slot, the best slots marked and listed first.

use serde_json::{Value, json};

use crate::common::*;
use crate::errors;
use crate::question_types::{Expected, create, field, pairs, poll_with, vote};

/// The slots of [`when_poll`]'s schedule: a whole day, then a time of that
/// day, a time of the next day, and a whole later day.
const SLOTS: [&str; 4] = ["2027-01-14", "2027-01-14T18:30", "2027-01-15T09:00", "2027-01-16"];

/// A poll with a single choice (`q0`) and a schedule of [`SLOTS`] (`q1`)
/// in Europe/Paris, results public.
fn when_poll(server: &Server) -> Created {
    create(
        server,
        json!([
            {"label": "Lunch?", "options": ["Pizza", "Sushi"]},
            {"type": "schedule", "label": "When?", "options": SLOTS, "timeZone": "Europe/Paris"},
        ]),
    )
}

/// The share form's answers for `q1`, one `(slot, value)` per slot given.
fn slots(given: &[(usize, &str)]) -> Vec<(String, String)> {
    given.iter().map(|(j, v)| field(format!("q1s{j}"), v)).collect()
}

/// One slot's results as the API writes them.
fn slot(slot: &str, yes: u64, if_need_be: u64, no: u64, best: bool) -> Value {
    json!({"slot": slot, "yes": yes, "ifNeedBe": if_need_be, "no": no, "best": best})
}

/// The public results of `poll`'s question `i`.
fn results_of(server: &Server, poll: &Created, i: usize) -> Value {
    let resp = server.get(&poll.results_path());
    resp.assert_status(200);
    resp.json()["questions"][i].clone()
}

#[test]
fn a_schedule_is_created_and_read_back_with_its_slots_and_zone() {
    let server = Server::start();
    let twelve: Vec<String> = (1..=12).map(|d| format!("2027-03-{d:02}T{:02}:00", d + 8)).collect();
    let poll = create(
        &server,
        json!([
            {"label": "Lunch?", "options": ["Pizza", "Sushi"]},
            // The zone in lower case.
            {"type": "schedule", "label": "When?", "options": ["2027-01-14", "2027-01-14T00:00", "2027-01-14T18:30", "2027-01-15T09:00"], "timeZone": "europe/paris"},
            {"type": "scale", "label": "Stars", "scaleMin": 1, "scaleMax": 5},
            {"type": "schedule", "label": "Which day?", "options": ["2027-02-01", "2027-02-02"], "required": true},
            {"type": "schedule", "label": "Twelve", "options": twelve, "timeZone": "AMERICA/NEW_YORK"},
            {"type": "schedule", "label": "UTC", "options": ["2027-01-14T23:59", "2027-01-15T00:00"], "timeZone": "UTC"},
        ]),
    );
    let expected = json!([
        {"type": "single", "label": "Lunch?", "options": ["Pizza", "Sushi"], "required": false},
        {"type": "schedule", "label": "When?", "options": ["2027-01-14", "2027-01-14T00:00", "2027-01-14T18:30", "2027-01-15T09:00"], "required": false, "timeZone": "Europe/Paris"},
        {"type": "scale", "label": "Stars", "required": false, "scaleMin": 1, "scaleMax": 5},
        // Without a zone, none is made up.
        {"type": "schedule", "label": "Which day?", "options": ["2027-02-01", "2027-02-02"], "required": true},
        {"type": "schedule", "label": "Twelve", "options": twelve, "required": false, "timeZone": "America/New_York"},
        {"type": "schedule", "label": "UTC", "options": ["2027-01-14T23:59", "2027-01-15T00:00"], "required": false, "timeZone": "UTC"},
    ]);
    assert_eq!(poll.body["poll"]["questions"], expected);
    let read = server.get(&poll.path());
    read.assert_status(200);
    assert_eq!(read.json()["questions"], expected);
    // The results name the zone only where the question has one.
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["questions"][1]["timeZone"], "Europe/Paris");
    assert!(r["questions"][3].get("timeZone").is_none(), "{}", r["questions"][3]);
}

/// Each refused schedule question, alone in a body, with exactly its errors.
#[test]
fn every_schedule_refusal_names_its_field_and_says_why() {
    let server = Server::start();
    const NOT_A_SLOT: &str =
        "must be a day (YYYY-MM-DD) or a day and a time (YYYY-MM-DDTHH:MM, 24-hour clock) that exists";
    const NO_ZONE: &str = "must be a time zone of the IANA database, such as Europe/Paris or America/New_York";
    let q = |options: Value| json!({"type": "schedule", "label": "When?", "options": options});
    let zoned = |zone: Value| json!({"type": "schedule", "label": "When?", "options": ["2027-01-14", "2027-01-15"], "timeZone": zone});
    let thirteen: Vec<String> = (1..=13).map(|d| format!("2027-03-{d:02}")).collect();
    let mut cases: Vec<(Value, Expected)> = Vec::new();
    // Not a day, or not one that exists, or a time off the 24-hour clock.
    for bad in [
        "soon",
        "2027-02-30",
        "2026-02-29",
        "2027-13-01",
        "2027-1-14",
        "14/01/2027",
        "2027-01-14T24:00",
        "2027-01-14T18:60",
        "2027-01-14T6:30",
        "2027-01-14 18:30",
        "2027-01-14t18:30",
        "2027-01-14T18:30:00",
        "2027-01-14T18:30Z",
        "2027-01-14T18:30+01:00",
        "2027-01-14T",
        // One spelling: not padded, as the schema's pattern says.
        " 2027-01-14",
        "2027-01-14T18:30 ",
        "\u{ff12}027-01-14",
    ] {
        cases.push((q(json!(["2027-01-01", bad])), vec![("questions[0].options[1]", NOT_A_SLOT)]));
    }
    cases.extend([
        // One slot is a question ("can you come on the 14th?"); none is not.
        (q(json!([])), vec![("questions[0].options", "must have between 1 and 12 items")]),
        (q(json!(thirteen)), vec![("questions[0].options", "must have between 1 and 12 items")]),
        (zoned(json!("Factory")), vec![("questions[0].timeZone", NO_ZONE)]),
        (zoned(json!(" Europe/Paris")), vec![("questions[0].timeZone", NO_ZONE)]),
        (json!({"type": "schedule", "label": "When?"}), vec![("questions[0].options", "is required")]),
        (q(json!(["2027-01-14", 15])), vec![("questions[0].options[1]", NOT_A_SLOT)]),
        (q(json!("2027-01-14")), vec![("questions[0].options", "must be an array of strings")]),
        (zoned(json!("Europe/Pariss")), vec![("questions[0].timeZone", NO_ZONE)]),
        (zoned(json!("CET+1")), vec![("questions[0].timeZone", NO_ZONE)]),
        (zoned(json!("")), vec![("questions[0].timeZone", NO_ZONE)]),
        (zoned(json!("Europe/".repeat(20))), vec![("questions[0].timeZone", NO_ZONE)]),
        (zoned(json!(1)), vec![("questions[0].timeZone", "must be a string")]),
        (zoned(json!(null)), vec![("questions[0].timeZone", "must be a string")]),
        // The zone is judged beside the slots.
        (
            json!({"type": "schedule", "label": "When?", "options": ["2027-01-14", "soon"], "timeZone": "Mars/Olympus"}),
            vec![("questions[0].timeZone", NO_ZONE), ("questions[0].options[1]", NOT_A_SLOT)],
        ),
        // Only a schedule has a time zone, and a schedule only its own fields.
        (
            json!({"label": "Q", "options": ["A", "B"], "timeZone": "Europe/Paris"}),
            vec![("questions[0].timeZone", "is not a field of single questions")],
        ),
        (
            json!({"type": "scale", "label": "Q", "scaleMin": 1, "scaleMax": 5, "timeZone": "Europe/Paris"}),
            vec![("questions[0].timeZone", "is not a field of scale questions")],
        ),
        (
            json!({"type": "schedule", "label": "Q", "options": ["2027-01-14", "2027-01-15"], "maxChoices": 1, "scaleMin": 0}),
            vec![
                ("questions[0].maxChoices", "is not a field of schedule questions"),
                ("questions[0].scaleMin", "is not a field of schedule questions"),
            ],
        ),
    ]);
    for (question, expected) in cases {
        let resp = server.post_json("/api/polls", &poll_with(json!([question])));
        assert_eq!(errors(&resp), pairs(&expected), "for {question}");
    }
    // Out of order, at the slot that is not after the one before it, named.
    let out_of_order = |j: usize, previous: &str| {
        let message =
            format!("must come after the slot before it ({previous}): slots are listed in time order, each once");
        (format!("questions[0].options[{j}]"), message)
    };
    for (options, expected) in [
        (json!(["2027-01-15", "2027-01-14"]), vec![out_of_order(1, "2027-01-15")]),
        // A whole day comes before the times of that day.
        (json!(["2027-01-14T09:00", "2027-01-14"]), vec![out_of_order(1, "2027-01-14T09:00")]),
        (json!(["2027-01-14T18:30", "2027-01-14T09:00", "2027-01-15"]), vec![out_of_order(1, "2027-01-14T18:30")]),
        // Each once: the same slot again is not after the one before it.
        (json!(["2027-01-14T18:30", "2027-01-14T18:30"]), vec![out_of_order(1, "2027-01-14T18:30")]),
        // Every slot is judged: one out of order and one not a slot.
        (
            json!(["2027-01-15", "2027-01-14", "soon"]),
            vec![out_of_order(1, "2027-01-15"), ("questions[0].options[2]".to_owned(), NOT_A_SLOT.to_owned())],
        ),
    ] {
        let resp = server.post_json("/api/polls", &poll_with(json!([q(options.clone())])));
        assert_eq!(errors(&resp), expected, "for {options}");
    }
    // Errors of a schedule come with those of other questions, each at its path.
    let resp = server.post_json(
        "/api/polls",
        &poll_with(json!([
            {"type": "scale", "label": "Q", "scaleMin": 4, "scaleMax": 2},
            {"type": "schedule", "label": "When?", "options": ["2027-01-14", "2027-02-30"]},
        ])),
    );
    assert_eq!(
        errors(&resp),
        pairs(&[
            ("questions[0].scaleMax", "must be a whole number from 5 to 10"),
            ("questions[1].options[1]", NOT_A_SLOT)
        ])
    );
}

/// A schedule's slots are the same in every language: a version gives none.
#[test]
fn a_language_version_gives_no_slots_for_a_schedule() {
    let server = Server::start();
    let poll = when_poll(&server);
    let french = |schedule: Value| {
        json!({"translations": {"fr": {"title": "Déjeuner", "questions": [
            {"label": "Déjeuner ?", "options": ["Pizza", "Sushi"]},
            schedule,
        ]}}})
    };
    let refused: Vec<Value> = vec![
        json!({"label": "Quand ?", "options": SLOTS}),
        json!({"label": "Quand ?", "options": ["jeudi", "vendredi"]}),
    ];
    for schedule in refused {
        let resp = server.patch_json(&poll.id, &poll.token, &french(schedule.clone()));
        assert_eq!(
            errors(&resp),
            pairs(&[("translations.fr.questions[1].options", "must have exactly 0 options, like the poll's question")]),
            "for {schedule}"
        );
    }
    // A version's question has no time zone of its own.
    let resp =
        server.patch_json(&poll.id, &poll.token, &french(json!({"label": "Quand ?", "timeZone": "Europe/Paris"})));
    assert_422_field(&resp, "translations.fr.questions[1].timeZone");
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}), "nothing stored");

    for schedule in [json!({"label": "Quand ?"}), json!({"label": "Quand ?", "options": []})] {
        let resp = server.patch_json(&poll.id, &poll.token, &french(schedule.clone()));
        resp.assert_status(200);
        assert_eq!(resp.json()["translations"]["fr"]["questions"][1], json!({"label": "Quand ?"}), "for {schedule}");
    }
    // The poll's own slots and zone are untouched.
    assert_eq!(server.get(&poll.path()).json()["questions"][1]["options"], json!(SLOTS));
}

/// The share page's form offers each slot as a radio group `q{i}s{j}` of
/// `yes`, `ifneedbe` and `no`: the interface the votes below use.
#[test]
fn the_share_form_has_a_radio_group_per_slot() {
    let server = Server::start();
    let poll = when_poll(&server);
    let page = server.get(&format!("/p/{}", poll.id)).text();
    for j in 0..SLOTS.len() {
        for value in ["yes", "ifneedbe", "no"] {
            let input = format!("name=\"q1s{j}\" value=\"{value}\"");
            assert!(page.contains(&input), "no {input} on the share page:\n{page}");
        }
    }
    assert!(!page.contains("name=\"q1s4\""), "a slot too many:\n{page}");
    // Its own field is only the optional question's "No answer", sent empty.
    assert!(page.contains("id=\"q1-none\" name=\"q1\" value=\"\""), "no 'No answer' for q1:\n{page}");
    assert_eq!(page.matches("name=\"q1\"").count(), 1, "{page}");
}

#[test]
fn votes_on_the_share_page_are_counted_per_slot_best_first() {
    let server = Server::start();
    let poll = when_poll(&server);
    // Nobody yet: every slot at zero, none best, in time order.
    let q = results_of(&server, &poll, 1);
    assert_eq!(q["answered"], 0);
    assert_eq!(q["slots"], json!(SLOTS.map(|s| slot(s, 0, 0, 0, false))));
    assert_eq!(q["bestFirst"], json!(SLOTS));

    // A: no, if need be, yes, yes.
    vote(&server, &poll, &slots(&[(0, "no"), (1, "ifneedbe"), (2, "yes"), (3, "yes")]));
    // B: slot 0 left out (no); yes, yes, if need be.
    vote(&server, &poll, &slots(&[(1, "yes"), (2, "yes"), (3, "ifneedbe")]));
    // C: yes, if need be, if need be; slot 3 left out (no); the order of
    // the fields does not matter.
    vote(&server, &poll, &slots(&[(2, "ifneedbe"), (0, "yes"), (1, "ifneedbe")]));
    // D: no to every slot: answered all the same.
    vote(&server, &poll, &slots(&[(0, "no"), (1, "no"), (2, "no"), (3, "no")]));
    // E: only the other question: the schedule is not answered.
    vote(&server, &poll, &[field("q0", 1)]);

    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 5);
    assert_eq!(
        r["questions"][1],
        json!({"label": "When?", "type": "schedule", "answered": 4, "timeZone": "Europe/Paris",
            "slots": [
                slot(SLOTS[0], 1, 0, 3, false),
                slot(SLOTS[1], 1, 2, 1, false),
                slot(SLOTS[2], 2, 1, 1, true),
                slot(SLOTS[3], 1, 1, 2, false),
            ],
            // Most yes first; among equal yes, most if need be; then time.
            "bestFirst": [SLOTS[2], SLOTS[1], SLOTS[3], SLOTS[0]]})
    );
    assert_eq!(r["questions"][0]["options"][1]["count"], 1);
}

#[test]
fn tied_slots_are_all_best_and_stay_in_time_order() {
    let server = Server::start();
    let poll = when_poll(&server);
    // Slots 1 and 3 tie at one yes and one if need be; slot 0 has as many
    // yes and fewer if need be; slot 2 more if need be but fewer yes.
    vote(&server, &poll, &slots(&[(0, "yes"), (1, "yes"), (2, "ifneedbe"), (3, "ifneedbe")]));
    vote(&server, &poll, &slots(&[(1, "ifneedbe"), (2, "ifneedbe"), (3, "yes")]));
    vote(&server, &poll, &slots(&[(2, "ifneedbe")]));
    let q = results_of(&server, &poll, 1);
    assert_eq!(
        q["slots"],
        json!([
            slot(SLOTS[0], 1, 0, 2, false),
            slot(SLOTS[1], 1, 1, 1, true),
            slot(SLOTS[2], 0, 3, 0, false),
            slot(SLOTS[3], 1, 1, 1, true),
        ])
    );
    assert_eq!(q["bestFirst"], json!([SLOTS[1], SLOTS[3], SLOTS[0], SLOTS[2]]));

    // If need be alone makes a slot best when nobody says yes.
    let fresh = when_poll(&server);
    vote(&server, &fresh, &slots(&[(1, "ifneedbe"), (3, "no")]));
    let q = results_of(&server, &fresh, 1);
    let best: Vec<bool> = q["slots"].as_array().unwrap().iter().map(|s| s["best"].as_bool().unwrap()).collect();
    assert_eq!(best, [false, true, false, false]);
    assert_eq!(q["bestFirst"], json!([SLOTS[1], SLOTS[0], SLOTS[2], SLOTS[3]]));
}

#[test]
fn no_slot_is_best_while_nobody_can_come() {
    let server = Server::start();
    let poll = when_poll(&server);
    vote(&server, &poll, &slots(&[(0, "no"), (2, "no")]));
    vote(&server, &poll, &slots(&[(3, "no")]));
    let q = results_of(&server, &poll, 1);
    assert_eq!(q["answered"], 2);
    assert_eq!(q["slots"], json!(SLOTS.map(|s| slot(s, 0, 0, 2, false))));
    assert_eq!(q["bestFirst"], json!(SLOTS));
}

/// A form that does not hold what the share page's form sends is refused,
/// and nothing of it is counted.
#[test]
fn a_vote_with_a_bad_slot_answer_is_refused_and_not_counted() {
    let server = Server::start();
    let poll = create(
        &server,
        json!([
            {"label": "Lunch?", "options": ["Pizza", "Sushi"]},
            {"type": "schedule", "label": "When?", "options": SLOTS, "required": true},
        ]),
    );
    let refused: Vec<(Vec<(String, String)>, u16)> = vec![
        // Not one of the three answers: no such answer on the form.
        (slots(&[(0, "maybe")]), 400),
        (slots(&[(0, "yes"), (1, "Yes")]), 400),
        (slots(&[(0, "yes"), (1, "if need be")]), 400),
        (slots(&[(0, "")]), 400),
        (slots(&[(0, "2")]), 400),
        // A slot the question does not have, a slot sent twice, or a field
        // of another type: not the form the page gave.
        (slots(&[(4, "yes")]), 422),
        (slots(&[(0, "yes"), (0, "no")]), 422),
        // Its own field takes only the empty "No answer".
        (vec![field("q1", "yes")], 400),
        (vec![field("q1", 0)], 400),
        (vec![field("q1r0", 1)], 422),
        (vec![field("q1s00", "yes")], 422),
        (vec![field("q0s0", "yes"), field("q1s0", "yes")], 422),
        // A required schedule left out entirely.
        (vec![field("q0", 0)], 422),
    ];
    for (fields, status) in refused {
        let resp = server.vote_page(&poll.id, &fields, &Server::fresh_client_ip()).unwrap();
        assert_eq!(resp.status, status, "{fields:?}: {}", resp.describe());
    }
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 0, "a refused vote was counted: {r}");
    assert_eq!(r["questions"][1]["slots"], json!(SLOTS.map(|s| slot(s, 0, 0, 0, false))));
    // The same form with good answers counts.
    vote(&server, &poll, &slots(&[(0, "yes"), (1, "ifneedbe")]));
    let q = results_of(&server, &poll, 1);
    assert_eq!(
        (q["answered"].as_u64(), &q["slots"][0]["yes"], &q["slots"][1]["ifNeedBe"]),
        (Some(1), &json!(1), &json!(1))
    );
}

/// Results of a schedule stay withheld as their visibility says: the admin
/// token reads them, anyone else gets the problem document.
#[test]
fn withheld_schedule_results_follow_the_visibility_rules() {
    let server = Server::start();
    let schedule_poll = |visibility: &str| {
        let mut body = poll_with(json!([{"type": "schedule", "label": "When?", "options": SLOTS}]));
        body.as_object_mut().unwrap().remove("resultsPublic");
        body["resultsVisibility"] = json!(visibility);
        let poll = server.create_poll(&body);
        vote(&server, &poll, &[field("q0s2", "yes"), field("q0s3", "ifneedbe")]);
        poll
    };
    let expected_slots = json!([
        slot(SLOTS[0], 0, 0, 1, false),
        slot(SLOTS[1], 0, 0, 1, false),
        slot(SLOTS[2], 1, 0, 0, true),
        slot(SLOTS[3], 0, 1, 0, false),
    ]);
    for (visibility, status) in [("private", 401), ("afterVote", 403), ("afterClose", 403)] {
        let poll = schedule_poll(visibility);
        let withheld = assert_problem(&server.get(&poll.results_path()), status);
        assert!(withheld.get("questions").is_none(), "{visibility}: {withheld}");
        let r = server.get_auth(&poll.results_path(), &poll.token);
        r.assert_status(200);
        assert_eq!(r.json()["questions"][0]["slots"], expected_slots, "{visibility}");
    }
    // afterClose: public once closed.
    let poll = schedule_poll("afterClose");
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    let r = server.get(&poll.results_path());
    r.assert_status(200);
    assert_eq!(r.json()["questions"][0]["bestFirst"], json!([SLOTS[2], SLOTS[3], SLOTS[0], SLOTS[1]]));
}

/// One slot makes a question ("can you come on the 14th?"): yes, if need
/// be or no for it alone.
#[test]
fn a_single_slot_is_a_question() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"] = json!([{"type": "schedule", "label": "The 14th?", "options": ["2027-01-14T19:00"]}]);
    let poll = server.create_poll(&body);
    let read = server.get(&poll.path()).json();
    assert_eq!(read["questions"][0]["options"], json!(["2027-01-14T19:00"]), "{read}");
}
