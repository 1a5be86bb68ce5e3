//! The admin page: private results and the page itself need the key, the
//! key survives a language switch, each action does what it says, and
//! answers by a redirect to the page by GET (issue 37), so that a reload or
//! Back repeats nothing.

use super::*;

/// An admin action that did what it said (issue 37): answered by `303 See
/// Other` to the admin page by GET, with what was done in `?done=` and the
/// key in no address; that page says what was done and asks for the key
/// (the page's script sends the key it kept by itself), with `done` in its
/// form; given the key, the dashboard. Answers the dashboard.
pub(crate) fn admin_done(server: &Server, path: &str, ip: &str, fields: &[(&str, &str)]) -> Response {
    let token = fields.iter().find(|(k, _)| *k == "token").map(|(_, v)| *v).unwrap();
    let r = server.post_form(path, ip, fields);
    assert_eq!(r.status, 303, "{}", r.describe());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let to = r.header("location").unwrap_or_else(|| panic!("no Location: {}", r.describe())).to_owned();
    let base = path.split('?').next().unwrap();
    assert!(to.starts_with(&format!("{base}?done=")) && !to.contains(token), "{to}");
    assert!(r.body.is_empty() || !r.text().contains(token), "the key in the redirect");
    let page = server.get(&to);
    assert_eq!(page.status, 200);
    assert_page_headers(&page);
    let html = page.text();
    assert!(!html.contains(token), "the key on a page got by GET");
    let done = to.split("done=").nth(1).unwrap().split('&').next().unwrap();
    assert!(html.contains(&format!("name=\"done\" value=\"{done}\"")), "{html}");
    assert!(html.contains("class=\"notice ok\""), "it says what was done: {html}");
    let dash = server.post_form(path, ip, &[("token", token), ("done", done)]);
    assert_eq!(dash.status, 200, "{}", dash.describe());
    dash
}

#[test]
fn private_results_need_the_admin_key() {
    let server = Server::start();
    let poll = server.create_default();
    server.record(&poll.id, &[Some(2), None]).unwrap();
    let path = format!("/p/{}/results", poll.id);
    let page = server.get(&path);
    assert_eq!(page.status, 200);
    assert!(page.text().contains("These results are private"));
    assert!(!page.text().contains("Salad"), "no results without the key");
    assert!(page.text().contains("type=\"password\""));
    let wrong = server.post_form(&path, "192.0.2.30", &[("token", "not-the-key")]);
    assert_eq!(wrong.status, 403);
    assert!(!wrong.text().contains("Salad"));
    let other = server.create_default();
    assert_eq!(server.post_form(&path, "192.0.2.30", &[("token", &other.token)]).status, 403);
    let ok = server.post_form(&path, "192.0.2.30", &[("token", &poll.token)]);
    assert_eq!(ok.status, 200);
    assert!(ok.text().contains("Salad") && ok.text().contains("1 response"), "{}", ok.text());
    // Pasting the whole admin link works too.
    let link = format!("{}/p/{}/admin#{}", server.base_url, poll.id, poll.token);
    assert_eq!(server.post_form(&path, "192.0.2.30", &[("token", &link)]).status, 200);
    // The share page of a private poll does not link to results.
    assert!(!server.get(&format!("/p/{}", poll.id)).text().contains("/results"));
}

