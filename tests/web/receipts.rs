//! Receipts: a voter sees, changes or withdraws their own ballot, on every
//! question type, and nowhere else.

use super::*;

/// The receipt a thanks page shows, in `<code id="receipt">`.
fn receipt_on(html: &str) -> Option<String> {
    let start = html.find("<code id=\"receipt\">")? + "<code id=\"receipt\">".len();
    Some(html[start..].split('<').next()?.to_owned())
}

/// A public poll with one question of each type: an optional single
/// choice, a required multiple choice (up to 2), an optional ranking and a
/// required scale 1–5.
fn every_type_poll(server: &Server, visibility: &str) -> Created {
    let mut body = valid_poll_json();
    body.as_object_mut().unwrap().remove("resultsPublic");
    body["resultsVisibility"] = json!(visibility);
    body["questions"] = json!([
        {"type": "single", "label": "Where?", "options": ["Park", "Lake"]},
        {"type": "multiple", "label": "Snacks?", "options": ["Nuts", "Fruit", "Cake"], "required": true, "maxChoices": 2},
        {"type": "ranked", "label": "Games?", "options": ["Chess", "Darts", "Go"]},
        {"type": "scale", "label": "Fun?", "required": true, "scaleMin": 1, "scaleMax": 5},
    ]);
    server.create_poll(&body)
}

/// Per question, the counts the API gives: per option (first choices for a
/// ranking), per value for a scale; and the total.
fn tallies(server: &Server, id: &str) -> (Vec<Vec<u64>>, u64) {
    let json = server.get(&format!("/api/polls/{id}/results")).json();
    let per = json["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let rows = q.get("distribution").filter(|d| d.is_array()).unwrap_or(&q["options"]);
            let count = |r: &serde_json::Value| r.get("count").or(r.get("firstChoices")).and_then(|c| c.as_u64());
            rows.as_array().unwrap().iter().map(|r| count(r).unwrap_or_else(|| panic!("{q}"))).collect()
        })
        .collect();
    (per, json["totalResponses"].as_u64().unwrap())
}

/// The receipt must never be in a header (a Location, a cookie, a link).
fn assert_not_in_headers(resp: &Response, receipt: &str) {
    let plain: String = receipt.chars().filter(|c| *c != '-').collect();
    for (name, value) in &resp.headers {
        let v: String = value.chars().filter(|c| *c != '-').collect();
        assert!(!v.to_uppercase().contains(&plain), "the receipt is in the header {name}: {value}");
    }
}

