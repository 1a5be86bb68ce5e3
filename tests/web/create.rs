//! The creation form: what was typed is kept on errors, problems are shown
//! at their fields in the reader's language, a form sent twice makes one
//! poll, and the form and the API share one creation limit.

use super::*;

#[test]
fn creation_form_keeps_input_on_errors_and_shows_the_links_once() {
    let server = Server::start();
    let ip = Server::fresh_client_ip();
    let resp = server.post_form(
        "/?lang=fr",
        &ip,
        &[("title", "  "), ("lang", "fr"), ("expiry", "90"), ("q0", "Où ?"), ("q0o0", "Ici"), ("q0o1", ""), ("q1", "")],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let text = resp.text();
    assert!(text.contains("Veuillez remplir ce champ."), "{text}");
    assert!(text.contains("Une question doit proposer entre 2 et 12 réponses."), "{text}");
    assert!(text.contains("value=\"Où ?\""), "typed text kept");
    assert!(text.contains("value=\"Ici\""));
    assert!(text.contains("<option value=\"90\" selected>"), "{text}");
    assert!(text.contains("aria-invalid=\"true\""));
    assert!(text.contains("href=\"#f-title\""), "summary links to the field");

    // A structural button adds a row and keeps everything.
    let resp = server.post_form("/", &ip, &[("title", "Kept"), ("q0", "Q"), ("q0o0", "A"), ("action", "add-question")]);
    assert_eq!(resp.status, 200);
    assert!(resp.text().contains("value=\"Kept\""));
    assert!(resp.text().contains("name=\"q1\""));

    let code = once(&server);
    let resp = server.post_form(
        "/",
        &ip,
        &[
            ("once", &code),
            ("title", "Lunch"),
            ("lang", "en"),
            ("expiry", "7"),
            ("results", "public"),
            ("q0", ""),
            ("q1", "Where?"),
            ("q1o0", "Pizza"),
            ("q1o1", ""),
            ("q1o2", "Sushi"),
        ],
    );
    assert_eq!(resp.status, 201, "{}", resp.describe());
    assert_page_headers(&resp);
    let text = resp.text();
    let share = input_value(&text, "id=\"link-share\"");
    let admin = input_value(&text, "id=\"link-admin\"");
    assert!(text.contains("It is shown only now"));
    // Two links to keep, not three: the results are a step from either.
    assert!(!text.contains("link-results"), "{text}");
    let base = &server.base_url;
    let id = share.strip_prefix(&format!("{base}/p/")).expect("share link");
    let token = admin.strip_prefix(&format!("{base}/p/{id}/admin#")).expect("admin link");
    // The poll is what was typed, blank rows left out.
    let api = server.get(&format!("/api/polls/{id}")).json();
    assert_eq!(api["title"], "Lunch");
    assert_eq!(api["resultsPublic"], true);
    assert_eq!(
        api["questions"],
        json!([{"type": "single", "label": "Where?", "options": ["Pizza", "Sushi"], "required": false}])
    );
    assert_eq!(server.delete(id, token).status, 204, "the admin key works");
}

/// The page after creation says back what was made (the title, its days,
/// the rule on repeated responses) in few words: it named none of it and
/// ran to 170 words with three links "to keep".
#[test]
fn the_created_page_names_the_poll_its_days_and_its_rule_in_few_words() {
    // polld's default day rule, which the page names.
    let server = Server::builder().arg(NETWORK_DAY_FLAG).arg("1").start();
    for (lang, rule, erased) in [
        ("en", "Limit on repeated responses: One response per network a day", "Will be erased on"),
        ("fr", "Limite des réponses répétées\u{202F}: Une réponse par réseau et par jour", "Sera effacé le"),
        ("de", "Begrenzung wiederholter Antworten: Eine Antwort pro Netz und Tag", "Wird am"),
        ("it", "Limite alle risposte ripetute: Una risposta per rete al giorno", "Verrà cancellato il"),
    ] {
        let code = once(&server);
        let resp = server.post_form(
            &format!("/?lang={lang}"),
            &Server::fresh_client_ip(),
            &[
                ("once", &code),
                ("title", "Team lunch <3"),
                ("lang", lang),
                ("expiry", "30"),
                ("closes", &date_from_today(10)),
                ("q0", "Where?"),
                ("q0o0", "Pizza"),
                ("q0o1", "Sushi"),
            ],
        );
        assert_eq!(resp.status, 201, "{lang}: {}", resp.describe());
        let html = resp.text();
        assert!(html.contains("Team lunch &lt;3"), "{lang}: the title: {html}");
        assert!(html.contains(r#"<time class="closes" datetime=""#), "{lang}: the closing day: {html}");
        assert!(html.contains(erased), "{lang}: the erase day: {html}");
        assert!(html.contains(&format!(r#"<p class="meta mode">{rule}"#)), "{lang}: the rule: {html}");
        let words = visible_words(main_of(&html));
        // About 35 of them say back the title, the days and the rule; the
        // rest, once 170 words, is about half that.
        assert!(words <= 115, "{lang}: {words} words on the created page: {}", visible_text(main_of(&html)));
    }
}

/// The page's `<main>`, without the tag itself.
fn main_of(html: &str) -> &str {
    let start = html.find("<main").and_then(|i| html[i..].find('>').map(|j| i + j + 1)).unwrap_or(0);
    let end = html.find("</main>").unwrap_or(html.len());
    &html[start..end.max(start)]
}

/// The words a reader sees in `html`: text outside tags.
fn visible_words(html: &str) -> usize {
    visible_text(html).split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count()
}

/// The text outside tags of `html`.
fn visible_text(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_creation_form_sent_twice_creates_one_poll() {
    let server = Server::start();
    let ip = "203.0.113.60";
    let count = |s: &Server| s.query_int("SELECT count(*) FROM sealed_polls", &[]);
    let code = once(&server);
    let fields = |code: &str| {
        vec![
            ("once".to_owned(), code.to_owned()),
            ("title".to_owned(), "Once only".to_owned()),
            ("lang".to_owned(), "en".to_owned()),
            ("expiry".to_owned(), "7".to_owned()),
            ("q0".to_owned(), "Q".to_owned()),
            ("q0o0".to_owned(), "a".to_owned()),
            ("q0o1".to_owned(), "b".to_owned()),
        ]
    };
    let send = |pairs: &[(String, String)]| {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.post_form("/", ip, &pairs)
    };
    assert_eq!(send(&fields(&code)).status, 201);
    // Back to the form (whose used code the browser keeps, see
    // tests/e2e/flows.mjs) or a reload of the page shown after creation
    // sends the same form again.
    let again = send(&fields(&code));
    assert_eq!(again.status, 409, "{}", again.describe());
    assert!(again.text().contains("Your poll was created when this form was first sent."), "{}", again.text());
    assert_eq!(count(&server), 1, "one poll, not two");
    // Said calmly, in every language: the poll exists, and the saved admin
    // link leads back to it; no "something went wrong".
    for (lang, title, admin, wrong) in [
        ("en", "This form was already sent", "admin link, open it", "Something went wrong"),
        ("fr", "Ce formulaire a déjà été envoyé", "lien d’administration, ouvrez-le", "Une erreur s’est produite"),
        (
            "de",
            "Dieses Formular wurde bereits gesendet",
            "Verwaltungslink gespeichert haben, öffnen Sie ihn",
            "Etwas ist schiefgegangen",
        ),
        ("it", "Questo modulo è già stato inviato", "link di amministrazione, aprilo", "Si è verificato un errore"),
    ] {
        // With a file held by the first send (released since): still the
        // same calm page, not the form with "the file is no longer held".
        let mut resent = fields(&code);
        resent.push(("pm-held".to_owned(), "released-since".to_owned()));
        let resent: Vec<(&str, &str)> = resent.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let again = server.post_form(&format!("/?lang={lang}"), ip, &resent);
        assert_eq!(again.status, 409, "{lang}");
        assert_page_headers(&again);
        let html = again.text();
        assert_eq!(html_lang(&again), lang);
        assert!(html.contains(&format!("<h1>{title}</h1>")), "{lang}: {html}");
        assert!(html.contains(admin), "{lang}: says how to get back: {html}");
        assert!(!html.contains(wrong), "{lang}: not an error: {html}");
        // The polls kept on this device (filled by the script).
        assert!(html.contains("id=\"my-polls\""), "{lang}: {html}");
        assert!(!html.contains("released-since"), "{lang}: a released file is not offered again: {html}");
    }
    assert_eq!(count(&server), 1, "still one poll");
    // "Create another poll": what was typed comes back as a form of its own,
    // without the used code or a released file, and makes a second poll.
    let html = again.text();
    let kept = hidden_fields(&html, "<form class=\"again\"");
    assert!(kept.contains(&("title".to_owned(), "Once only".to_owned())), "{kept:?}");
    assert!(kept.iter().all(|(name, _)| name != "once" && name != "action" && !name.ends_with("-held")), "{kept:?}");
    assert!(html.contains("name=\"action\" value=\"again\""), "{html}");
    let mut another = kept.clone();
    another.push(("action".to_owned(), "again".to_owned()));
    let form = send(&another);
    assert_eq!(form.status, 200, "{}", form.describe());
    let form = form.text();
    assert!(form.contains("value=\"Once only\"") && form.contains("value=\"Q\""), "typed text kept: {form}");
    assert!(form.contains("id=\"f-title\" name=\"title\"") && form.contains("autofocus"), "{form}");
    let fresh = input_value(&form, "name=\"once\"");
    assert_ne!(fresh, code, "a code of its own");
    assert_eq!(count(&server), 1, "nothing made until it is sent");
    assert_eq!(send(&fields(&fresh)).status, 201, "the fresh form makes a second poll");
    assert_eq!(count(&server), 2);
    // A form without a valid code is shown again with what was typed.
    let forged = send(&fields("not-a-code"));
    assert_eq!(forged.status, 409);
    assert!(forged.text().contains("value=\"Once only\""), "input kept");
    let fresh = input_value(&forged.text(), "name=\"once\"");
    assert_eq!(send(&fields(&fresh)).status, 201, "the form shown again works");
    assert_eq!(count(&server), 3);
}

/// The hidden fields of the form that starts at `start` in `html`: name
/// and value, as a browser sends them.
fn hidden_fields(html: &str, start: &str) -> Vec<(String, String)> {
    let form = html.split(start).nth(1).and_then(|rest| rest.split("</form>").next()).unwrap_or("");
    form.split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|tag| {
            let attr = |name: &str| tag.split(&format!("{name}=\"")).nth(1)?.split('"').next().map(str::to_owned);
            Some((attr("name")?, attr("value")?.replace("&amp;", "&")))
        })
        .collect()
}

#[test]
fn the_form_and_the_api_share_one_creation_limit() {
    let server = Server::start();
    let ip = "203.0.113.50";
    for _ in 0..10 {
        assert_eq!(server.create_from(ip, &valid_poll_json()).status, 201);
    }
    let resp = server.post_form(
        "/?lang=de",
        ip,
        &[
            ("once", &once(&server)),
            ("title", "Elf"),
            ("lang", "de"),
            ("expiry", "7"),
            ("q0", "F"),
            ("q0o0", "a"),
            ("q0o1", "b"),
        ],
    );
    assert_eq!(resp.status, 429, "{}", resp.describe());
    assert!(resp.header("retry-after").is_some());
    assert!(resp.text().contains("Sie haben in kurzer Zeit viele Umfragen erstellt."), "{}", resp.text());
    assert!(resp.text().contains("value=\"Elf\""), "input kept");
    // Another client is not affected.
    let ok = server.post_form(
        "/",
        "203.0.113.51",
        &[
            ("once", &once(&server)),
            ("title", "x"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", "F"),
            ("q0o0", "a"),
            ("q0o1", "b"),
        ],
    );
    assert_eq!(ok.status, 201);
}

/// The creation form's type fields: their problems are shown at them, with
/// what was typed kept.
#[test]
fn the_creation_form_shows_type_problems_at_their_fields() {
    let server = Server::start();
    let resp = server.post_form(
        "/",
        &Server::fresh_client_ip(),
        &[
            ("title", "Checks"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", "Pick"),
            ("q0type", "multiple"),
            ("q0o0", "a"),
            ("q0o1", "b"),
            ("q0o2", "c"),
            ("q0min", "3"),
            ("q0max", "2"),
            ("q1", "Rate"),
            ("q1type", "scale"),
            ("q1from", "6"),
            ("q1to", "4"),
            ("q1high", "Best"),
        ],
    );
    assert_eq!(resp.status, 422, "{}", resp.describe());
    let html = resp.text();
    for (id, message) in [("f-q0-max", "Only 3 is possible here."), ("f-q1-to", "Choose an end above the start (6).")] {
        assert!(html.contains(&format!(r#"<p class="field-error" id="{id}-error">{message}</p>"#)), "{id}: {html}");
        assert!(html.contains(&format!(r##"<a href="#{id}">"##)), "{id}: summary link");
        assert!(
            html.contains(&format!(r#"aria-describedby="{id}-error""#)) || html.contains(&format!(r#" {id}-error""#)),
            "{id}"
        );
    }
    assert!(html.contains(r#"<option value="multiple" selected>Several answers</option>"#), "{html}");
    assert!(html.contains(r#"<option value="scale" selected>Scale</option>"#), "{html}");
    assert!(html.contains(r#"name="q0min" value="3""#), "{html}");
    assert!(html.contains(r#"<option value="6" selected>6</option>"#), "{html}");
    assert!(html.contains(r#"name="q1high" value="Best""#), "{html}");
}

/// The error summary names a scale's end so that it reads away from its
/// field: "Question 1, To" said nothing (fr "À", de "Bis", it "A").
#[test]
fn the_error_summary_names_a_scales_end_in_words_in_every_language() {
    let server = Server::start();
    for (lang, name) in [
        ("en", "Question 1, the scale’s highest value (To)"),
        ("fr", "Question 1, la plus grande valeur de l’échelle (À)"),
        ("de", "Frage 1, der größte Wert der Skala (Bis)"),
        ("it", "Domanda 1, il valore più alto della scala (A)"),
    ] {
        let resp = server.post_form(
            &format!("/?lang={lang}"),
            &Server::fresh_client_ip(),
            &[
                ("title", "Checks"),
                ("lang", lang),
                ("expiry", "7"),
                ("q0", "Rate"),
                ("q0type", "scale"),
                ("q0from", "6"),
                ("q0to", "4"),
            ],
        );
        assert_eq!(resp.status, 422, "{lang}: {}", resp.describe());
        let html = resp.text();
        assert!(html.contains(&format!(r##"<a href="#f-q0-to">{name}</a>"##)), "{lang}: {html}");
    }
}

/// Issue 24, item 7: a creation form whose title and option are made only
/// of invisible characters comes back at those fields, saying so in the
/// reader's language.
#[test]
fn invisible_texts_are_refused_at_their_fields_in_every_language() {
    let server = Server::start();
    let ip = Server::fresh_client_ip();
    let says = [
        ("en", "holds only invisible characters"),
        ("fr", "ne contient que des caractères invisibles"),
        ("de", "enthält nur unsichtbare Zeichen"),
        ("it", "contiene solo caratteri invisibili"),
    ];
    for (lang, words) in says {
        let code = once(&server);
        let resp = server.post_form(
            &format!("/?lang={lang}"),
            &ip,
            &[
                ("once", &code),
                ("title", "\u{e0001}\u{e0020}\u{2800}"),
                ("lang", lang),
                ("expiry", "7"),
                ("q0", "Q"),
                ("q0o0", "\u{1d173}\u{fff9}"),
                ("q0o1", "B"),
            ],
        );
        assert_eq!(resp.status, 422, "{}", resp.describe());
        let text = resp.text();
        assert_eq!(text.matches(words).count(), 4, "{lang}: title and option, in the summary and at each\n{text}");
        assert!(text.contains("href=\"#f-title\""), "{lang}: the summary links to the title");
    }
}

/// The blank creation form offers what a quick poll wants: results shown
/// to each voter after voting. A form sent without the field keeps the
/// API's default (private), as before.
#[test]
fn the_blank_form_shows_results_after_voting_and_the_api_default_stays() {
    let server = Server::start();
    for lang in LANGS {
        let html = server.get(&format!("/?lang={lang}")).text();
        for value in ["public", "afterVote", "afterClose", "private"] {
            let checked = html.contains(&format!(r#"name="results" value="{value}" checked"#));
            assert_eq!(checked, value == "afterVote", "{lang}: {value}: {html}");
        }
    }
    let code = once(&server);
    let resp = server.post_form(
        "/",
        &Server::fresh_client_ip(),
        &[("once", &code), ("title", "T"), ("lang", "en"), ("expiry", "7"), ("q0", "Q"), ("q0o0", "a"), ("q0o1", "b")],
    );
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let share = input_value(&resp.text(), "id=\"link-share\"");
    let id = share.rsplit('/').next().unwrap();
    assert_eq!(server.get(&format!("/api/polls/{id}")).json()["resultsVisibility"], "private");
}
