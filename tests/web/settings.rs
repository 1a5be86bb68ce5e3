//! Poll settings on the pages: results after voting or after closing, the
//! closing day, shuffled options, and the settings set in the creation
//! form and on the admin page.

use super::*;

#[test]
fn a_voter_sees_after_vote_results_right_after_voting_and_nobody_else_does() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsVisibility"] = json!("afterVote");
    // Without receipts the vote is answered with a redirect to the results
    // (with receipts, see the receipts' tests).
    body["voteChanges"] = json!(false);
    let poll = server.create_poll(&body);
    let results = format!("/p/{}/results", poll.id);

    // Before voting: why not, and the admin key form.
    let page = server.get(&results);
    page.assert_status(200);
    assert!(page.text().contains("right after they vote"), "{}", page.text());
    assert!(!page.text().contains("result-q0"));

    let (resp, code) = vote_form(&server, &poll.id, "198.51.100.20", &[("q0", "1")]);
    resp.assert_status(303);
    let to = resp.header("location").unwrap().to_owned();
    assert_eq!(to, format!("{results}?voted={code}"));
    let page = server.get(&to);
    page.assert_status(200);
    let html = page.text();
    assert!(html.contains("id=\"voted\"") && html.contains("your response is counted"), "{html}");
    assert!(html.contains("id=\"result-q0\""), "{html}");
    assert_page_headers(&page);
    // The language switcher keeps the voter's access.
    let german = format!("{results}?voted={code}&amp;lang=de");
    assert!(html.contains(&format!("href=\"{german}\"")), "{html}");
    let page = server.get(&german.replace("&amp;", "&"));
    assert!(page.text().contains("id=\"result-q0\"") && page.text().contains("lang=\"de\""), "{}", page.text());

    // The same form sent again (a double click) leads to the results too.
    let again = server.post_form(&format!("/p/{}", poll.id), "198.51.100.20", &[("ballot", &code), ("q0", "1")]);
    again.assert_status(303);
    assert_eq!(again.header("location"), Some(to.as_str()));
    // A code sent with spaces around it is read as the box reads it, and
    // the address carries it clean.
    let page = server.request("GET", &format!("/p/{}", poll.id)).xff("198.51.100.23").send();
    let spaced = format!(" {} ", ballot(&page.text()));
    let resp = server.post_form(&format!("/p/{}", poll.id), "198.51.100.23", &[("ballot", &spaced), ("q0", "0")]);
    resp.assert_status(303);
    assert_eq!(resp.header("location"), Some(format!("{results}?voted={}", spaced.trim()).as_str()));
    // Voters who do not yet see results are told on the share page when they will.
    let share = server.get(&format!("/p/{}", poll.id)).text();
    assert!(share.contains("right after they vote"), "{share}");

    // A code that was never redeemed, or is made up, shows nothing.
    let fresh = ballot(&server.get(&format!("/p/{}", poll.id)).text());
    for forged in [fresh.as_str(), "AAAA", &code[..code.len() - 1]] {
        let page = server.get(&format!("{results}?voted={forged}"));
        assert!(!page.text().contains("result-q0"), "results shown for {forged}");
    }
    // Another poll's redeemed code does not open this one.
    let other = server.create_poll(&body);
    let page = server.get(&format!("/p/{}/results?voted={code}", other.id));
    assert!(!page.text().contains("result-q0"));
}

#[test]
fn after_close_results_open_when_the_poll_closes() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["resultsVisibility"] = json!("afterClose");
    body["closesOn"] = json!(date_from_today(3));
    let poll = server.create_poll(&body);
    let results = format!("/p/{}/results", poll.id);
    let (resp, _) = vote_form(&server, &poll.id, "198.51.100.21", &[("q0", "0")]);
    resp.assert_status(200);
    assert!(!resp.text().contains(&format!("href=\"{results}\"")), "a link to withheld results");
    let html = server.get(&results).text();
    assert!(!html.contains("result-q0") && html.contains("once voting has closed"), "{html}");
    // A wrong key is refused, and the page still says when results show.
    let form = form_urlencoded::Serializer::new(String::new()).append_pair("token", "not-the-key").finish();
    let wrong = server.post_bytes(&results, Some("application/x-www-form-urlencoded"), form.as_bytes());
    wrong.assert_status(403);
    let html = wrong.text();
    assert!(html.contains("once voting has closed") && !html.contains("result-q0"), "{html}");
    // The share page names the closing day.
    let share = server.get(&format!("/p/{}?lang=de", poll.id)).text();
    assert!(share.contains("Abstimmung endet am"), "{share}");
    server.closing_day_comes(&poll.id);
    let html = server.get(&results).text();
    assert!(html.contains("id=\"result-q0\""), "{html}");
    let share = server.get(&format!("/p/{}", poll.id)).text();
    assert!(share.contains("Voting closed on") && !share.contains("name=\"ballot\""), "{share}");
}

