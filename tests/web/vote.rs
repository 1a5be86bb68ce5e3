//! Voting on the share page: a fresh one-time ballot per vote, closed and
//! expired polls refuse, a changed or misspelt form counts nothing, a vote
//! whose sender hung up, and no voter address kept.

use super::*;

#[test]
fn a_vote_needs_a_fresh_ballot_and_counts_once() {
    let server = Server::start();
    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    let ip = "192.0.2.10";
    let page = server.request("GET", &path).xff(ip).send();
    let token = ballot(&page.text());

    // Without a ballot, or with one for another poll: not counted, choices kept.
    let resp = server.post_form(&path, ip, &[("q0", "1")]);
    assert_eq!(resp.status, 409);
    assert!(resp.text().contains("checked"), "choice kept");
    let other = public_poll(&server);
    let other_token = ballot(&server.get(&format!("/p/{}", other.id)).text());
    assert_eq!(server.post_form(&path, ip, &[("q0", "1"), ("ballot", &other_token)]).status, 409);
    // Nothing chosen, or a choice that does not exist: refused, ballot intact.
    assert_eq!(server.post_form(&path, ip, &[("ballot", &token)]).status, 422);
    assert_eq!(server.post_form(&path, ip, &[("q0", "7"), ("ballot", &token)]).status, 422);
    assert_eq!(server.post_form(&path, ip, &[("q0", "x"), ("ballot", &token)]).status, 400);
    assert_eq!(total(&server, &poll), 0);

    let resp = server.post_form(&path, ip, &[("q0", "1"), ("q1", "0"), ("ballot", &token)]);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    assert!(resp.text().contains("Your response has been counted."));
    assert!(resp.text().contains(&format!("data-poll=\"{}\"", poll.id)));
    assert_eq!(total(&server, &poll), 1);

    // The same form again (a replay): refused.
    let replay = server.post_form(&path, "192.0.2.99", &[("q0", "1"), ("ballot", &token)]);
    assert_eq!(replay.status, 409);
    assert_eq!(total(&server, &poll), 1);

    // A second person, a partial answer.
    let token2 = ballot(&server.get(&path).text());
    assert_eq!(server.post_form(&path, ip, &[("q0", "1"), ("ballot", &token2)]).status, 200);
    let results = server.get(&format!("/p/{}/results", poll.id));
    assert_eq!(results.status, 200);
    let text = results.text();
    assert!(text.contains("2 responses"), "{text}");
    assert!(text.contains("<td class=\"num\">2</td><td class=\"num\">100%</td>"), "{text}");
    let api = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(api["questions"][0]["options"][1]["count"], 2);
    assert_eq!(api["questions"][1]["answered"], 1);

    // A vote sent from another site's page is refused.
    let token3 = ballot(&server.get(&path).text());
    let resp = server
        .request("POST", &path)
        .header("Sec-Fetch-Site", "cross-site")
        .form(&[("q0", "0"), ("ballot", &token3)])
        .send();
    assert_eq!(resp.status, 403);
    assert_eq!(total(&server, &poll), 2);
}

#[test]
fn closed_and_expired_polls_accept_nothing() {
    let server = Server::start();
    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    let token = ballot(&server.get(&path).text());
    assert_eq!(server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).status, 200);
    let page = server.get(&path);
    assert_eq!(page.status, 200);
    assert!(page.text().contains("This poll is closed"));
    assert!(!page.text().contains("name=\"ballot\""));
    let resp = server.post_form(&path, "192.0.2.20", &[("q0", "0"), ("ballot", &token)]);
    assert_eq!(resp.status, 409);
    assert!(resp.text().contains("This poll is closed"));
    assert_eq!(total(&server, &poll), 0);

    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    let token = ballot(&server.get(&path).text());
    server.exec_sql("UPDATE sealed_polls SET expires_on = ?1 WHERE id = ?2", [today(), poll.id.clone()]);
    assert_eq!(server.get(&path).status, 404);
    assert_eq!(server.post_form(&path, "192.0.2.21", &[("q0", "0"), ("ballot", &token)]).status, 404);
    assert_eq!(server.get(&format!("{path}/results")).status, 404);
}