#[test]
fn a_receipt_shows_changes_and_withdraws_a_ballot_of_every_question_type() {
    let server = Server::start();
    let poll = every_type_poll(&server, "public");
    let id = poll.id.as_str();
    let own = format!("/p/{id}/ballot");
    let mut seen = Vec::new();

    let (resp, _) = vote_form(
        &server,
        id,
        &Server::fresh_client_ip(),
        &[("q0", "1"), ("q1", "0"), ("q1", "2"), ("q2r0", "2"), ("q2r1", "1"), ("q2r2", ""), ("q3", "4")],
    );
    resp.assert_status(200);
    assert_page_headers(&resp);
    let html = resp.text();
    let a = receipt_on(&html).unwrap_or_else(|| panic!("no receipt on the thanks page: {html}"));
    let groups: Vec<&str> = a.split('-').collect();
    assert_eq!(groups.len(), 6, "{a}");
    assert!(groups.iter().all(|g| g.len() == 4 && g.chars().all(|c| c.is_ascii_alphanumeric())), "{a}");
    assert!(html.contains(&format!("<a id=\"receipt-link\" href=\"{own}#receipt={a}\">")), "{html}");
    assert!(html.contains("Your receipt") && html.contains("Team lunch"), "heading and the poll's title: {html}");
    // Shown once: no language switcher, whose links would lead to pages
    // without the receipt.
    assert!(!html.contains("class=\"langs\""), "a language switcher beside the receipt: {html}");
    seen.push(resp);

    let (resp, _) =
        vote_form(&server, id, &Server::fresh_client_ip(), &[("q0", "0"), ("q1", "1"), ("q2r2", "1"), ("q3", "2")]);
    resp.assert_status(200);
    let b = receipt_on(&resp.text()).unwrap();
    assert_ne!(a, b);
    seen.push(resp);
    assert_eq!(tallies(&server, id), (vec![vec![1, 1], vec![1, 1, 1], vec![0, 1, 1], vec![0, 1, 0, 1, 0]], 2));

    // The share page offers the way to one's response (without script too).
    let share = server.get(&format!("/p/{id}")).text();
    assert!(share.contains(&format!("href=\"{own}\"")) && share.contains("id=\"receipt-remembered\""), "{share}");

    // The prompt.
    let prompt = server.get(&own);
    prompt.assert_status(200);
    assert_page_headers(&prompt);
    let html = prompt.text();
    assert!(html.contains("Enter the receipt you got") && html.contains("name=\"receipt\""), "{html}");
    assert!(html.contains("value=\"show\"") && html.contains("data-auto"), "{html}");

    // Show: the ballot as stored, in the vote form's fields. The receipt is
    // read as typed: lower case, spaces, no dashes.
    let typed = a.to_lowercase().replace('-', " ");
    let resp = server.post_form(&own, "198.51.100.60", &[("receipt", &typed)]);
    resp.assert_status(200);
    assert_page_headers(&resp);
    let html = resp.text();
    for (on, input) in [
        (true, "q0-1"),
        (false, "q0-0"),
        (false, "q0-none"),
        (true, "q1-0"),
        (false, "q1-1"),
        (true, "q1-2"),
        (true, "q3-4"),
        (false, "q3-5"),
    ] {
        assert_eq!(is_checked(&html, input), on, "{input}: {html}");
    }
    assert_eq!(selected_option(&html, "q2r0").as_deref(), Some("2"));
    assert_eq!(selected_option(&html, "q2r1").as_deref(), Some("1"));
    assert_eq!(selected_option(&html, "q2r2").as_deref(), Some(""));
    assert!(html.contains(&format!("<input type=\"hidden\" name=\"receipt\" value=\"{a}\">")), "{html}");
    assert!(html.contains("value=\"change\"") && html.contains("value=\"confirm-withdraw\""), "{html}");
    // Public results show on the page too.
    assert!(html.contains("id=\"result-q0\""), "{html}");
    // The language switcher posts the receipt along, never in a link.
    assert!(html.contains(&format!("action=\"{own}?lang=de\"")), "{html}");
    assert!(!html.contains("?receipt=") && !html.contains(&format!("href=\"{own}#")), "{html}");
    let de = server.post_form(&format!("{own}?lang=de"), "198.51.100.60", &[("receipt", &a)]);
    de.assert_status(200);
    assert!(de.text().contains("lang=\"de\"") && is_checked(&de.text(), "q0-1"), "{}", de.text());
    seen.extend([resp, de]);

    // Change every answer: the single choice taken back ("No answer").
    let change = |pairs: &[(&str, &str)]| {
        let mut all = vec![("receipt", a.as_str()), ("action", "change")];
        all.extend_from_slice(pairs);
        server.post_form(&own, "198.51.100.61", &all)
    };
    let resp = change(&[("q0", ""), ("q1", "1"), ("q2r0", "1"), ("q2r1", "2"), ("q2r2", "3"), ("q3", "5")]);
    resp.assert_status(200);
    let html = resp.text();
    assert!(html.contains("Your response has been changed."), "{html}");
    assert!(is_checked(&html, "q0-none") && !is_checked(&html, "q0-1") && is_checked(&html, "q3-5"), "{html}");
    assert_eq!(selected_option(&html, "q2r2").as_deref(), Some("3"));
    seen.push(resp);
    assert_eq!(tallies(&server, id), (vec![vec![1, 0], vec![0, 2, 0], vec![1, 0, 1], vec![0, 1, 0, 0, 1]], 2));

    // A change that breaks a rule comes back with what was entered and the
    // reason, and changes nothing.
    let resp = change(&[("q0", "0"), ("q1", "0"), ("q2r0", "1")]);
    resp.assert_status(422);
    let html = resp.text();
    assert!(html.contains("role=\"alert\"") && is_checked(&html, "q0-0") && is_checked(&html, "q1-0"), "{html}");
    assert!(!html.contains("has been changed"), "{html}");
    let resp = change(&[("q1", "0"), ("q1", "1"), ("q1", "2"), ("q3", "3")]);
    resp.assert_status(422);
    // "No answer" chosen stays chosen when the form comes back.
    let resp = change(&[("q0", ""), ("q3", "3")]);
    resp.assert_status(422);
    assert!(is_checked(&resp.text(), "q0-none") && !is_checked(&resp.text(), "q0-0"), "{}", resp.text());
    let resp = change(&[("q1", "0"), ("q3", "9")]);
    resp.assert_status(422);
    assert!(is_checked(&resp.text(), "q1-0"), "{}", resp.text());
    assert_eq!(tallies(&server, id), (vec![vec![1, 0], vec![0, 2, 0], vec![1, 0, 1], vec![0, 1, 0, 0, 1]], 2));

    // The page's withdraw button asks first, and that withdraws nothing.
    let html = server.post_form(&own, "198.51.100.62", &[("receipt", &a), ("action", "show")]).text();
    assert!(
        html.contains("name=\"action\" value=\"confirm-withdraw\"") && !html.contains("value=\"withdraw\""),
        "{html}"
    );
    let resp = server.post_form(&own, "198.51.100.62", &[("receipt", &a), ("action", "confirm-withdraw")]);
    resp.assert_status(200);
    let html = resp.text();
    assert!(html.contains("name=\"action\" value=\"withdraw\"") && html.contains("cannot be undone"), "{html}");
    seen.push(resp);
    assert_eq!(tallies(&server, id), (vec![vec![1, 0], vec![0, 2, 0], vec![1, 0, 1], vec![0, 1, 0, 0, 1]], 2));

    // Withdraw: the ballot leaves every counter.
    let resp = server.post_form(&own, "198.51.100.62", &[("receipt", &a), ("action", "withdraw")]);
    resp.assert_status(200);
    let html = resp.text();
    assert!(html.contains("Response withdrawn") && html.contains(&format!("data-forget-poll=\"{id}\"")), "{html}");
    seen.push(resp);
    assert_eq!(tallies(&server, id), (vec![vec![1, 0], vec![0, 1, 0], vec![0, 0, 1], vec![0, 1, 0, 0, 0]], 1));

    // Used after withdrawing, unknown, malformed: the prompt, the reason at the field.
    let unknown = "0123-4567-89AB-CDEF-GHJK-MNPQ";
    for (receipt, why) in [
        (a.as_str(), "No response to this poll has this receipt."),
        (unknown, "No response to this poll has this receipt."),
        ("hello", "A receipt has 24 letters and digits."),
        ("", "A receipt has 24 letters and digits."),
    ] {
        for action in ["show", "change", "withdraw"] {
            let resp =
                server.post_form(&own, "198.51.100.63", &[("receipt", receipt), ("action", action), ("q3", "1")]);
            resp.assert_status(403);
            let html = resp.text();
            assert!(html.contains(why) && html.contains("id=\"receipt-error\""), "{receipt} {action}: {html}");
            assert!(html.contains("aria-invalid=\"true\"") && !html.contains("data-auto"), "{html}");
            assert!(!html.contains("name=\"q0\""), "no ballot form without a valid receipt: {html}");
        }
    }
    // Receipt B still counts and still works.
    assert_eq!(tallies(&server, id).1, 1);
    server.post_form(&own, "198.51.100.64", &[("receipt", &b)]).assert_status(200);

    // Another poll's receipt does not open this one's ballot.
    let other = every_type_poll(&server, "public");
    let resp = server.post_form(&format!("/p/{}/ballot", other.id), "198.51.100.64", &[("receipt", &b)]);
    resp.assert_status(403);

    for resp in &seen {
        assert_not_in_headers(resp, &a);
        assert_not_in_headers(resp, &b);
    }
}

