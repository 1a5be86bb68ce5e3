//! Schedule questions ("when can you come?") on the pages: made in the
//! creation form (dates in any order, the same times on every date, a time
//! zone), answered per slot without script, counted with the best slots
//! first; the form's own mistakes said at their fields.

use super::*;

/// The creation form sent with a schedule question 0 and its `slots`
/// fields (`q0d{j}`, `q0t{j}`, `q0times`, `q0tz`).
fn send_schedule(server: &Server, slots: &[(&str, &str)]) -> Response {
    let code = once(server);
    let mut form = vec![
        ("once", code.as_str()),
        ("title", "Team dinner"),
        ("lang", "en"),
        ("expiry", "30"),
        ("results", "public"),
        ("q0", "When can you come?"),
        ("q0type", "schedule"),
        ("q0required", "1"),
    ];
    form.extend_from_slice(slots);
    server.post_form("/", &Server::fresh_client_ip(), &form)
}

#[test]
fn a_schedule_is_made_in_the_form_answered_per_slot_and_counted_best_first() {
    let server = Server::start();
    // Dates typed out of order; the second has a time of its own, the
    // others get the shared times; a blank row is left out.
    let resp = send_schedule(
        &server,
        &[
            ("q0d0", "2027-01-15"),
            ("q0t0", ""),
            ("q0d1", "2027-01-14"),
            ("q0t1", "12:00"),
            ("q0d2", ""),
            ("q0t2", ""),
            ("q0times", "20 h 30, 18:00"),
            ("q0tz", "europe/zurich"),
        ],
    );
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let share = input_value(&resp.text(), "id=\"link-share\"");
    let id = share.rsplit('/').next().unwrap().to_owned();
    let api = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(
        api["questions"][0],
        json!({"type": "schedule", "label": "When can you come?", "required": true, "timeZone": "Europe/Zurich",
               "options": ["2027-01-14T12:00", "2027-01-15T18:00", "2027-01-15T20:30"]}),
        "{api}"
    );

    // The share page: slots under their day, three radios each, no script.
    let page = server.get(&format!("/p/{id}")).text();
    assert!(page.contains(r#"<p class="slot-day-name" aria-hidden="true">Friday 15 January 2027</p>"#), "{page}");
    assert!(page.contains(r#"<div class="slot" role="radiogroup" aria-labelledby="q0s1-name">"#), "{page}");
    assert!(page.contains(r#"<input type="radio" id="q0s1-ifneedbe" name="q0s1" value="ifneedbe">"#), "{page}");
    assert!(page.contains("Times are in Europe/Zurich."), "{page}");
    // Each answer's segment carries its kind, for its colour when chosen.
    assert!(
        page.contains(r#"<span class="scale-value avail-ifneedbe"><input type="radio" id="q0s1-ifneedbe""#),
        "{page}"
    );
    let fr = server.get(&format!("/p/{id}?lang=fr")).text();
    assert!(fr.contains(">vendredi 15 janvier 2027<"), "{fr}");
    assert!(fr.contains(r#"<label for="q0s0-yes">Oui</label>"#), "{fr}");

    let ballots: [&[(&str, &str)]; 3] = [
        &[("q0s0", "yes"), ("q0s1", "yes"), ("q0s2", "no")],
        // Slot 2 left out: no.
        &[("q0s0", "ifneedbe"), ("q0s1", "yes")],
        &[("q0s0", "yes"), ("q0s1", "ifneedbe"), ("q0s2", "yes")],
    ];
    for b in ballots {
        let (resp, _) = vote_form(&server, &id, &Server::fresh_client_ip(), b);
        assert_eq!(resp.status, 200, "{b:?}: {}", resp.describe());
    }
    // A value no form sends counts nothing; a required schedule left blank
    // comes back with its question marked.
    let (refused, _) = vote_form(&server, &id, &Server::fresh_client_ip(), &[("q0s0", "maybe")]);
    assert_eq!(refused.status, 400, "{}", refused.describe());
    let (blank, _) = vote_form(&server, &id, &Server::fresh_client_ip(), &[]);
    assert_eq!(blank.status, 422, "{}", blank.describe());
    assert!(blank.text().contains(r#"id="q0-error""#), "{}", blank.text());

    let json = server.get(&format!("/api/polls/{id}/results")).json();
    let q = &json["questions"][0];
    assert_eq!(json["totalResponses"], 3, "{json}");
    assert_eq!(
        q["slots"],
        json!([
            {"slot": "2027-01-14T12:00", "yes": 2, "ifNeedBe": 1, "no": 0, "best": false},
            {"slot": "2027-01-15T18:00", "yes": 2, "ifNeedBe": 1, "no": 0, "best": false},
            {"slot": "2027-01-15T20:30", "yes": 1, "ifNeedBe": 0, "no": 2, "best": false},
        ])
        .as_array()
        .map(|slots| {
            // Both first slots tie at the top: both are best.
            let mut slots = slots.clone();
            slots[0]["best"] = json!(true);
            slots[1]["best"] = json!(true);
            json!(slots)
        })
        .unwrap(),
        "{json}"
    );
    assert_eq!(q["bestFirst"], json!(["2027-01-14T12:00", "2027-01-15T18:00", "2027-01-15T20:30"]));

    // The results page: best first, marked in words, the three counts.
    let html = server.get(&format!("/p/{id}/results")).text();
    assert_eq!(
        table_rows(&html, "result-q0"),
        [
            ["Thursday 14 January 2027, 12:00 Best date", "2", "1", "0"],
            ["Friday 15 January 2027, 18:00 Best date", "2", "1", "0"],
            ["Friday 15 January 2027, 20:30", "1", "0", "2"],
        ]
        .map(|r| r.map(str::to_owned).to_vec())
    );
    let de = server.get(&format!("/p/{id}/results?lang=de")).text();
    assert!(de.contains("Bester Termin"), "{de}");
    // The results say which clock the times are on, as the form does.
    assert!(html.contains("Times are in Europe/Zurich."), "{html}");
}

#[test]
fn mistakes_in_a_schedule_are_said_at_their_fields() {
    let server = Server::start();
    let resp = send_schedule(
        &server,
        &[
            ("q0d0", "2027-02-30"),
            ("q0d1", "2027-03-01"),
            ("q0d2", "2027-03-01"),
            ("q0times", "18:00, late"),
            ("q0tz", "Europe/Pariss"),
        ],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let html = resp.text();
    for (id, text) in [
        ("f-q0d0", "Enter a date that exists"),
        ("f-q0-times", "Write times like 18:00, separated by commas."),
        ("f-q0-tz", "Enter a time zone such as Europe/Paris"),
    ] {
        let at = html.find(&format!(r#"id="{id}-error""#)).unwrap_or_else(|| panic!("no error at {id}: {html}"));
        assert!(html[at..].split("</p>").next().unwrap().contains(text), "{id}: {html}");
    }
    // The form comes back as typed.
    assert!(html.contains(r#"name="q0d2" value="2027-03-01""#), "{html}");
    assert!(html.contains(r#"value="Europe/Pariss""#), "{html}");
    // Nothing was created.
    assert!(!html.contains("id=\"link-share\""), "{html}");
}

/// A language version gives a schedule's label and no slots: the share
/// page in that language shows the poll's own slots, in its words.
#[test]
fn a_language_version_keeps_the_polls_slots() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"] = json!([{"type": "schedule", "label": "When?", "options": ["2027-05-03", "2027-05-04T09:15"]}]);
    let poll = server.create_poll(&body);
    let with_slots =
        json!({"translations": {"fr": {"title": "Quand", "questions": [{"label": "Quand ?", "options": ["a", "b"]}]}}});
    let refused = server.patch_json(&poll.id, &poll.token, &with_slots);
    assert_eq!(refused.status, 422, "{}", refused.describe());
    let version = json!({"translations": {"fr": {"title": "Quand", "questions": [{"label": "Quand ?"}]}}});
    let resp = server.patch_json(&poll.id, &poll.token, &version);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    let page = server.get(&format!("/p/{}?lang=fr", poll.id)).text();
    assert!(page.contains("Quand ?"), "{page}");
    assert!(page.contains(">lundi 3 mai 2027<") && page.contains(">mardi 4 mai 2027<"), "{page}");
    assert!(page.contains(r#"name="q0s1" value="yes""#), "{page}");
    // The admin page's version form asks for no slot texts.
    let admin = server.post_form(&format!("/p/{}/admin", poll.id), "192.0.2.42", &[("token", &poll.token)]);
    assert_eq!(admin.status, 200, "{}", admin.describe());
    assert!(admin.text().contains(r#"name="vq0""#), "{}", admin.text());
    assert!(!admin.text().contains(r#"name="vq0o0""#), "{}", admin.text());
}

/// An optional schedule ends with "No answer": chosen, it takes the whole
/// question back, whatever its slots still say (without script they stay
/// checked beside it); all "no" is an answer, counted as such.
#[test]
fn an_optional_schedule_can_be_taken_back_with_no_answer() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["questions"] = json!([
        {"type": "schedule", "label": "When?", "options": ["2027-05-03", "2027-05-04"]},
        {"label": "Where?", "options": ["Park", "Lake"]},
    ]);
    let poll = server.create_poll(&body);
    let page = server.get(&format!("/p/{}", poll.id)).text();
    assert!(page.contains(r#"<input type="radio" id="q0-none" name="q0" value="">"#), "{page}");
    for fields in [&[("q0s0", "yes"), ("q0", ""), ("q1", "0")][..], &[("q0s0", "no"), ("q0s1", "no"), ("q1", "1")][..]]
    {
        let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), fields);
        assert_eq!(resp.status, 200, "{fields:?}: {}", resp.describe());
    }
    let json = server.get(&format!("/api/polls/{}/results", poll.id)).json();
    let q = &json["questions"][0];
    assert_eq!(json["totalResponses"], 2, "{json}");
    assert_eq!(q["answered"], 1, "'No answer' took the question back: {json}");
    assert_eq!(q["slots"][0], json!({"slot": "2027-05-03", "yes": 0, "ifNeedBe": 0, "no": 1, "best": false}), "{json}");
}