#[test]
fn voters_addresses_are_neither_stored_nor_logged() {
    // With the day's limit of a network poll on (three here), so that its
    // refusal is among what is looked for.
    let server = Server::builder().arg(NETWORK_DAY_FLAG).arg("3").start();
    let poll = public_poll(&server);
    let ip = "203.0.113.177";
    let path = format!("/p/{}", poll.id);
    for expected in [200, 200, 200, 429] {
        let page = server.request("GET", &path).xff(ip).send();
        assert_eq!(server.post_form(&path, ip, &[("q0", "2"), ("ballot", &ballot(&page.text()))]).status, expected);
    }
    server.post_form(
        "/",
        ip,
        &[("title", "x"), ("lang", "en"), ("expiry", "7"), ("q0", "F"), ("q0o0", "a"), ("q0o1", "b")],
    );
    server.post_form(&format!("{path}/admin"), ip, &[("token", "wrong")]);
    assert_eq!(total(&server, &poll), 3);
    let dir = server.dir().to_path_buf();
    let mut server = server;
    server.terminate();
    let octets: Vec<u8> = ip.split('.').map(|o| o.parse().unwrap()).collect();
    for needle in [ip.as_bytes().to_vec(), octets, hex(&[203, 0, 113, 177]).into_bytes()] {
        assert_not_in_db(&dir, &needle, "voter address");
        assert!(!contains_bytes(&server.log_bytes(), &needle), "address in the logs");
    }
    assert_not_in_db(&dir, poll.token.as_bytes(), "admin token");
}

/// Issue 13, item 6: a vote form that answers a question twice, or names a
/// question the poll does not have, comes back with a message; nothing is
/// counted, and the form sent as the page made it still works.
#[test]
fn a_changed_vote_form_comes_back_and_counts_nothing() {
    let server = Server::start();
    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    for changed in [&[("q0", "0"), ("q0", "1")][..], &[("q0", "0"), ("q99", "1")], &[("q0", "0"), ("extra", "x")]] {
        let token = ballot(&server.get(&path).text());
        let mut pairs = changed.to_vec();
        pairs.push(("ballot", &token));
        let resp = server.post_form(&path, &Server::fresh_client_ip(), &pairs);
        assert_eq!(resp.status, 422, "{changed:?}: {}", resp.describe());
        assert!(resp.text().contains("This form was changed"), "{changed:?}: {}", resp.text());
        assert!(ballot_code(&resp.text()).is_some(), "the form comes back, ready to send");
        // The same token still works: a refused form uses nothing up.
        let again = server.post_form(&path, &Server::fresh_client_ip(), &[("q0", "1"), ("ballot", &token)]);
        assert_eq!(again.status, 200, "{}", again.describe());
    }
    assert_eq!(total(&server, &poll), 3, "only the three forms sent as made were counted");
}

