//! The vote budget per client and poll, seen from the page: the throttle,
//! its refill, the pace of a heavy poll, the duplicate check `none`, and
//! votes from another site refused. The rules themselves are unit-tested in
//! src/app/; here polld runs with the limits a test needs (`Polld`).

use super::*;

/// Votes option 0 of q0 on the share page at `path` as client `ip` (GET
/// for the form's token, then POST).
fn vote_from(polld: &Polld, path: &str, ip: &str) -> Response {
    let page = Request::new(&polld.addr, "GET", path).xff(ip).send();
    Request::new(&polld.addr, "POST", path).xff(ip).form(&[("q0", "0"), ("ballot", &ballot(&page.text()))]).send()
}

#[test]
fn the_vote_throttle_limits_each_client_per_poll() {
    let polld = Polld::start(&["--vote-limit", "3", "--trusted-proxy", "127.0.0.1/8"]);
    let resp = Request::new(&polld.addr, "POST", "/api/polls")
        .json(&with(valid_poll_json(), "/resultsPublic", json!(true)))
        .send();
    let poll = Created::from_response(&resp);
    let path = format!("/p/{}", poll.id);
    let vote = |ip: &str| vote_from(&polld, &path, ip);
    for _ in 0..3 {
        assert_eq!(vote("198.51.100.7").status, 200);
    }
    let refused = vote("198.51.100.7");
    assert_eq!(refused.status, 429, "{}", refused.describe());
    assert!(refused.header("retry-after").is_some());
    assert!(refused.text().contains("checked"), "choices kept");
    assert_eq!(vote("198.51.100.8").status, 200, "another client");
    let api = Request::new(&polld.addr, "GET", &format!("/api/polls/{}/results", poll.id)).send().json();
    assert_eq!(api["totalResponses"], 4);
}

/// Issue 24, item 4: a `none` poll (a room behind one address) takes ten
/// times the throttle's budget from one client group, then 429 like any
/// other: one client can no longer hammer a heavy poll without end.
#[test]
fn a_poll_without_duplicate_check_takes_ten_budgets_from_one_client_then_refuses() {
    let polld = Polld::start(&["--vote-limit", "2", "--trusted-proxy", "127.0.0.1/8"]);
    let body = with(with(valid_poll_json(), "/resultsPublic", json!(true)), "/duplicateCheck", json!("none"));
    let poll = Created::from_response(&Request::new(&polld.addr, "POST", "/api/polls").json(&body).send());
    let path = format!("/p/{}", poll.id);
    let vote = |ip: &str| vote_from(&polld, &path, ip);
    // Ten budgets of 2, from one address.
    for i in 0..20 {
        let r = vote("198.51.100.10");
        assert_eq!(r.status, 200, "vote {i}: {}", r.describe());
    }
    let refused = vote("198.51.100.10");
    assert_eq!(refused.status, 429, "{}", refused.describe());
    assert!(refused.header("retry-after").is_some());
    assert_eq!(vote("203.0.113.5").status, 200, "another client group");
    let api = Request::new(&polld.addr, "GET", &format!("/api/polls/{}/results", poll.id)).send().json();
    assert_eq!(api["totalResponses"], 21);
}