#[test]
fn receipts_are_refused_on_a_closed_poll_and_a_poll_without_changes() {
    let server = Server::start();
    // Closed: refused even to look, with its own words (409).
    let poll = every_type_poll(&server, "public");
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q1", "0"), ("q3", "3")]);
    let receipt = receipt_on(&resp.text()).unwrap();
    let own = format!("/p/{}/ballot", poll.id);
    server.post_form(&own, "198.51.100.70", &[("receipt", &receipt)]).assert_status(200);
    server.closing_day_comes(&poll.id);
    for action in ["show", "change", "withdraw"] {
        let resp = server.post_form(
            &own,
            "198.51.100.70",
            &[("receipt", &receipt), ("action", action), ("q1", "1"), ("q3", "1")],
        );
        resp.assert_status(409);
        assert_page_headers(&resp);
        let html = resp.text();
        assert!(html.contains("Voting has closed: responses can no longer be seen"), "{html}");
        assert!(!html.contains("name=\"q0\""), "{html}");
    }
    server.get(&own).assert_status(409);
    assert_eq!(tallies(&server, &poll.id), (vec![vec![0, 0], vec![1, 0, 0], vec![0, 0, 0], vec![0, 0, 1, 0, 0]], 1));
    assert!(!server.get(&format!("/p/{}", poll.id)).text().contains(&format!("href=\"{own}\"")));

    // voteChanges off: no receipt, no way in (403), and the thanks page as before.
    let mut body = valid_poll_json();
    body["resultsPublic"] = json!(true);
    body["voteChanges"] = json!(false);
    let off = server.create_poll(&body);
    let (resp, _) = vote_form(&server, &off.id, &Server::fresh_client_ip(), &[("q0", "1")]);
    resp.assert_status(200);
    let html = resp.text();
    assert!(!html.contains("id=\"receipt\"") && !html.contains("receipt-link") && !html.contains("/ballot"), "{html}");
    assert!(html.contains("id=\"voted\""), "{html}");
    let share = server.get(&format!("/p/{}", off.id)).text();
    assert!(!share.contains("/ballot") && !share.contains("receipt-remembered"), "{share}");
    let own = format!("/p/{}/ballot", off.id);
    let resp = server.get(&own);
    resp.assert_status(403);
    assert!(resp.text().contains("no longer lets people change or withdraw"), "{}", resp.text());
    let resp = server.post_form(&own, "198.51.100.71", &[("receipt", &receipt)]);
    resp.assert_status(403);
    assert!(resp.text().contains("no longer lets people change or withdraw"), "{}", resp.text());
    // Unknown polls are 404 as everywhere.
    server.get("/p/AAAAAAAAAAAAAAAA/ballot").assert_status(404);
}

