//! Every page in every language: security headers, language negotiation,
//! links that stay on the site, hostile text escaped.

use super::*;

#[test]
fn every_page_renders_in_every_language_with_security_headers() {
    let server = Server::start();
    let poll = public_poll(&server);
    let titles = [
        ("en", "Create a poll", "Privacy", "Results", "Manage the poll"),
        ("fr", "Créer un sondage", "Confidentialité", "Résultats", "Gérer le sondage"),
        ("de", "Umfrage erstellen", "Datenschutz", "Ergebnisse", "Umfrage verwalten"),
        ("it", "Crea un sondaggio", "Privacy", "Risultati", "Gestisci il sondaggio"),
    ];
    for (lang, create, privacy, results, admin) in titles {
        for (path, needle) in [
            ("/".to_owned(), create),
            ("/privacy".to_owned(), privacy),
            (format!("/p/{}", poll.id), "Team lunch"),
            (format!("/p/{}/results", poll.id), results),
            (format!("/p/{}/admin", poll.id), admin),
        ] {
            let resp = server.get(&format!("{path}?lang={lang}"));
            assert_eq!(resp.status, 200, "{path} {lang}: {}", resp.describe());
            assert_page_headers(&resp);
            assert_eq!(html_lang(&resp), lang, "{path}");
            assert!(resp.text().contains(needle), "{path}?lang={lang} lacks {needle:?}");
        }
    }
    // Unknown pages and polls are pages too.
    for path in ["/nope", "/p/AAAAAAAAAAAAAAAA", "/p/short", "/p/AAAAAAAAAAAAAAAA/admin"] {
        let resp = server.get(path);
        assert_eq!(resp.status, 404, "{path}");
        assert_page_headers(&resp);
    }
    // The static files exist under their hashed names and are cacheable.
    let page = server.get("/").text();
    for ext in ["css", "js", "svg"] {
        let at = page.find(&format!(".{ext}\"")).expect("asset link");
        let start = page[..at].rfind("/static/").expect("static path");
        let url = &page[start..at + ext.len() + 1];
        let resp = server.get(url);
        assert_eq!(resp.status, 200, "{url}");
        assert!(resp.header("cache-control").unwrap().contains("immutable"));
        resp.assert_no_cookie();
    }
    assert_eq!(server.get("/static/app.0000.css").status, 404);
}

#[test]
fn language_is_negotiated_by_query_then_accept_language_then_poll() {
    let server = Server::start();
    let get = |path: &str, al: Option<&str>| {
        let mut r = server.request("GET", path);
        if let Some(al) = al {
            r = r.header("Accept-Language", al);
        }
        r.send()
    };
    assert_eq!(html_lang(&get("/", None)), "en");
    assert_eq!(html_lang(&get("/", Some("de-CH, fr;q=0.9"))), "de");
    assert_eq!(html_lang(&get("/", Some("en;q=0.2, it;q=0.8, es"))), "it");
    assert_eq!(html_lang(&get("/", Some("es, pt;q=0.5"))), "en");
    assert_eq!(html_lang(&get("/?lang=fr", Some("de"))), "fr");
    assert_eq!(html_lang(&get("/?lang=xx", Some("it"))), "it");

    // A French poll: its pages default to French, and the poll text is marked.
    let mut body = valid_poll_json();
    body["lang"] = json!("fr");
    body["title"] = json!("Déjeuner");
    body["resultsPublic"] = json!(true);
    let poll = server.create_poll(&body);
    let share = format!("/p/{}", poll.id);
    assert_eq!(html_lang(&get(&share, None)), "fr");
    assert_eq!(html_lang(&get(&share, Some("es"))), "fr");
    let de = get(&share, Some("de"));
    assert_eq!(html_lang(&de), "de");
    assert!(de.text().contains("<h1 lang=\"fr\">Déjeuner</h1>"), "{}", de.text());

    // With a German version, German readers get it, unmarked.
    let mut tr = valid_translation();
    tr["title"] = json!("Mittagessen");
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"de": tr}}));
    assert_eq!(resp.status, 200, "{}", resp.describe());
    let de = get(&share, Some("de"));
    assert!(de.text().contains("<h1>Mittagessen</h1>"), "{}", de.text());
    assert!(!de.text().contains("Déjeuner"));
    let it = get(&format!("{share}?lang=it"), Some("de"));
    assert!(it.text().contains("<h1 lang=\"fr\">Déjeuner</h1>"));
    // The switcher offers every language; on the share page as a button
    // that sends the vote form along (tests/web/vote.rs), elsewhere as a
    // plain link.
    for l in LANGS {
        assert!(it.text().contains(&format!("formaction=\"{share}?lang={l}\"")), "{l}");
        assert!(get("/privacy?lang=it", None).text().contains(&format!("href=\"/privacy?lang={l}\"")), "{l}");
    }
}

#[test]
fn a_page_never_links_to_another_site_through_its_own_path() {
    let server = Server::start();
    for path in ["//evil.example/x", "//evil.example", "/\\evil.example/x"] {
        let resp = server.get(path);
        let html = resp.text();
        assert!(html.contains("<html"), "{path}: {}", resp.describe());
        for attr in ["href=\"//", "action=\"//", "href=\"/\\", "action=\"/\\"] {
            assert!(!html.contains(attr), "{path}: the page links off-site with {attr}: {html}");
        }
    }
}

#[test]
fn hostile_text_is_escaped_on_every_page() {
    let server = Server::start();
    let evil = "<script>alert(1)</script>\"'&";
    let mut body = valid_poll_json();
    body["title"] = json!(evil);
    body["questions"][0]["label"] = json!("<img src=x onerror=alert(2)>");
    body["questions"][0]["options"][0] = json!("</label><b>bold</b>");
    body["resultsPublic"] = json!(true);
    let poll = server.create_poll(&body);
    let pages = [
        server.get(&format!("/p/{}", poll.id)),
        server.get(&format!("/p/{}/results", poll.id)),
        server.get(&format!("/p/{}/admin", poll.id)),
        server.post_form(&format!("/p/{}/admin", poll.id), "198.51.100.1", &[("token", &poll.token)]),
    ];
    for page in pages {
        let text = page.text();
        assert!(!text.contains("<script>alert"), "{text}");
        assert!(!text.contains("<img src=x"), "{text}");
        assert!(!text.contains("<b>bold"), "{text}");
        assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{text}");
    }
    // What people type in the form comes back escaped too.
    let resp = server.post_form("/", "198.51.100.2", &[("title", evil), ("lang", "en"), ("expiry", "7")]);
    assert_eq!(resp.status, 422);
    assert!(!resp.text().contains("<script>alert"));
    assert!(resp.text().contains("value=\"&lt;script&gt;alert(1)&lt;/script&gt;&quot;'&amp;\""), "{}", resp.text());
}