#[test]
fn the_unlocked_admin_page_switches_language_without_losing_the_key() {
    let server = Server::start();
    let poll = server.create_default();
    let path = format!("/p/{}/admin", poll.id);
    let unlocked = server.post_form(&path, "192.0.2.41", &[("token", &poll.token)]);
    assert_eq!(unlocked.status, 200, "{}", unlocked.describe());
    let html = unlocked.text();
    // The switcher posts the key along instead of linking to a locked page.
    let switch = format!("action=\"{path}?lang=de\"");
    let form_at = html.find(&switch).unwrap_or_else(|| panic!("no language form posting to {path}?lang=de: {html}"));
    assert!(html[form_at..].split("</form>").next().unwrap().contains(&poll.token), "the key travels with the switch");
    assert!(!html.contains(&format!("href=\"{path}?lang=de\"")), "a plain link would lock the page again");
    let german = server.post_form(&format!("{path}?lang=de"), "192.0.2.41", &[("token", &poll.token)]);
    assert_eq!(german.status, 200);
    assert_eq!(html_lang(&german), "de");
    assert!(german.text().contains("name=\"action\""), "still the dashboard, in German");
    // Private results unlocked with the key switch language the same way.
    let results = format!("/p/{}/results", poll.id);
    let unlocked = server.post_form(&results, "192.0.2.41", &[("token", &poll.token)]).text();
    assert!(unlocked.contains(&format!("action=\"{results}?lang=it\"")), "{unlocked}");
    let italian = server.post_form(&format!("{results}?lang=it"), "192.0.2.41", &[("token", &poll.token)]);
    assert_eq!(html_lang(&italian), "it");
    assert!(italian.text().contains("table class=\"tally\""), "still the results, in Italian");
    // The locked page (no key yet) keeps plain links and shows no key.
    let locked = server.get(&path).text();
    assert!(locked.contains(&format!("href=\"{path}?lang=de\"")));
    assert!(!locked.contains(&poll.token));
}

#[test]
fn admin_actions_need_the_key_and_do_what_they_say() {
    let server = Server::start();
    let poll = server.create_default();
    let path = format!("/p/{}/admin", poll.id);
    let api = |s: &Server| s.get(&format!("/api/polls/{}", poll.id)).json();
    let before = api(&server);
    let ip = "192.0.2.40";
    let tr = [
        ("vlang", "fr"),
        ("vt", "Déjeuner"),
        ("vq0", "Où ?"),
        ("vq0o0", "Pizza"),
        ("vq0o1", "Sushis"),
        ("vq0o2", "Salade"),
        ("vq1", "Quel jour ?"),
        ("vq1o0", "Lundi"),
        ("vq1o1", "Vendredi"),
    ];
    // A wrong key changes nothing, whatever the action.
    for action in ["close", "expiry", "version-save", "delete", "delete-confirmed"] {
        let mut pairs = vec![("token", "wrong"), ("action", action), ("expiry", "7")];
        pairs.extend_from_slice(&tr);
        let resp = server.post_form(&path, ip, &pairs);
        assert_eq!(resp.status, 403, "{action}");
        assert!(resp.text().contains("This key does not belong to this poll."));
    }
    assert_eq!(api(&server), before);

    let t = poll.token.as_str();
    let dash = server.post_form(&path, ip, &[("token", t)]);
    assert_eq!(dash.status, 200);
    assert_page_headers(&dash);
    assert!(dash.text().contains("Close the poll"));

    let r = admin_done(&server, &path, ip, &[("token", t), ("action", "close")]);
    assert!(r.text().contains("The poll is closed."));
    assert_eq!(api(&server)["status"], "closed");
    admin_done(&server, &path, ip, &[("token", t), ("action", "reopen")]);
    assert_eq!(api(&server)["status"], "open");

    let r = admin_done(&server, &path, ip, &[("token", t), ("action", "expiry"), ("expiry", "7")]);
    assert!(r.text().contains(&format!("datetime=\"{}\"", date_from_today(7))));
    assert_eq!(api(&server)["expiresOn"], date_from_today(7));
    let r = server.post_form(&path, ip, &[("token", t), ("action", "expiry"), ("expiry", "8")]);
    assert_eq!(r.status, 422);
    assert_eq!(api(&server)["expiresOn"], date_from_today(7));

    let mut pairs = vec![("token", t), ("action", "version-save")];
    pairs.extend_from_slice(&tr);
    let r = admin_done(&server, &path, ip, &pairs);
    assert!(r.text().contains("The French version is saved."), "{}", r.text());
    assert_eq!(api(&server)["translations"]["fr"]["title"], "Déjeuner");
    // An invalid version is refused with the field marked and the input kept.
    let mut bad = pairs.clone();
    bad[3] = ("vt", "");
    bad[5] = ("vq0o0", "Nouveau");
    let r = server.post_form(&path, ip, &bad);
    assert_eq!(r.status, 422);
    assert!(r.text().contains("value=\"Nouveau\""));
    assert!(r.text().contains("href=\"#v-fr-t\""));
    assert_eq!(api(&server)["translations"]["fr"]["title"], "Déjeuner");
    // The poll's own language cannot be replaced.
    let mut own = pairs.clone();
    own[2] = ("vlang", "en");
    assert_eq!(server.post_form(&path, ip, &own).status, 400);

    admin_done(&server, &path, ip, &[("token", t), ("action", "version-remove"), ("vlang", "fr")]);
    assert!(api(&server)["translations"].get("fr").is_none());

    let confirm = server.post_form(&path, ip, &[("token", t), ("action", "delete")]);
    assert_eq!(confirm.status, 200);
    assert!(confirm.text().contains("Delete this poll for good?"));
    assert_eq!(server.get(&format!("/api/polls/{}", poll.id)).status, 200, "not yet deleted");
    let done = server.post_form(&path, ip, &[("token", t), ("action", "delete-confirmed")]);
    assert_eq!(done.status, 200);
    assert_eq!(server.get(&format!("/api/polls/{}", poll.id)).status, 404);
    assert_eq!(server.get(&path).status, 404);
}