#[test]
fn shuffled_options_change_order_between_views_but_keep_their_values() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["shuffleOptions"] = json!(true);
    body["questions"] = questions(1, 6);
    let poll = server.create_poll(&body);
    // The options' radios, in page order (not the last, "No answer", nor
    // the fieldset's own `q0-set`).
    let order = |html: &str| -> Vec<String> {
        html.match_indices("id=\"q0-")
            .map(|(i, _)| html[i + 7..].split('"').next().unwrap().to_owned())
            .filter(|id| id.bytes().all(|b| b.is_ascii_digit()))
            .collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..20 {
        let o = order(&server.get(&format!("/p/{}", poll.id)).text());
        let mut sorted = o.clone();
        sorted.sort();
        assert_eq!(sorted, ["0", "1", "2", "3", "4", "5"], "every option once: {o:?}");
        seen.insert(o);
    }
    // 20 views of 720 orders: all alike has a chance of 720^-19.
    assert!(seen.len() > 1, "the order never changed");
    // Without the setting the order is the poll's.
    body["shuffleOptions"] = json!(false);
    let plain = server.create_poll(&body);
    assert_eq!(order(&server.get(&format!("/p/{}", plain.id)).text()), ["0", "1", "2", "3", "4", "5"]);
}

#[test]
fn the_creation_form_and_the_admin_page_set_the_settings() {
    let server = Server::start();
    let page = server.get("/?lang=fr");
    let html = page.text();
    for id in ["f-results-aftervote", "f-results-afterclose", "f-closes-on", "f-shuffle"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    // The creation form with the settings, closing `closes`.
    let create = |closes: &str| {
        let code = once(&server);
        let fields = [
            ("once", code.as_str()),
            ("title", "Réglages"),
            ("lang", "fr"),
            ("expiry", "7"),
            ("results", "afterClose"),
            ("closes", closes),
            ("shuffle", "1"),
            ("q0", "Oui ?"),
            ("q0o0", "Oui"),
            ("q0o1", "Non"),
        ];
        server.post_form("/?lang=fr", "198.51.100.22", &fields)
    };
    let resp = create(&date_from_today(30));
    resp.assert_status(422);
    assert!(resp.text().contains("doit précéder le jour d’effacement"), "{}", resp.text());
    assert!(resp.text().contains("aria-invalid=\"true\""));
    // The form came back with what was typed.
    assert!(resp.text().contains(&format!("value=\"{}\"", date_from_today(30))));
    let resp = create(&date_from_today(6));
    resp.assert_status(201);
    let id = resp.text().split("/p/").nth(1).unwrap().split(['"', '/', '?', '<']).next().unwrap().to_owned();
    let token = resp.text().split("admin#").nth(1).unwrap().split(['"', '<']).next().unwrap().to_owned();
    let p = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(
        (&p["resultsVisibility"], &p["closesOn"], &p["shuffleOptions"]),
        (&json!("afterClose"), &json!(date_from_today(6)), &json!(true))
    );

    // The admin page: the settings form shows them and changes them.
    let admin = format!("/p/{id}/admin");
    let dash = server.post_form(&admin, "198.51.100.22", &[("token", &token)]).text();
    assert!(dash.contains("id=\"a-closes-on\"") && dash.contains(&date_from_today(6)), "{dash}");
    let resp = server.post_form(
        &admin,
        "198.51.100.22",
        &[("token", &token), ("action", "settings"), ("results", "public"), ("closes", "")],
    );
    // Done: the admin page again, by a GET (tests/web/admin.rs).
    resp.assert_status(303);
    let p = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(
        (&p["resultsVisibility"], &p["closesOn"], &p["shuffleOptions"]),
        (&json!("public"), &json!(null), &json!(false))
    );
    let resp = server.post_form(
        &admin,
        "198.51.100.22",
        &[("token", &token), ("action", "settings"), ("results", "private"), ("closes", &today())],
    );
    resp.assert_status(422);
    assert!(resp.text().contains("href=\"#a-closes-on\""), "{}", resp.text());
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["resultsVisibility"], "public");

    // Once its closing day has come, the form shows that day and saving
    // other settings keeps it: the poll stays closed.
    let closes = date_from_today(3);
    let save = |closes: &str, results: &str| {
        let fields = [("token", token.as_str()), ("action", "settings"), ("results", results), ("closes", closes)];
        server.post_form(&admin, "198.51.100.22", &fields)
    };
    save(&closes, "afterClose").assert_status(303);
    server.closing_day_comes(&id);
    let resp = save(&today(), "afterVote");
    resp.assert_status(303);
    let p = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(
        (&p["resultsVisibility"], &p["closesOn"], &p["status"]),
        (&json!("afterVote"), &json!(today()), &json!("closed"))
    );
}