#[test]
fn an_after_vote_poll_with_receipts_answers_the_vote_with_the_receipt_and_a_way_to_the_results() {
    let server = Server::start();
    let poll = every_type_poll(&server, "afterVote");
    let id = poll.id.as_str();
    let ip = Server::fresh_client_ip();
    let (resp, code) = vote_form(&server, id, &ip, &[("q1", "2"), ("q3", "5")]);
    // No redirect: a voter without script still sees the receipt.
    resp.assert_status(200);
    assert_eq!(resp.header("location"), None);
    let html = resp.text();
    let receipt = receipt_on(&html).unwrap_or_else(|| panic!("{html}"));
    let to = format!("/p/{id}/results?voted={code}");
    assert!(html.contains(&format!("href=\"{to}\"")), "{html}");
    // The results themselves, counting this vote, above the receipt.
    let (shown, kept) =
        (html.find("id=\"result-q1\"").expect("results on the page"), html.find("id=\"receipt\"").unwrap());
    assert!(shown < kept, "the results come first: {html}");
    assert_eq!(table_rows(&html, "result-q1")[2][1], "1", "{html}");
    assert_not_in_headers(&resp, &receipt);
    let results = server.get(&to).text();
    assert!(results.contains("id=\"result-q1\""), "{results}");
    // The same form sent again goes to the results, as before.
    let again = server.post_form(&format!("/p/{id}"), &ip, &[("ballot", &code), ("q1", "2"), ("q3", "5")]);
    again.assert_status(303);
    assert_eq!(again.header("location"), Some(to.as_str()));
    assert_not_in_headers(&again, &receipt);
    // In an explicitly chosen language, the link keeps it.
    let page = server.request("GET", &format!("/p/{id}?lang=it")).xff(&ip).send();
    let fresh = ballot(&page.text());
    let resp = server.post_form(&format!("/p/{id}?lang=it"), &ip, &[("ballot", &fresh), ("q1", "0"), ("q3", "1")]);
    resp.assert_status(200);
    assert!(resp.text().contains(&format!("href=\"/p/{id}/results?voted={fresh}&amp;lang=it\"")), "{}", resp.text());

    // The receipt shows the results too, which nobody else sees yet.
    let own = server.post_form(&format!("/p/{id}/ballot"), "198.51.100.80", &[("receipt", &receipt)]);
    own.assert_status(200);
    assert!(own.text().contains("id=\"result-q1\""), "{}", own.text());
    assert!(!server.get(&format!("/p/{id}/results")).text().contains("id=\"result-q1\""));
    // A private poll's ballot page shows no results.
    let private = every_type_poll(&server, "private");
    let (resp, _) = vote_form(&server, &private.id, &Server::fresh_client_ip(), &[("q1", "2"), ("q3", "5")]);
    let r = receipt_on(&resp.text()).unwrap();
    let own = server.post_form(&format!("/p/{}/ballot", private.id), "198.51.100.81", &[("receipt", &r)]);
    own.assert_status(200);
    assert!(!own.text().contains("id=\"result-q1\"") && is_checked(&own.text(), "q3-5"), "{}", own.text());

    // Withdrawn with its receipt, the ballot's form no longer opens the
    // results (issue 24, item 8), nor votes again; another voter's still does.
    let withdraw = server.post_form(&format!("/p/{id}/ballot"), &ip, &[("receipt", &receipt), ("action", "withdraw")]);
    withdraw.assert_status(200);
    let page = server.get(&to);
    assert!(
        !page.text().contains("id=\"result-q1\""),
        "a withdrawn vote's link must not open the results: {}",
        page.text()
    );
    let again = server.post_form(&format!("/p/{id}"), &ip, &[("ballot", &code), ("q1", "2"), ("q3", "5")]);
    assert!(again.header("location").is_none() && !again.text().contains("id=\"result-q1\""), "{}", again.text());
    assert!(server.get(&format!("/p/{id}/results?voted={fresh}")).text().contains("id=\"result-q1\""));
}