#[test]
fn the_admin_page_preselects_the_erase_date_the_poll_has() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["expiryDays"] = json!(90);
    let poll = server.create_poll(&body);
    let path = format!("/p/{}/admin", poll.id);
    let ip = "192.0.2.43";
    let shown = |s: &Server| {
        let html = s.post_form(&path, ip, &[("token", &poll.token)]).text();
        selected_option(&html, "a-expiry").unwrap_or_else(|| panic!("no erase-date choice selected: {html}"))
    };
    assert_eq!(shown(&server), "90", "the lifetime the poll was made with");
    // Ten days later the erase day is still the one it was made with.
    let set = |s: &Server, created: i64, expires: i64| {
        s.exec_sql(
            "UPDATE sealed_polls SET created_on = ?1, expires_on = ?2 WHERE id = ?3",
            [date_from_today(created), date_from_today(expires), poll.id.clone()],
        );
    };
    set(&server, -10, 80);
    assert_eq!(shown(&server), "90", "still the lifetime it was made with");
    // Changed on an earlier day (no choice counted from either day matches):
    // the shortest choice that does not bring the erase day earlier.
    set(&server, -20, 25);
    assert_eq!(shown(&server), "30");
    // Changed today: the choice just made.
    let r = admin_done(&server, &path, ip, &[("token", &poll.token), ("action", "expiry"), ("expiry", "7")]);
    assert_eq!(selected_option(&r.text(), "a-expiry").as_deref(), Some("7"));
    assert_eq!(shown(&server), "7");
}

/// "Next: issue invite codes" opens the dashboard with the number of codes
/// focused (and so on screen); a deleted poll's page, and a poll's admin
/// address that is not found, carry what the script needs to drop the poll
/// from "Your polls on this device".
#[test]
fn the_next_step_focuses_the_codes_and_a_gone_poll_is_marked_for_the_device_list() {
    let server = Server::start();
    let ip = "198.51.100.81";
    let poll = server.create_poll(&with(valid_poll_json(), "/duplicateCheck", json!("invite")));
    let admin = format!("/p/{}/admin", poll.id);
    let next = server.post_form(&admin, ip, &[("token", &poll.token), ("next", "invites")]).text();
    assert!(next.contains(r#"id="a-invites-count" name="count""#), "{next}");
    assert_eq!(next.matches(" autofocus").count(), 1, "{next}");
    let plain = server.post_form(&admin, ip, &[("token", &poll.token)]).text();
    assert!(!plain.contains(" autofocus"), "{plain}");
    let deleted = server.post_form(&admin, ip, &[("token", &poll.token), ("action", "delete-confirmed")]);
    assert_eq!(deleted.status, 200);
    assert!(deleted.text().contains(&format!(r#"data-forget-admin="{}""#, poll.id)), "{}", deleted.text());
    let missing = server.get(&admin);
    assert_eq!(missing.status, 404);
    assert!(missing.text().contains(r#"data-forget-admin="""#), "{}", missing.text());
}
