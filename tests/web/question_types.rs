//! Question types on the pages: multiple choice, rankings and scales
//! created in the form, answered and counted; refused ballots come back
//! with what was entered.

use super::*;

/// The counts column of an options or scale table: `(answer, count)`.
fn counts(html: &str, id: &str) -> Vec<(String, String)> {
    table_rows(html, id).into_iter().map(|r| (r[0].clone(), r[1].clone())).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

/// Issue 14: a poll with one question of each type is made in the creation
/// form, answered on the share page through each type's fields, and the
/// results page counts what was sent.
#[test]
fn each_question_type_is_created_in_the_form_answered_and_counted() {
    let server = Server::start();
    let ip = Server::fresh_client_ip();
    let code = once(&server);
    let resp = server.post_form(
        "/",
        &ip,
        &[
            ("once", &code),
            ("title", "Team day"),
            ("lang", "en"),
            ("expiry", "7"),
            ("results", "public"),
            ("q0", "Where?"),
            ("q0type", "single"),
            ("q0o0", "Park"),
            ("q0o1", "Lake"),
            ("q0from", "1"),
            ("q0to", "5"),
            ("q1", "Snacks?"),
            ("q1type", "multiple"),
            ("q1required", "1"),
            ("q1o0", "Nuts"),
            ("q1o1", "Fruit"),
            ("q1o2", ""),
            ("q1o3", "Cake"),
            ("q1min", ""),
            ("q1max", "2"),
            ("q1from", "1"),
            ("q1to", "5"),
            ("q2", "Which games, in order?"),
            ("q2type", "ranked"),
            ("q2o0", "Chess"),
            ("q2o1", "Darts"),
            ("q2o2", "Go"),
            ("q2from", "1"),
            ("q2to", "5"),
            ("q3", "How much fun?"),
            ("q3type", "scale"),
            ("q3required", "1"),
            // Options typed before choosing "scale" are not sent.
            ("q3o0", "left over"),
            ("q3from", "1"),
            ("q3to", "5"),
            ("q3low", "None"),
            ("q3high", "Lots"),
        ],
    );
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let share = input_value(&resp.text(), "id=\"link-share\"");
    let id = share.rsplit('/').next().unwrap().to_owned();
    let api = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(
        api["questions"],
        json!([
            {"type": "single", "label": "Where?", "options": ["Park", "Lake"], "required": false},
            {"type": "multiple", "label": "Snacks?", "options": ["Nuts", "Fruit", "Cake"], "required": true,
             "minChoices": 1, "maxChoices": 2},
            {"type": "ranked", "label": "Which games, in order?", "options": ["Chess", "Darts", "Go"], "required": false},
            {"type": "scale", "label": "How much fun?", "required": true, "scaleMin": 1, "scaleMax": 5,
             "minLabel": "None", "maxLabel": "Lots"},
        ]),
        "{api}"
    );

    // The share page has each type's widget, with its fields' names.
    let page = server.get(&format!("/p/{id}")).text();
    assert!(page.contains(r#"type="checkbox" id="q1-2" name="q1" value="2""#), "{page}");
    assert!(page.contains("Choose up to 2 answers."), "{page}");
    // Three of two at most, as sent without script: refused in the hint's
    // own words ("between 1 and 2" contradicted "up to 2").
    let (refused, _) =
        vote_form(&server, &id, &Server::fresh_client_ip(), &[("q1", "0"), ("q1", "1"), ("q1", "2"), ("q3", "4")]);
    assert_eq!(refused.status, 422, "{}", refused.describe());
    assert!(
        refused.text().contains(r#"<p class="field-error" id="q1-error">Choose up to 2 answers.</p>"#),
        "{}",
        refused.text()
    );
    assert!(page.contains(r#"<select id="q2r1" name="q2r1" aria-label="Rank of Darts">"#), "{page}");
    assert!(
        page.contains(r#"type="radio" id="q3-5" name="q3" value="5" aria-describedby="q3-high" required"#),
        "{page}"
    );
    assert!(page.contains(r#"id="q3-low" lang"#) || page.contains(r#"id="q3-low">None<"#), "{page}");
    // An optional single choice can be taken back: a last radio "No
    // answer", sent empty; a required question has none.
    assert!(
        page.contains(r#"<label class="choice no-answer" for="q0-none"><input type="radio" id="q0-none" name="q0" value=""><span class="choice-text">No answer</span></label>"#),
        "{page}"
    );
    assert!(!page.contains(r#"id="q3-none""#), "{page}");
    for (lang, text) in [("fr", "Pas de réponse"), ("de", "Keine Antwort"), ("it", "Nessuna risposta")] {
        let page = server.get(&format!("/p/{id}?lang={lang}")).text();
        assert!(page.contains(&format!(r#"<span class="choice-text">{text}</span></label>"#)), "{lang}: {page}");
    }

    let ballots: [&[(&str, &str)]; 3] = [
        &[("q0", "1"), ("q1", "0"), ("q1", "2"), ("q2r0", "2"), ("q2r1", "1"), ("q2r2", ""), ("q3", "4")],
        &[("q0", "1"), ("q1", "1"), ("q2r0", "1"), ("q2r1", "2"), ("q2r2", "3"), ("q3", "5")],
        // Question 0 taken back ("No answer"), only one game ranked.
        &[("q0", ""), ("q1", "0"), ("q2r1", "1"), ("q3", "4")],
    ];
    for b in ballots {
        let (resp, _) = vote_form(&server, &id, &Server::fresh_client_ip(), b);
        assert_eq!(resp.status, 200, "{b:?}: {}", resp.text());
    }

    let html = server.get(&format!("/p/{id}/results")).text();
    assert_eq!(counts(&html, "result-q0"), pairs(&[("Park", "0"), ("Lake Most votes", "2")]));
    assert_eq!(counts(&html, "result-q1"), pairs(&[("Nuts Most votes", "2"), ("Fruit", "1"), ("Cake", "1")]));
    // First choices: Darts twice, Chess once.
    assert_eq!(counts(&html, "result-q2"), pairs(&[("Chess", "1"), ("Darts", "2"), ("Go", "0")]));
    // Darts beats Chess 2:1, and both beat Go.
    assert_eq!(
        table_rows(&html, "result-q2-ranking"),
        [["1st", "Darts"], ["2nd", "Chess"], ["3rd", "Go"]].map(|r| r.map(str::to_owned).to_vec())
    );
    let pairwise = table_rows(&html, "result-q2-pairwise");
    // The third ballot leaves Chess and Go unranked: tied, neither above.
    assert_eq!(pairwise[0], ["Chess", "–", "1", "2"], "{pairwise:?}");
    assert_eq!(pairwise[1], ["Darts", "2", "–", "3"], "{pairwise:?}");
    assert_eq!(counts(&html, "result-q3"), pairs(&[("1", "0"), ("2", "0"), ("3", "0"), ("4", "2"), ("5", "1")]));
    assert!(html.contains(r#"<strong class="mean">4.33</strong>"#), "{html}");
    assert!(html.contains(r#"<strong class="median">4</strong>"#), "{html}");
    let json = server.get(&format!("/api/polls/{id}/results")).json();
    assert_eq!(json["questions"][3]["mean"], json!(4.33), "{json}");
    assert_eq!(json["totalResponses"], 3);
}

/// An optional scale ends with "No answer" too: sent empty, it counts nothing.
#[test]
fn an_optional_scale_can_be_taken_back_with_no_answer() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["lang"] = json!("de");
    body["questions"] = json!([
        {"type": "scale", "label": "Wie gut?", "scaleMin": 1, "scaleMax": 5},
        {"type": "single", "label": "Wohin?", "options": ["Park", "See"]},
    ]);
    let poll = server.create_poll(&body);
    let page = server.get(&format!("/p/{}", poll.id)).text();
    assert!(
        page.contains(
            r#"<label class="choice no-answer" for="q0-none"><input type="radio" id="q0-none" name="q0" value=""><span class="choice-text">Keine Antwort</span></label>"#
        ),
        "{page}"
    );
    // A ballot answers at least one question: here the second.
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q0", ""), ("q1", "0")]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let json = server.get(&format!("/api/polls/{}/results", poll.id)).json();
    assert_eq!(json["totalResponses"], 1, "{json}");
    assert_eq!(json["questions"][0]["answered"], 0, "{json}");
}

/// Options nobody ranked apart share a place, and the page says so.
#[test]
fn a_shared_place_in_a_ranking_is_shown_as_shared() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["lang"] = json!("fr");
    body["questions"] = json!([{"type": "ranked", "label": "Ordre ?", "options": ["Un", "Deux", "Trois"]}]);
    let poll = server.create_poll(&body);
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q0r2", "1")]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let html = server.get(&format!("/p/{}/results", poll.id)).text();
    let rows = table_rows(&html, "result-q0-ranking");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0], ["1er", "Trois"]);
    assert_eq!(rows[1][0], "2e ex æquo");
    assert!(html.contains("<ul class=\"tied\"><li>Un</li><li>Deux</li></ul>"), "{html}");
    assert!(html.contains(r#"role="region" tabindex="0" aria-labelledby="result-q0-pairwise-caption""#), "{html}");
}

/// A ranking nobody has ranked yet says so, in every language, instead of
/// giving every option a shared first place ("1st (shared)" for each).
#[test]
fn a_ranking_nobody_ranked_says_so_instead_of_a_shared_first_place() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["questions"] = json!([{"type": "ranked", "label": "Order?", "options": ["One", "Two", "Three"]}]);
    let poll = server.create_poll(&body);
    for (lang, said, shared) in [
        ("en", "Nobody has ranked the options yet.", "(shared)"),
        ("fr", "Personne n’a encore classé les options.", "ex æquo"),
        ("de", "Noch hat niemand die Optionen in eine Reihenfolge gebracht.", "(geteilt)"),
        ("it", "Nessuno ha ancora ordinato le opzioni.", "a pari merito"),
    ] {
        let html = server.get(&format!("/p/{}/results?lang={lang}", poll.id)).text();
        assert!(
            html.contains(&format!(r#"<p class="ranking-none" id="result-q0-ranking">{said}</p>"#)),
            "{lang}: {html}"
        );
        assert!(!html.contains(shared), "{lang}: a shared place with nobody ranking: {html}");
    }
    // One ranking, and the places come back.
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q0r0", "1")]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let html = server.get(&format!("/p/{}/results", poll.id)).text();
    assert!(!html.contains("ranking-none"), "{html}");
    assert_eq!(table_rows(&html, "result-q0-ranking")[0], ["1st", "One"]);
}

/// The largest share page there is, 20 rankings of 12 options, stays small
/// (issue 24, item 4): every GET of it is work that a heavy poll's visitors
/// ask of polld. The move buttons, which only script can use, are made by
/// the script from the names each ranking carries once; a rank's option
/// sends its text. The page weighed 242 KB with them in it.
#[test]
fn the_largest_ranking_page_carries_no_markup_only_script_uses() {
    let server = Server::start();
    let options: Vec<String> = (0..12).map(|o| format!("Option {o}")).collect();
    let mut body = valid_poll_json();
    body["questions"] = json!(
        (0..20)
            .map(|q| json!({"type": "ranked", "label": format!("Rank {q}"), "options": options}))
            .collect::<Vec<_>>()
    );
    let poll = server.create_poll(&body);
    for (lang, up, down) in [
        ("en", "Move up", "Move down"),
        ("fr", "Monter", "Descendre"),
        ("de", "Nach oben", "Nach unten"),
        ("it", "Sposta su", "Sposta giù"),
    ] {
        let html = server.get(&format!("/p/{}?lang={lang}", poll.id)).text();
        assert!(html.len() < 128 * 1024, "{lang}: the page weighs {} bytes", html.len());
        assert_eq!(html.matches("<select ").count(), 240, "{lang}");
        assert_eq!(html.matches(&format!(r#"data-up="{up}" data-down="{down}""#)).count(), 20, "{lang}");
        assert!(!html.contains("data-move=") && !html.contains("rank-move"), "{lang}: move buttons in the page");
        // Each select offers "not ranked" and the ranks 1 to 12 as text.
        let first =
            html.split(r#"<select id="q0r0""#).nth(1).and_then(|s| s.split("</select>").next()).unwrap_or_default();
        let ranks: String = (1..=12).map(|r| format!("<option>{r}</option>")).collect();
        assert!(first.ends_with(&ranks), "{lang}: {first}");
    }
    // A browser sends an option's text where it has no value, so the form
    // sends the ranks as before (tests/e2e/design.mjs votes through these
    // selects in a real browser); the server takes them as it did.
    let pairs: Vec<(String, String)> = (0..12).map(|j| (format!("q0r{j}"), (12 - j).to_string())).collect();
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &borrowed);
    assert_eq!(resp.status, 200, "{}", resp.text());
}
/// A ballot that breaks its question's rules, or holds a value out of its
/// question's range, comes back (422) with the form, what was entered and a
/// message; a value that is no number is a 400;
/// a field the poll's questions do not take is a changed form. Nothing is
/// counted, and the same form, mended, still works.
#[test]
fn refused_ballots_come_back_with_the_form_and_what_was_entered() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["questions"] = json!([
        {"type": "multiple", "label": "Pick", "options": ["a", "b", "c", "d"], "minChoices": 2, "maxChoices": 3},
        {"type": "ranked", "label": "Rank", "options": ["x", "y", "z"]},
        {"type": "scale", "label": "Rate", "scaleMin": 1, "scaleMax": 5, "required": true},
        {"label": "One", "options": ["p", "q"]},
    ]);
    let poll = server.create_poll(&body);
    let path = format!("/p/{}", poll.id);
    // One class attribute per question, naming its type (a second `class`
    // attribute would be dropped by browsers).
    let share = server.get(&path).text();
    for kind in ["multiple", "ranked", "scale", "single"] {
        assert!(share.contains(&format!("<fieldset class=\"question q-{kind}\"")), "q-{kind} in\n{share}");
    }
    type Case<'a> = (&'a [(&'a str, &'a str)], u16, &'a str, &'a [&'a str]);
    let cases: [Case; 14] = [
        (
            &[("q0", "1"), ("q2", "3")],
            422,
            "Pick</a>: Choose between 2 and 3 answers.",
            &[r#"id="q0-1" name="q0" value="1" checked"#],
        ),
        (
            &[("q0", "0"), ("q0", "1"), ("q0", "2"), ("q0", "3"), ("q2", "3")],
            422,
            "Pick</a>: Choose between 2 and 3 answers.",
            &[r#"id="q0-3" name="q0" value="3" checked"#],
        ),
        (
            &[("q1r0", "1"), ("q1r1", "1"), ("q2", "3")],
            422,
            "Rank</a>: Two options have the same rank.",
            &[
                r#"<select id="q1r1" name="q1r1" aria-label="Rank of y" aria-invalid="true"><option value="">Not ranked</option><option selected>1</option>"#,
            ],
        ),
        (
            &[("q1r0", "1"), ("q1r2", "3"), ("q2", "3")],
            422,
            "Rank</a>: The ranks must run 1, 2, 3",
            &[r#"<option selected>3</option>"#],
        ),
        (
            &[("q0", "0"), ("q0", "2"), ("q2", "7")],
            422,
            "Rate</a>: Choose a value from 1 to 5.",
            &[r#"id="q0-2" name="q0" value="2" checked"#],
        ),
        (
            &[("q3", "1")],
            422,
            "Rate</a>: This question needs an answer.",
            &[r#"id="q3-1" name="q3" value="1" checked"#],
        ),
        (
            &[("q3", "9"), ("q2", "3")],
            422,
            "One</a>: That answer is not one of this question",
            &[r#"id="q2-3" name="q2" value="3" required checked"#],
        ),
        (
            &[("q1r0", "4"), ("q2", "3")],
            422,
            "Rank</a>: The ranks must run 1, 2, 3",
            &[r#"id="q2-3" name="q2" value="3" required checked"#],
        ),
        (&[("q2", "256")], 422, "Rate</a>: Choose a value from 1 to 5.", &[]),
        (&[("q0", "x"), ("q2", "3")], 400, "", &[]),
        (&[("q0r1", "1"), ("q2", "3")], 422, "This form was changed", &[]),
        (&[("q1", "0"), ("q2", "3")], 422, "This form was changed", &[]),
        (&[("q00", "1"), ("q2", "3")], 422, "This form was changed", &[]),
        (&[("q1r01", "1"), ("q2", "3")], 422, "This form was changed", &[]),
    ];
    for (fields, status, message, kept) in cases {
        let token = ballot(&server.get(&path).text());
        let mut all = vec![("ballot", token.as_str())];
        all.extend_from_slice(fields);
        let resp = server.post_form(&path, &Server::fresh_client_ip(), &all);
        assert_eq!(resp.status, status, "{fields:?}: {}", resp.describe());
        if status == 422 {
            let html = resp.text();
            assert!(html.contains(message), "{fields:?}: no {message:?} in\n{html}");
            // The page shows no question numbers; the message names none
            // (issue 25): the summary names the question by its text.
            assert!(!html.contains("Question 1") && !html.contains("Question 2:"), "{fields:?}: a number in\n{html}");
            assert!(ballot_code(&html).is_some(), "{fields:?}: the form comes back");
            for k in kept {
                assert!(html.contains(k), "{fields:?}: {k} not kept in\n{html}");
            }
        }
        // Mended, the same form counts.
        let fixed = server.post_form(
            &path,
            &Server::fresh_client_ip(),
            &[("ballot", &token), ("q0", "0"), ("q0", "1"), ("q1r2", "1"), ("q2", "2")],
        );
        assert_eq!(fixed.status, 200, "{fields:?}: {}", fixed.describe());
    }
    assert_eq!(total(&server, &poll), 14, "only the mended forms count");
    let json = server.get(&format!("/api/polls/{}/results", poll.id)).json();
    assert_eq!(json["questions"][2]["distribution"][1], json!({"value": 2, "count": 14}), "{json}");
}
