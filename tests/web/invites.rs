//! The duplicate check and invite codes: codes issued on the admin page,
//! one vote each, and the check set in the creation form and on the admin
//! page.

use super::*;

/// Whether a page has the language switcher.
fn dash_has_switcher(html: &str) -> bool {
    html.contains("class=\"langs\"")
}

/// The codes on a sheet of invite cards, as printed (`XXXX-XXXX-…`).
fn sheet_codes(html: &str) -> Vec<String> {
    html.split("<dd class=\"code\">").skip(1).filter_map(|s| s.split('<').next()).map(str::to_owned).collect()
}

fn invite_poll(server: &Server) -> Created {
    let body = with(with(valid_poll_json(), "/resultsPublic", json!(true)), "/duplicateCheck", json!("invite"));
    server.create_poll(&body)
}

#[test]
fn invite_codes_are_issued_on_the_admin_page_and_each_casts_one_vote() {
    let server = Server::start();
    let poll = invite_poll(&server);
    let (admin, share) = (format!("/p/{}/admin", poll.id), format!("/p/{}", poll.id));
    let ip = "192.0.2.60";
    let t = poll.token.as_str();
    let status = || server.get_auth(&format!("/api/polls/{}/invites", poll.id), t).json();

    // The dashboard: the section with its counts and form.
    let dash = server.post_form(&admin, ip, &[("token", t)]);
    dash.assert_status(200);
    assert!(dash.text().contains("id=\"invites-heading\"") && dash.text().contains("0 codes issued, 0 used."));
    assert!(dash.text().contains("id=\"a-invites-count\""));

    // A wrong key issues nothing, as a sheet or as CSV.
    for action in ["invites", "invites-csv"] {
        let r = server.post_form(&admin, ip, &[("token", "wrong"), ("action", action), ("count", "5")]);
        assert_eq!(r.status, 403, "{action}");
        assert!(sheet_codes(&r.text()).is_empty());
    }
    assert_eq!(status()["issued"], 0);

    // The form's one-time code, from the dashboard (`once`).
    let once = || input_value(&server.post_form(&admin, ip, &[("token", t)]).text(), "name=\"once\"");
    // A number out of range comes back at its field.
    for count in ["0", "1001", "many", ""] {
        let once = once();
        let r = server.post_form(
            &admin,
            ip,
            &[("token", t), ("action", "invites"), ("count", count), ("once", once.as_str())],
        );
        assert_eq!(r.status, 422, "{count:?}");
        assert!(r.text().contains("href=\"#a-invites-count\""), "{count:?}: {}", r.text());
        assert!(r.text().contains(&format!("value=\"{count}\"")), "the number typed is kept");
    }
    assert_eq!(status()["issued"], 0);

    // The sheet: each code once, with its link (code in the fragment) and
    // its QR code, and the warning that they are shown only now.
    let sent_once = once();
    let form = [("token", t), ("action", "invites"), ("count", "3"), ("once", sent_once.as_str())];
    let sheet = server.post_form(&admin, ip, &form);
    sheet.assert_status(200);
    assert_page_headers(&sheet);
    let html = sheet.text();
    let codes = sheet_codes(&html);
    assert_eq!(codes.len(), 3, "{html}");
    for code in &codes {
        assert_eq!((code.len(), code.matches('-').count()), (24, 4), "{code}");
        assert!(html.contains(&format!("/p/{}#invite={code}<", poll.id)), "the invite link of {code}");
    }
    assert_eq!(html.matches("<svg class=\"qr\"").count(), 3);
    assert!(html.contains("These codes are shown only now."));
    // Sent again (a reload of the sheet): nothing more is issued.
    let again = server.post_form(&admin, ip, &form);
    assert_eq!(again.status, 409, "{}", again.describe());
    assert!(sheet_codes(&again.text()).is_empty() && again.text().contains("Nothing more was issued."));
    // Said calmly, with a way back that keeps the key (issue 25).
    assert!(again.text().contains("<h1>These codes were already issued</h1>"), "{}", again.text());
    assert!(!again.text().contains("Something went wrong"), "{}", again.text());
    assert!(again.text().contains(&format!(r#"<input type="hidden" name="token" value="{t}">"#)), "{}", again.text());
    assert_eq!(status()["issued"], 3);
    // Without its one-time code the form issues nothing either.
    let r = server.post_form(&admin, ip, &[("token", t), ("action", "invites"), ("count", "3")]);
    assert_eq!(r.status, 422);
    assert!(r.text().contains("This form has expired") && sheet_codes(&r.text()).is_empty());
    assert_eq!(status()["issued"], 3);
    // No language switcher: it would post again, and the codes would be lost.
    assert!(!html.contains("class=\"langs\""), "a language switcher on the sheet");
    // A saved copy goes to whoever prints the cards: it must not hold the key.
    assert!(!html.contains(t), "the admin key on the sheet");
    assert!(dash_has_switcher(&server.post_form(&admin, ip, &[("token", t)]).text()));
    assert_eq!(status()["issued"], 3);
    // Issued codes are never shown again.
    let dash = server.post_form(&admin, ip, &[("token", t)]).text();
    assert!(dash.contains("3 codes issued, 0 used."), "{dash}");
    assert!(codes.iter().all(|c| !dash.contains(c.as_str())));

    // No code: refused, the choices come back.
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "1")]);
    assert_eq!(r.status, 403, "{}", r.describe());
    assert!(r.text().contains("please enter yours") && r.text().contains("checked"), "{}", r.text());
    // Something that cannot be a code is called so (its shape is public).
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "1"), ("invite", "ABCD-EFGH-UUUU")]);
    assert_eq!(r.status, 403);
    assert!(r.text().contains("This is not an invite code") && r.text().contains("checked"), "{}", r.text());
    // A code of the right shape that is not one of this poll's.
    let unknown = "0000-0000-0000-0000-0000";
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "1"), ("invite", unknown)]);
    assert_eq!(r.status, 403);
    assert!(r.text().contains("not one of this poll") && r.text().contains("checked"));
    assert!(!r.text().contains(unknown), "the code typed is not echoed");
    assert_eq!(status()["used"], 0);

    // A form that comes back for another reason keeps the code typed
    // (the invite link's fragment is gone by then); the code stays unused.
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "9"), ("invite", &codes[2])]);
    assert_eq!(r.status, 422, "{}", r.describe());
    assert!(r.text().contains(&format!("name=\"invite\" value=\"{}\"", codes[2])), "{}", r.text());
    assert_eq!(status()["used"], 0);
    // A valid code counts once.
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "1"), ("invite", &codes[0])]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(total(&server, &poll), 1);
    // The same code again: refused, choices kept, the code not echoed.
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "2"), ("invite", &codes[0])]);
    assert_eq!(r.status, 403, "{}", r.describe());
    assert!(r.text().contains("already been used") && r.text().contains("checked"));
    assert!(!r.text().contains(codes[0].as_str()));
    assert!(r.text().contains("id=\"invite-error\""), "the refusal is at the field");
    assert!(r.text().contains("aria-invalid=\"true\" aria-describedby=\"invite-hint invite-error\""));
    assert_eq!(total(&server, &poll), 1);
    // Typed as a person might: lower case, spaces for hyphens.
    let typed = format!(" {} ", codes[1].to_lowercase().replace('-', " "));
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "0"), ("invite", &typed)]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(total(&server, &poll), 2);
    let dash = server.post_form(&admin, ip, &[("token", t)]).text();
    assert!(dash.contains("3 codes issued, 2 used."), "{dash}");
    assert_eq!((status()["issued"].clone(), status()["used"].clone()), (json!(3), json!(2)));

    // CSV: `code,url`, as a download, codes that work.
    let once = once();
    let r = server.post_form(
        &admin,
        ip,
        &[("token", t), ("action", "invites-csv"), ("count", "2"), ("once", once.as_str())],
    );
    r.assert_status(200);
    assert_eq!(r.media_type().as_deref(), Some("text/csv"));
    let disposition = r.header("content-disposition").unwrap_or_default();
    assert!(disposition.starts_with("attachment") && disposition.contains(".csv"), "{disposition}");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    r.assert_no_cookie();
    let csv = r.text();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("code,url"));
    let rows: Vec<(String, String)> = lines
        .map(|l| l.split_once(',').map(|(c, u)| (c.to_owned(), u.to_owned())).unwrap_or_else(|| panic!("{l}")))
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for (code, url) in &rows {
        assert_eq!(url, &format!("{}/p/{}#invite={code}", server.base_url, poll.id));
        assert!(!codes.contains(code), "new codes");
    }
    assert_eq!(status()["issued"], 5);
    let (r, _) = vote_form(&server, &poll.id, ip, &[("q0", "0"), ("invite", &rows[0].0)]);
    assert_eq!(r.status, 200);
    assert_eq!(total(&server, &poll), 3);

    // The share page has the code field, and no code in it.
    let page = server.get(&share).text();
    assert!(page.contains("name=\"invite\"") && page.contains("for=\"invite\""));
    // No code in any log line.
    let logs = server.logs();
    for code in codes.iter().chain(rows.iter().map(|(c, _)| c)) {
        assert!(!logs.contains(code.as_str()) && !logs.contains(&code.replace('-', "")), "a code in the logs");
    }
}