/// Issue 24, item 4: `none` polls are also paced by the work their ballots
/// make for the single writer (`PACE_PER_SECOND`, 20,000 counters a second
/// per client group, over all its `none` polls). A ballot of 20 rankings of
/// 12 options adds 1,340 counters, so of 40 sent at once from one address
/// about 15 are taken (one more for each 67 ms they take) and the rest
/// refused (429, the form back); a second later the pace lets more in.
/// Another address is counted apart, and so is a small poll's ballot.
#[test]
fn a_heavy_poll_without_duplicate_check_is_paced_by_its_ballots_work() {
    let server = Server::start();
    let options: Vec<String> = (0..12).map(|o| format!("Option {o}")).collect();
    let mut body = valid_poll_json();
    body["duplicateCheck"] = json!("none");
    body["resultsPublic"] = json!(true);
    body["questions"] = json!(
        (0..20)
            .map(|q| json!({"type": "ranked", "label": format!("Rank {q}"), "options": options}))
            .collect::<Vec<_>>()
    );
    let heavy = server.create_poll(&body);
    let path = format!("/p/{}", heavy.id);
    let ranks: Vec<(String, String)> =
        (0..20).flat_map(|q| (0..12).map(move |j| (format!("q{q}r{j}"), (j + 1).to_string()))).collect();
    let ip = Server::fresh_client_ip();
    let forms: Vec<String> = (0..41).map(|_| ballot(&server.request("GET", &path).xff(&ip).send().text())).collect();
    let send = |code: &str| {
        let mut pairs: Vec<(&str, &str)> = vec![("ballot", code)];
        pairs.extend(ranks.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        server.post_form(&path, &ip, &pairs)
    };
    let started = std::time::Instant::now();
    let answers: Vec<Response> = std::thread::scope(|s| {
        forms[..40]
            .iter()
            .map(|code| s.spawn(|| send(code)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    // What the pace gave back while they came in: one more heavy ballot
    // per 67 ms (so a slow machine takes more, and the bound says so).
    let refilled = usize::try_from(started.elapsed().as_millis() / 67).unwrap();
    let taken = answers.iter().filter(|r| r.status == 200).count();
    let refused: Vec<&Response> = answers.iter().filter(|r| r.status == 429).collect();
    assert_eq!(taken + refused.len(), 40, "{:?}", answers.iter().map(|r| r.status).collect::<Vec<_>>());
    assert!(taken >= 14 && taken <= 15 + refilled, "{taken} of 40 heavy ballots taken, {refilled} given back");
    let refusal = refused.first().unwrap_or_else(|| panic!("none of 40 heavy ballots refused"));
    assert_eq!(refusal.header("retry-after"), Some("1"), "{}", refusal.describe());
    let page = refusal.text();
    assert!(page.contains(r#"<option selected>12</option>"#), "the form comes back with the ranks");
    assert!(page.contains("Many long responses to this poll are arriving from your network at once"), "{page}");
    // Another address is paced apart.
    let other = Server::fresh_client_ip();
    let code = ballot(&server.request("GET", &path).xff(&other).send().text());
    let mut pairs: Vec<(&str, &str)> = vec![("ballot", &code)];
    pairs.extend(ranks.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    assert_eq!(server.post_form(&path, &other, &pairs).status, 200);
    // A small ballot (2 counters) needs only what a millisecond gives back.
    let mut small = valid_poll_json();
    small["duplicateCheck"] = json!("none");
    let small = server.create_poll(&small);
    let (resp, _) = vote_form(&server, &small.id, &ip, &[("q0", "0"), ("q1", "1")]);
    assert_eq!(resp.status, 200, "{}", resp.describe());
    // A second on, the pace has room again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(send(&forms[40]).status, 200);
    let results = server.get(&format!("/api/polls/{}/results", heavy.id)).json();
    assert_eq!(results["totalResponses"], taken as u64 + 2);
}

#[test]
fn the_vote_budget_refills_one_vote_every_window_over_n_across_windows() {
    // 4 votes at once, then one back every 4 s / 4 = 1 s; a client tries
    // to vote every 0.1 s for 10 s, two and a half windows.
    let polld = Polld::start(&["--vote-limit", "4", "--vote-window-secs", "4", "--trusted-proxy", "127.0.0.1/8"]);
    let resp = Request::new(&polld.addr, "POST", "/api/polls")
        .json(&with(valid_poll_json(), "/resultsPublic", json!(true)))
        .send();
    let poll = Created::from_response(&resp);
    let path = format!("/p/{}", poll.id);
    let start = std::time::Instant::now();
    let mut accepted = Vec::new();
    let (mut refused, mut refused_before_fourth) = (0, 0);
    while start.elapsed() < std::time::Duration::from_secs(10) {
        let page = Request::new(&polld.addr, "GET", &path).xff("198.51.100.30").send();
        let resp = Request::new(&polld.addr, "POST", &path)
            .xff("198.51.100.30")
            .form(&[("q0", "0"), ("ballot", &ballot(&page.text()))])
            .send();
        match resp.status {
            200 => accepted.push(start.elapsed().as_secs_f64()),
            429 => {
                refused += 1;
                refused_before_fourth += usize::from(accepted.len() < 4);
            }
            _ => panic!("{}", resp.describe()),
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let elapsed = start.elapsed().as_secs_f64();
    eprintln!("vote budget: {} accepted at {accepted:.2?}, {refused} refused, in {elapsed:.1} s", accepted.len());
    // Never more than the budget allows: by any time t, 4 + t votes (one
    // refilled each second), across all windows alike.
    for (k, t) in accepted.iter().enumerate() {
        assert!(k as f64 + 1.0 <= 4.0 + t + 0.3, "vote {} accepted at {t:.2} s: more than 4 + t", k + 1);
    }
    // The budget of 4 at once: the first four attempts are all taken,
    // however long a loaded machine makes them take (a stall of 1.4 s
    // between two attempts was seen; a time bound here failed for that).
    assert!(
        accepted.len() >= 4 && refused_before_fourth == 0,
        "the budget of 4 at once: {refused_before_fourth} refused before the fourth, accepted at {accepted:.2?}"
    );
    // And the budget does refill: after the first 4, about one a second
    // (not one window of nothing). Loose, for a loaded machine.
    let expected = 4.0 + elapsed.floor();
    assert!(
        accepted.len() as f64 >= expected - 3.0,
        "{} accepted in {elapsed:.1} s, expected about {expected}",
        accepted.len()
    );
    let first_window = accepted.iter().filter(|t| **t < 4.0).count();
    assert!(first_window >= 6, "{first_window} in the first window, expected 4 + 4");
    assert!(refused > 0, "the budget was never exhausted");
}

#[test]
fn votes_sent_from_another_site_are_refused_without_sec_fetch_site() {
    let server = Server::start();
    let poll = public_poll(&server);
    let path = format!("/p/{}", poll.id);
    let vote = |headers: &[(&str, &str)]| {
        let token = ballot(&server.get(&path).text());
        let mut req = server.request("POST", &path);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req.form(&[("q0", "0"), ("ballot", &token)]).send().status
    };
    let own_page = format!("{}/", server.base_url);
    let hostile: &[&[(&str, &str)]] = &[
        &[("Origin", "https://evil.example")],
        &[("Origin", "null")],
        &[("Referer", "https://evil.example/page")],
        &[("Origin", "https://evil.example"), ("Referer", own_page.as_str())],
    ];
    for headers in hostile {
        assert_eq!(vote(headers), 403, "{headers:?}");
    }
    assert_eq!(total(&server, &poll), 0, "no cross-site vote counted");
    // This site (the base URL, or the host the request went to), or no
    // origin at all (tools, old browsers): counted.
    let own = server.base_url.clone();
    let referer = format!("{own}/p/{}", poll.id);
    let friendly: &[&[(&str, &str)]] = &[&[], &[("Origin", own.as_str())], &[("Referer", referer.as_str())]];
    for headers in friendly {
        assert_eq!(vote(headers), 200, "{headers:?}");
    }
    // A browser that says Sec-Fetch-Site is judged by it: our pages ask for
    // no referrer, so its own form posts carry Origin: null.
    assert_eq!(vote(&[("Sec-Fetch-Site", "same-origin"), ("Origin", "null")]), 200);
    assert_eq!(total(&server, &poll), 4);
}

#[test]
fn duplicate_check_none_lets_one_address_vote_past_the_throttle() {
    let polld = Polld::start(&["--vote-limit", "3", "--trusted-proxy", "127.0.0.1/8"]);
    let create = |check: &str| {
        let body = with(with(valid_poll_json(), "/resultsPublic", json!(true)), "/duplicateCheck", json!(check));
        Created::from_response(&Request::new(&polld.addr, "POST", "/api/polls").json(&body).send())
    };
    let vote = |poll: &Created| {
        let path = format!("/p/{}", poll.id);
        let page = Request::new(&polld.addr, "GET", &path).xff("198.51.100.70").send();
        Request::new(&polld.addr, "POST", &path)
            .xff("198.51.100.70")
            .form(&[("q0", "0"), ("ballot", &ballot(&page.text()))])
            .send()
            .status
    };
    let (open, throttled) = (create("none"), create("network"));
    let statuses = |poll: &Created| (0..6).map(|_| vote(poll)).collect::<Vec<_>>();
    assert_eq!(statuses(&open), vec![200; 6], "no limit");
    assert_eq!(statuses(&throttled), vec![200, 200, 200, 429, 429, 429], "the throttle");
    let total = |poll: &Created| {
        Request::new(&polld.addr, "GET", &format!("/api/polls/{}/results", poll.id)).send().json()["totalResponses"]
            .clone()
    };
    assert_eq!((total(&open), total(&throttled)), (json!(6), json!(3)));
}

/// polld as shipped: a `network` poll (the default) takes one response a
/// day from one network, so one browser pressing "Answer again" counts
/// once; the refusal says what happened and what the creator can choose, in
/// the reader's language, with the choices kept. A `none` poll takes many.
#[test]
fn by_default_a_network_poll_takes_one_response_a_day_from_one_network() {
    let polld = Polld::start(&["--trusted-proxy", "127.0.0.1/8", NETWORK_DAY_FLAG, "1"]);
    let create = |check: &str| {
        let body = with(with(valid_poll_json(), "/resultsPublic", json!(true)), "/duplicateCheck", json!(check));
        Created::from_response(&Request::new(&polld.addr, "POST", "/api/polls").json(&body).send())
    };
    let poll = create("network");
    let path = format!("/p/{}", poll.id);
    // No "Answer again (someone else on this device)": it would be refused.
    let page = Request::new(&polld.addr, "GET", &path).xff("203.0.113.40").send().text();
    assert!(!page.contains("id=\"answer-again\""), "{page}");
    assert_eq!(vote_from(&polld, &path, "203.0.113.40").status, 200);
    for (lang, said) in [
        ("en", "A response to this poll from your network was already counted in the last 24 hours."),
        ("fr", "Une réponse à ce sondage venant de votre réseau a déjà été comptée"),
        ("de", "Eine Antwort auf diese Umfrage aus Ihrem Netz wurde in den letzten 24 Stunden bereits gezählt."),
        ("it", "Una risposta a questo sondaggio dalla tua rete è già stata contata nelle ultime 24 ore."),
    ] {
        let again = vote_from(&polld, &format!("{path}?lang={lang}"), "203.0.113.40");
        assert_eq!(again.status, 429, "{lang}: {}", again.describe());
        assert!(again.header("retry-after").is_some(), "{lang}");
        let html = again.text();
        assert!(html.contains(said), "{lang}: {html}");
        assert!(html.contains("checked"), "{lang}: the choices are kept");
    }
    assert_eq!(vote_from(&polld, &path, "203.0.113.41").status, 200, "another network");
    let api = Request::new(&polld.addr, "GET", &format!("/api/polls/{}/results", poll.id)).send().json();
    assert_eq!(api["totalResponses"], 2);
    // A room behind one address: a poll without duplicate check.
    let room = create("none");
    for _ in 0..5 {
        assert_eq!(vote_from(&polld, &format!("/p/{}", room.id), "203.0.113.40").status, 200);
    }
}

/// The texts that name the day rule say the number polld runs with
/// (`--network-votes-per-day`, with each language's plural), and nothing
/// of a day where it is off: the duplicate check on the creation form and
/// the admin page, the created page, the privacy page, the refusal, and the
/// OpenAPI document. They said "one response a day" whatever the number.
#[test]
fn the_day_rule_is_said_in_the_number_polld_runs_with() {
    for (flag, label, privacy, api) in [
        ("3", "3 responses per network a day", Some("3 responses a day per network"), "3 votes a day"),
        ("0", "A limit per network on rapid repeats", None, "no daily limit"),
    ] {
        let polld = Polld::start(&["--trusted-proxy", "127.0.0.1/8", NETWORK_DAY_FLAG, flag]);
        let get = |path: &str| Request::new(&polld.addr, "GET", path).send().text();
        let no_day = |html: &str, what: &str| {
            for claim in ["One response", "a day per network", "per network a day", "in the last 24 hours"] {
                assert!(flag != "0" || !html.contains(claim), "{flag}: {what} says {claim:?}: {html}");
            }
            assert!(!html.contains("One response per network a day"), "{flag}: {what}: {html}");
        };
        let form = get("/");
        assert!(form.contains(label), "{flag}: the creation form: {form}");
        no_day(&form, "the creation form");
        let french = get("/?lang=fr");
        let french_label = if flag == "3" { "3 réponses par réseau et par jour" } else { "Une limite par réseau" };
        assert!(french.contains(french_label), "{flag}: {french}");
        let code = input_value(&form, "name=\"once\"");
        let fields = [
            ("once", code.as_str()),
            ("title", "Rule"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", "Q"),
            ("q0o0", "a"),
            ("q0o1", "b"),
        ];
        let created = Request::new(&polld.addr, "POST", "/").xff("198.51.100.30").form(&fields).send();
        assert_eq!(created.status, 201, "{}", created.describe());
        let created = created.text();
        assert!(created.contains(&format!("<p class=\"meta mode\">Limit on repeated responses: {label}")), "{created}");
        no_day(&created, "the created page");
        let admin = input_value(&created, "id=\"link-admin\"");
        let (id, token) = admin.split_once("/p/").and_then(|(_, rest)| rest.split_once("/admin#")).unwrap();
        let dashboard = Request::new(&polld.addr, "POST", &format!("/p/{id}/admin")).form(&[("token", token)]).send();
        assert!(dashboard.text().contains(label), "{flag}: the admin page: {}", dashboard.text());
        let page = get("/privacy");
        match privacy {
            Some(row) => assert!(page.contains(row), "{flag}: {page}"),
            None => no_day(&page, "the privacy page"),
        }
        let doc = get("/api");
        assert!(doc.contains(api), "{flag}: the OpenAPI document");
        assert!(!doc.contains("one vote a day"), "{flag}: the OpenAPI document");
        // The refusal, past the day's responses (none with the rule off).
        let path = format!("/p/{id}");
        let statuses: Vec<u16> = (0..4).map(|_| vote_from(&polld, &path, "203.0.113.50").status).collect();
        if flag == "3" {
            assert_eq!(statuses, [200, 200, 200, 429]);
            let refused = vote_from(&polld, &format!("{path}?lang=de"), "203.0.113.50").text();
            assert!(
                refused.contains("3 Antworten auf diese Umfrage aus Ihrem Netz wurden in den letzten 24 Stunden"),
                "{refused}"
            );
            let refused = vote_from(&polld, &path, "203.0.113.50").text();
            assert!(refused.contains("3 responses to this poll from your network were already counted"), "{refused}");
        } else {
            assert_eq!(statuses, [200; 4], "no day rule");
        }
    }
}