/// Switching language mid-vote without script: the share page's languages
/// are buttons of the vote form (`form`, `formaction` the page in that
/// language, `name=lang`); what they send comes back in the new language
/// with the choices made (and an invite code typed), voting nothing and
/// spending nothing: the same form then votes, once. They were links, and
/// the page came back blank.
#[test]
fn switching_language_mid_vote_keeps_the_choices_and_counts_nothing() {
    let server = Server::start();
    let mut body = with(valid_poll_json(), "/resultsPublic", json!(true));
    body["questions"] = json!([
        {"type": "single", "label": "Where?", "options": ["Park", "Lake"]},
        {"type": "multiple", "label": "What?", "options": ["Nuts", "Fruit", "Cake"], "maxChoices": 2},
        {"type": "ranked", "label": "Order?", "options": ["Chess", "Go"]},
    ]);
    let poll = server.create_poll(&body);
    let path = format!("/p/{}", poll.id);
    let page = server.get(&path).text();
    let button = format!(
        r#"<button type="submit" form="vote-form" formaction="{path}?lang=fr" formnovalidate name="lang" value="fr" lang="fr">Français</button>"#
    );
    assert!(page.contains(&button) && page.contains(r#"<form class="vote" id="vote-form""#), "{page}");
    // Enter in the form presses its first submit button in the page: one
    // that votes, before the switcher's.
    let default = page.find(r#"<button type="submit" form="vote-form" hidden></button>"#);
    assert!(default.is_some_and(|at| page.find("formaction=").is_some_and(|switch| at < switch)), "{page}");
    let token = ballot(&page);
    let ip = Server::fresh_client_ip();
    let choices = [("ballot", token.as_str()), ("q0", "1"), ("q1", "0"), ("q1", "2"), ("q2r1", "1")];
    let switch = [&choices[..], &[("lang", "fr")]].concat();
    let resp = server.post_form(&format!("{path}?lang=fr"), &ip, &switch);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    assert_eq!(html_lang(&resp), "fr");
    let html = resp.text();
    assert!(["q0-1", "q1-0", "q1-2"].iter().all(|id| is_checked(&html, id)) && !is_checked(&html, "q1-1"), "{html}");
    assert_eq!(selected_option(&html, "q2r1").as_deref(), Some("1"), "{html}");
    assert!(html.contains(&button.replace("fr\">Français", "fr\" aria-current=\"page\">Français")), "{html}");
    assert_eq!(total(&server, &poll), 0, "nothing counted");
    assert_eq!(server.post_form(&path, &ip, &choices).status, 200, "the form's code is unspent");
    assert_eq!(server.post_form(&path, &ip, &choices).status, 409, "and counts once");
    assert_eq!(total(&server, &poll), 1);
    // On an invite-only poll the code typed comes back too.
    let invite = server.create_poll(&with(valid_poll_json(), "/duplicateCheck", json!("invite")));
    let path = format!("/p/{}", invite.id);
    let token = ballot(&server.get(&path).text());
    let fields = [("ballot", token.as_str()), ("invite", "ABCD-EFGH"), ("q0", "0"), ("lang", "de")];
    let resp = server.post_form(&format!("{path}?lang=de"), &ip, &fields);
    assert_eq!((resp.status, html_lang(&resp)), (200, "de".to_owned()));
    assert!(resp.text().contains(r#"name="invite" value="ABCD-EFGH""#) && is_checked(&resp.text(), "q0-0"));
}

/// Issue 24, item 8: a number on the vote form has one spelling, the one
/// the form sends; `+1`, `01`, ` 1` and the like are refused as malformed
/// (400) and count nothing, where they counted as option 1 before.
#[test]
fn a_vote_forms_numbers_have_one_spelling() {
    let server = Server::start();
    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    for bad in ["+1", "01", "00", " 1", "1 ", "1.0", "0x1", "1e0", "\u{ff11}", "-0"] {
        let token = ballot(&server.get(&path).text());
        let resp = server.post_form(&path, &Server::fresh_client_ip(), &[("q0", bad), ("ballot", &token)]);
        assert_eq!(resp.status, 400, "{bad:?}: {}", resp.describe());
        // The same token still works: a refused form uses nothing up.
        let again = server.post_form(&path, &Server::fresh_client_ip(), &[("q0", "1"), ("ballot", &token)]);
        assert_eq!(again.status, 200, "{}", again.describe());
    }
    let results = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(results["questions"][0]["options"][1]["count"], 10, "only the canonical \"1\" counted: {results}");
}

/// Sends `request` and resets the connection at once (SO_LINGER 0), as a
/// client that hangs up before the answer.
fn send_and_hang_up(addr: &str, request: &[u8]) {
    use std::io::Write;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        #[allow(deprecated)] // set_zero_linger is newer than the tokio this test builds with everywhere
        socket.set_linger(Some(std::time::Duration::ZERO)).unwrap();
        socket.connect(addr.parse().unwrap()).await.unwrap()
    });
    let mut stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.write_all(request).unwrap();
    drop(stream);
}

/// Issue 24, item 2: a vote's form token opened `afterVote` results, and an
/// honest voter's token was spent, when the client hung up before the
/// answer: the token was redeemed before the write and given back only in
/// the answer, which the server drops with the connection. Now it counts
/// once its ballot is committed and is free again if it is not, whoever
/// still listens.
#[test]
fn a_vote_whose_sender_hung_up_opens_no_results_and_spends_no_form() {
    let server = Server::start();
    let mut body = with(valid_poll_json(), "/duplicateCheck", json!("invite"));
    body["resultsVisibility"] = json!("afterVote");
    body["voteChanges"] = json!(false);
    let poll = server.create_poll(&body);
    let (share, results) = (format!("/p/{}", poll.id), format!("/p/{}/results", poll.id));
    let tries = 3;
    let issued = server
        .request("POST", &format!("/api/polls/{}/invites", poll.id))
        .bearer(&poll.token)
        .json(&json!({"count": tries}))
        .send();
    issued.assert_status(201);
    let codes: Vec<String> =
        issued.json()["invites"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap().to_owned()).collect();
    let shows_results =
        |token: &str| server.get(&format!("{results}?voted={token}")).text().contains("id=\"result-q0\"");
    for (i, code) in codes.iter().enumerate() {
        let xff = format!("198.51.100.{}", 100 + i);
        let token = ballot(&server.request("GET", &share).xff(&xff).send().text());
        // A code of the right shape that was never issued: refused in the
        // ballot's transaction, after the form was taken.
        let made_up = "0000-0000-0000-0000-0000";
        let request = server
            .request("POST", &share)
            .xff(&xff)
            .form(&[("ballot", token.as_str()), ("q0", "1"), ("invite", made_up)])
            .to_bytes();
        // Another connection holds the write lock, as a long write would:
        // the vote waits in the writer's queue while its sender hangs up,
        // so the server has long dropped the answer when the write fails.
        let lock = hold_write_lock(server.dir());
        send_and_hang_up(&server.addr, &request);
        std::thread::sleep(std::time::Duration::from_millis(150));
        assert!(!shows_results(&token), "try {i}: results for a vote not yet stored");
        lock.release();
        std::thread::sleep(std::time::Duration::from_millis(150));
        assert!(!shows_results(&token), "try {i}: results for a vote that was refused");
        // The same form, with a real code, is counted: nothing was lost.
        let resp = server.post_form(&share, &xff, &[("ballot", &token), ("q0", "1"), ("invite", code)]);
        assert_eq!(resp.status, 303, "try {i}: {}", resp.describe());
        assert!(shows_results(&token), "try {i}: the counted vote opens the results");
    }
    let api = server.get_auth(&format!("/api/polls/{}/results", poll.id), &poll.token).json();
    assert_eq!(api["totalResponses"], tries, "{api}");
}

/// The page after a vote shows the results where the voter may see them
/// (public, or after voting), this vote counted; on a private poll, or one
/// whose results wait for the close, it shows none.
#[test]
fn the_page_after_a_vote_shows_the_results_the_voter_may_see() {
    let server = Server::start();
    for (visibility, shown) in [("public", true), ("afterVote", true), ("private", false), ("afterClose", false)] {
        let mut body = valid_poll_json();
        body.as_object_mut().unwrap().remove("resultsPublic");
        body["resultsVisibility"] = json!(visibility);
        if visibility == "afterClose" {
            body["closesOn"] = json!(date_from_today(3));
        }
        let poll = server.create_poll(&body);
        let (resp, _) = vote_form(&server, &poll.id, &Server::fresh_client_ip(), &[("q0", "1")]);
        resp.assert_status(200);
        let html = resp.text();
        assert_eq!(html.contains("id=\"result-q0\""), shown, "{visibility}: {html}");
        if shown {
            assert_eq!(table_rows(&html, "result-q0")[1][1], "1", "{visibility}: this vote is counted: {html}");
        }
    }
}