#[test]
fn the_duplicate_check_is_set_in_the_creation_form_and_on_the_admin_page() {
    let server = Server::start();
    let html = server.get("/?lang=de").text();
    for id in ["f-duplicate-network", "f-duplicate-invite", "f-duplicate-none"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    assert!(html.contains("id=\"f-duplicate-network\" name=\"duplicate\" value=\"network\" checked"), "the default");
    let create = |duplicate: &str| {
        let code = once(&server);
        let fields = [
            ("once", code.as_str()),
            ("title", "Einladung"),
            ("lang", "de"),
            ("expiry", "7"),
            ("results", "public"),
            ("duplicate", duplicate),
            ("q0", "Ja?"),
            ("q0o0", "Ja"),
            ("q0o1", "Nein"),
        ];
        server.post_form("/?lang=de", "198.51.100.23", &fields)
    };
    let resp = create("cookie");
    resp.assert_status(422);
    assert!(resp.text().contains("href=\"#f-duplicate-network\""), "{}", resp.text());
    let resp = create("invite");
    resp.assert_status(201);
    let id = resp.text().split("/p/").nth(1).unwrap().split(['"', '/', '?', '<']).next().unwrap().to_owned();
    let token = resp.text().split("admin#").nth(1).unwrap().split(['"', '<']).next().unwrap().to_owned();
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["duplicateCheck"], "invite");
    assert!(server.get(&format!("/p/{id}")).text().contains("name=\"invite\""), "the share page asks for a code");

    let admin = format!("/p/{id}/admin");
    let dash = server.post_form(&admin, "198.51.100.23", &[("token", &token)]).text();
    assert!(dash.contains("id=\"a-duplicate-invite\" name=\"duplicate\" value=\"invite\" checked"), "{dash}");
    let save = |duplicate: &str| {
        let fields =
            [("token", token.as_str()), ("action", "settings"), ("results", "public"), ("duplicate", duplicate)];
        server.post_form(&admin, "198.51.100.23", &fields)
    };
    // Done: the admin page again, by a GET (tests/web/admin.rs).
    save("none").assert_status(303);
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["duplicateCheck"], "none");
    assert!(!server.get(&format!("/p/{id}")).text().contains("name=\"invite\""));
    let r = save("cookie");
    r.assert_status(422);
    assert!(r.text().contains("href=\"#a-duplicate-network\""), "{}", r.text());
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["duplicateCheck"], "none");
    // Not invite-only: the admin page says codes would not count yet.
    assert!(server.post_form(&admin, "198.51.100.23", &[("token", &token)]).text().contains("Codes zählen erst"));
}

/// Cards printed while the poll does not take codes yet promise no "one
/// response per code"; once it does, they say so.
#[test]
fn cards_promise_one_response_per_code_only_on_a_poll_that_takes_codes() {
    let server = Server::start();
    let ip = "198.51.100.77";
    for (check, promised) in [("network", false), ("invite", true)] {
        let poll = server.create_poll(&with(valid_poll_json(), "/duplicateCheck", json!(check)));
        let admin = format!("/p/{}/admin", poll.id);
        let once = input_value(&server.post_form(&admin, ip, &[("token", &poll.token)]).text(), "name=\"once\"");
        let sheet = server.post_form(
            &admin,
            ip,
            &[("token", &poll.token), ("action", "invites"), ("count", "2"), ("once", once.as_str())],
        );
        assert_eq!(sheet.status, 200, "{check}: {}", sheet.describe());
        let html = sheet.text();
        assert_eq!(sheet_codes(&html).len(), 2, "{check}");
        assert_eq!(html.matches("one response per code").count(), if promised { 2 } else { 0 }, "{check}: {html}");
        assert_eq!(html.matches("Scan the code or open the link").count(), 2, "{check}");
    }
}