/// A voter back at an `afterVote` poll brings the proof they hold, their
/// receipt, to the results page (a POST body, as on the ballot page): the
/// results open, open or closed, in every language (the switcher posts the
/// receipt along); a wrong or withdrawn receipt opens nothing and is told at
/// its field. The share page leads there: a link for a receipt typed, and
/// the script's block for a kept one. The results page refused them all
/// ("Answer the poll to see the results").
#[test]
fn a_voter_back_with_the_receipt_sees_the_after_vote_results() {
    let server = Server::start();
    let poll = every_type_poll(&server, "afterVote");
    let (id, ip) = (poll.id.as_str(), Server::fresh_client_ip());
    let results = format!("/p/{id}/results");
    let share = server.get(&format!("/p/{id}")).text();
    assert!(
        share.contains(&format!(r#"<a href="{results}">Already answered? See the results with your receipt</a>"#)),
        "{share}"
    );
    assert!(share.contains(&format!(r#"id="voter-results" data-poll="{id}" hidden"#)), "{share}");
    let (resp, _) = vote_form(&server, id, &ip, &[("q1", "2"), ("q3", "5")]);
    let receipt = receipt_on(&resp.text()).unwrap();
    // Later: the results page offers the receipt's field beside the way to vote.
    let prompt = server.get(&results).text();
    assert!(
        !prompt.contains("id=\"result-q1\"") && prompt.contains(r#"id="voter-receipt" name="receipt""#),
        "{prompt}"
    );
    let shown = server.post_form(&format!("{results}?lang=fr"), "198.51.100.90", &[("receipt", &receipt)]);
    shown.assert_status(200);
    assert_not_in_headers(&shown, &receipt);
    let html = shown.text();
    assert_eq!(table_rows(&html, "result-q1")[2][1], "1", "{html}");
    assert!(
        html.contains(&format!(r#"<input type="hidden" name="receipt" value="{receipt}">"#)),
        "the switcher posts it: {html}"
    );
    // Typed as a person types it, lower case with spaces.
    let typed = receipt.to_lowercase().replace('-', " ");
    assert!(server.post_form(&results, "198.51.100.90", &[("receipt", &typed)]).text().contains("id=\"result-q1\""));
    for (bad, why) in [("nonsense", "not a receipt"), ("AAAA-AAAA-AAAA-AAAA-AAAA-AAAA", "not a receipt of this poll")] {
        let refused = server.post_form(&results, "198.51.100.90", &[("receipt", bad)]);
        refused.assert_status(403);
        let html = refused.text();
        assert!(!html.contains("id=\"result-q1\"") && html.contains("id=\"voter-receipt-error\""), "{why}: {html}");
        assert!(html.contains(&format!(r#"value="{bad}""#)), "{why}: kept to mend: {html}");
    }
    // Closed, the receipt still proves the vote.
    server.patch_json(id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert!(server.post_form(&results, "198.51.100.90", &[("receipt", &receipt)]).text().contains("id=\"result-q1\""));
    server.patch_json(id, &poll.token, &json!({"closed": false})).assert_status(200);
    // Withdrawn, it opens nothing.
    server
        .post_form(&format!("/p/{id}/ballot"), &ip, &[("receipt", &receipt), ("action", "withdraw")])
        .assert_status(200);
    let gone = server.post_form(&results, "198.51.100.90", &[("receipt", &receipt)]);
    assert!(gone.status == 403 && !gone.text().contains("id=\"result-q1\""), "{}", gone.text());
    // A poll that gives no receipts offers no field to type one in.
    let mut body = with(valid_poll_json(), "/voteChanges", json!(false));
    body.as_object_mut().unwrap().remove("resultsPublic");
    body["resultsVisibility"] = json!("afterVote");
    let plain = server.create_poll(&body);
    assert!(!server.get(&format!("/p/{}", plain.id)).text().contains("See the results with your receipt"));
    assert!(!server.get(&format!("/p/{}/results", plain.id)).text().contains("voter-receipt"));
}

#[test]
fn vote_changes_is_set_in_the_creation_form_and_on_the_admin_page() {
    let server = Server::start();
    let html = server.get("/?lang=it").text();
    assert!(html.contains("id=\"f-vote-changes\" name=\"voteChanges\" value=\"1\" checked"), "the default: {html}");
    assert!(html.contains("name=\"voteChangesOffered\""), "{html}");
    let create = |checked: bool| {
        let code = once(&server);
        let mut fields = vec![
            ("once", code.as_str()),
            ("title", "Ricevute"),
            ("lang", "it"),
            ("expiry", "7"),
            ("results", "public"),
            ("voteChangesOffered", "1"),
            ("q0", "Sì?"),
            ("q0o0", "Sì"),
            ("q0o1", "No"),
        ];
        if checked {
            fields.push(("voteChanges", "1"));
        }
        let resp = server.post_form("/?lang=it", "198.51.100.82", &fields);
        resp.assert_status(201);
        let text = resp.text();
        let id = text.split("/p/").nth(1).unwrap().split(['"', '/', '?', '<']).next().unwrap().to_owned();
        let token = text.split("admin#").nth(1).unwrap().split(['"', '<']).next().unwrap().to_owned();
        (id, token)
    };
    let (on, _) = create(true);
    assert_eq!(server.get(&format!("/api/polls/{on}")).json()["voteChanges"], true);
    let (id, token) = create(false);
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["voteChanges"], false);

    let admin = format!("/p/{id}/admin");
    let dash = server.post_form(&admin, "198.51.100.82", &[("token", &token)]).text();
    assert!(
        dash.contains("id=\"a-vote-changes\" name=\"voteChanges\" value=\"1\" aria-describedby"),
        "unchecked: {dash}"
    );
    let save = |pairs: &[(&str, &str)]| {
        let mut fields = vec![("token", token.as_str()), ("action", "settings"), ("results", "public")];
        fields.extend_from_slice(pairs);
        server.post_form(&admin, "198.51.100.82", &fields)
    };
    // Done: the admin page again, by a GET (tests/web/admin.rs).
    save(&[("voteChangesOffered", "1"), ("voteChanges", "1")]).assert_status(303);
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["voteChanges"], true);
    // A form without the box (an older page) leaves the setting as it is.
    save(&[]).assert_status(303);
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["voteChanges"], true);
    save(&[("voteChangesOffered", "1")]).assert_status(303);
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["voteChanges"], false);
}

/// Changes count against the vote throttle like votes; a refused change
/// comes back with the changes entered (429, Retry-After), and a refused
/// withdrawal with the ballot, so nothing is lost.
#[test]
fn a_throttled_change_keeps_the_changes_on_the_page() {
    let polld = Polld::start(&["--vote-limit", "2", "--trusted-proxy", "127.0.0.1/8"]);
    let resp = Request::new(&polld.addr, "POST", "/api/polls")
        .json(&with(valid_poll_json(), "/resultsPublic", json!(true)))
        .send();
    let poll = Created::from_response(&resp);
    let (path, own) = (format!("/p/{}", poll.id), format!("/p/{}/ballot", poll.id));
    let post = |path: &str, pairs: &[(&str, &str)]| {
        Request::new(&polld.addr, "POST", path).xff("198.51.100.40").form(pairs).send()
    };
    let page = Request::new(&polld.addr, "GET", &path).xff("198.51.100.40").send();
    let thanks = post(&path, &[("q0", "0"), ("ballot", &ballot(&page.text()))]);
    assert_eq!(thanks.status, 200, "{}", thanks.describe());
    let receipt = receipt_on(&thanks.text()).expect("a receipt");
    // The vote took one of two; a change takes the second.
    assert_eq!(post(&own, &[("receipt", &receipt), ("action", "change"), ("q0", "1")]).status, 200);
    let refused = post(&own, &[("receipt", &receipt), ("action", "change"), ("q0", "2")]);
    assert_eq!(refused.status, 429, "{}", refused.describe());
    assert!(refused.header("retry-after").is_some());
    let html = refused.text();
    assert!(is_checked(&html, "q0-2") && !is_checked(&html, "q0-1"), "the change is kept: {html}");
    let refused = post(&own, &[("receipt", &receipt), ("action", "withdraw")]);
    assert_eq!(refused.status, 429, "{}", refused.describe());
    assert!(is_checked(&refused.text(), "q0-1"), "the ballot as stored: {}", refused.text());
    let api = Request::new(&polld.addr, "GET", &format!("/api/polls/{}/results", poll.id)).send().json();
    assert_eq!(api["totalResponses"], 1, "{api}");
    assert_eq!(api["questions"][0]["options"][1]["count"], 1, "the first change counts, the refused one not: {api}");
}

/// Without script, no sentence promises what only the script does: that
/// this browser keeps the receipt, that an invite link fills the code in.
/// Both are in the page, hidden, for the script to show.
#[test]
fn without_script_no_sentence_promises_what_only_the_script_does() {
    let server = Server::start();
    let poll = server.create_public();
    let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q0", "0")]);
    let html = resp.text();
    assert!(html.contains("It is shown only now: keep a copy."), "{html}");
    let kept = "This browser also remembers it for this poll";
    assert!(html.contains(&format!(r#"<span id="receipt-kept" hidden> {kept}"#)), "{html}");
    assert_eq!(html.matches(kept).count(), 1, "{html}");
    let body = with(valid_poll_json(), "/duplicateCheck", json!("invite"));
    let coded = server.create_poll(&body);
    let html = server.get(&format!("/p/{}?lang=fr", coded.id)).text();
    let fills = "Un lien d’invitation le remplit pour vous.";
    assert!(html.contains(&format!("<span data-script-only hidden> {fills}</span>")), "{html}");
    assert_eq!(html.matches(fills).count(), 1, "{html}");
}
