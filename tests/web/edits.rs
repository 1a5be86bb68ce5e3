//! The admin page's "Title and questions" (issue 37): texts fixed on a poll
//! with responses (the counts kept, the structure refused at its field),
//! and while nobody has answered, answers and questions added and removed
//! by buttons that work without script; in several languages.

use super::admin::admin_done;
use super::*;

/// The fields of the dashboard's "Title and questions" form, as a browser
/// sends them: every input's name and value (the key among them).
fn edit_fields(html: &str) -> Vec<(String, String)> {
    let start = html.find("id=\"edit-section\"").unwrap_or_else(|| panic!("no edit section: {html}"));
    let form = html[start..].split("</form>").next().unwrap();
    form.split("<input")
        .skip(1)
        .filter_map(|tag| {
            let tag = tag.split('>').next()?;
            let attr = |name: &str| tag.split(&format!(" {name}=\"")).nth(1).map(|v| v.split('"').next().unwrap_or(""));
            Some((attr("name")?.to_owned(), attr("value").unwrap_or("").replace("&amp;", "&")))
        })
        .collect()
}

fn set(fields: &mut Vec<(String, String)>, name: &str, value: &str) {
    match fields.iter_mut().find(|(n, _)| n == name) {
        Some(f) => f.1 = value.to_owned(),
        None => fields.push((name.to_owned(), value.to_owned())),
    }
}

fn post(server: &Server, path: &str, ip: &str, fields: &[(String, String)], action: &str) -> Response {
    let mut all: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    all.push(("action", action));
    server.post_form(path, ip, &all)
}

#[test]
fn with_responses_the_admin_page_fixes_texts_only() {
    let server = Server::start();
    let poll = server.create_default();
    server.vote(&poll.id, &[Some(2), Some(0)], "198.51.100.61").unwrap();
    let path = format!("/p/{}/admin?lang=fr", poll.id);
    let ip = "198.51.100.62";
    let dash = server.post_form(&path, ip, &[("token", &poll.token)]).text();
    assert!(dash.contains("Titre et questions"), "{dash}");
    assert!(dash.contains("Le sondage a des réponses"), "{dash}");
    assert!(!dash.contains("texts-add-question") && !dash.contains("texts-remove-"), "no row to add or remove");
    let mut fields = edit_fields(&dash);
    assert!(fields.contains(&("eq0o2".to_owned(), "Salad".to_owned())), "{fields:?}");
    set(&mut fields, "et", "Team lunch (fixed)");
    set(&mut fields, "eq0o2", "Salads");
    let mut done: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    done.push(("action", "texts-save"));
    let dash = admin_done(&server, &path, ip, &done).text();
    assert!(dash.contains("Vos modifications sont enregistrées."), "{dash}");
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_eq!((&p["title"], &p["questions"][0]["options"][2]), (&json!("Team lunch (fixed)"), &json!("Salads")));
    assert_eq!(p["editedOn"], today());
    let results = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(results["questions"][0]["options"][2]["count"], 1, "the vote for Salad counts for Salads");
    // The dashboard says the poll was edited, with the day, in its language.
    assert!(dash.contains("Modifié le "), "{dash}");

    // A form that would add an answer (built by hand: the page offers no
    // button) is refused at the question, in the page's words, the texts
    // kept; nothing changes.
    let mut fields = edit_fields(&dash);
    set(&mut fields, "eq0o3", "Curry");
    set(&mut fields, "eq1", "Quel jour ?");
    let r = post(&server, &path, ip, &fields, "texts-save");
    assert_eq!(r.status, 422, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("href=\"#a-eq0-set\""), "{html}");
    assert!(html.contains("Ceci ne peut plus changer"), "{html}");
    assert!(html.contains("value=\"Quel jour ?\""), "the texts typed are kept: {html}");
    assert_eq!(server.get(&format!("/api/polls/{}", poll.id)).json()["questions"][1]["label"], "Which day?");
}

#[test]
fn without_responses_answers_and_questions_are_added_and_removed() {
    let server = Server::start();
    let poll = server.create_default();
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": valid_translation()}})).assert_status(200);
    let path = format!("/p/{}/admin?lang=de", poll.id);
    let ip = "198.51.100.63";
    let dash = server.post_form(&path, ip, &[("token", &poll.token)]).text();
    assert!(dash.contains("Titel und Fragen") && dash.contains("Noch hat niemand geantwortet"), "{dash}");
    assert!(dash.contains("werden die Sprachfassungen entfernt"), "the page warns of the versions: {dash}");
    // Add an answer to the first question: the form comes back with a blank
    // answer, focused, and everything typed kept.
    let mut fields = edit_fields(&dash);
    set(&mut fields, "eq1", "Welcher Tag?");
    let r = post(&server, &path, ip, &fields, "texts-add-option:0");
    assert_eq!(r.status, 200, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("id=\"a-eq0o3\" name=\"eq0o3\" value=\"\" maxlength=\"200\" autofocus"), "{html}");
    assert!(html.contains("value=\"Welcher Tag?\""));
    assert_eq!(
        server.get(&format!("/api/polls/{}", poll.id)).json()["questions"][0]["options"].as_array().unwrap().len(),
        3
    );
    // Saved with the new answer blank: refused at that field.
    let mut fields = edit_fields(&html);
    let r = post(&server, &path, ip, &fields, "texts-save");
    assert_eq!(r.status, 422);
    assert!(r.text().contains("href=\"#a-eq0o3\""), "{}", r.text());
    // Remove the second question, add a new one, fill everything in, save.
    set(&mut fields, "eq0o3", "Curry");
    let html = post(&server, &path, ip, &fields, "texts-remove-question:1").text();
    assert!(!html.contains("name=\"eq1\""), "{html}");
    let html = post(&server, &path, ip, &edit_fields(&html), "texts-add-question").text();
    let mut fields = edit_fields(&html);
    assert!(fields.contains(&("eq1from".to_owned(), String::new())), "a new question: {fields:?}");
    set(&mut fields, "eq1", "Mit Nachtisch?");
    set(&mut fields, "eq1o0", "Ja");
    set(&mut fields, "eq1o1", "Nein");
    let html = post(&server, &path, ip, &fields, "texts-remove-option:0:1").text();
    let fields = edit_fields(&html);
    let mut done: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    done.push(("action", "texts-save"));
    let dash = admin_done(&server, &path, ip, &done).text();
    assert!(dash.contains("Die Sprachfassungen wurden entfernt"), "{dash}");
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_eq!(p["questions"][0]["options"], json!(["Pizza", "Salad", "Curry"]));
    assert_eq!(
        p["questions"][1],
        json!({"type": "single", "label": "Mit Nachtisch?", "options": ["Ja", "Nein"], "required": false})
    );
    assert_eq!(p["translations"], json!({}));
    // The counts follow the new questions.
    server.vote(&poll.id, &[Some(2), Some(1)], "198.51.100.64").unwrap();
    let results = server.get_auth(&poll.results_path(), &poll.token).json();
    let curry = &results["questions"][0]["options"][2];
    assert_eq!((&curry["label"], &curry["count"]), (&json!("Curry"), &json!(1)));
    // Now it has a response: the page in English offers texts only.
    let dash = server.post_form(&format!("/p/{}/admin", poll.id), ip, &[("token", &poll.token)]).text();
    assert!(dash.contains("The poll has responses") && !dash.contains("texts-add-question"), "{dash}");
}

/// A vote form loaded before the questions changed structure (possible
/// only while the poll has no response) is not counted against the new
/// questions: its answers' indexes would mean other answers. The voter gets
/// the questions as they are now, with why (409); nothing is counted.
#[test]
fn a_form_read_before_the_questions_changed_is_answered_afresh() {
    let server = Server::start();
    let poll = server.create_default();
    let ip = "198.51.100.65";
    let page = server.request("GET", &format!("/p/{}", poll.id)).xff(ip).send().text();
    assert!(page.contains("name=\"rev\" value=\"0\""), "{page}");
    let code = ballot(&page);
    let swapped = json!([
        {"label": "Which day?", "options": ["Monday", "Friday"]},
        {"label": "Where shall we eat?", "options": ["Pizza", "Sushi", "Salad"]}
    ]);
    server.patch_json(&poll.id, &poll.token, &json!({"questions": swapped})).assert_status(200);
    let fields = [("ballot", code.as_str()), ("rev", "0"), ("q0", "1"), ("q1", "1")];
    let r = server.post_form(&format!("/p/{}", poll.id), ip, &fields);
    assert_eq!(r.status, 409, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("The poll’s questions changed after you opened this page"), "{html}");
    assert!(html.contains("name=\"rev\" value=\"1\""), "the form as the questions are now: {html}");
    assert_eq!(total(&server, &poll), 0, "nothing counted");
    // The form as it is now counts.
    let page = server.request("GET", &format!("/p/{}", poll.id)).xff(ip).send().text();
    let code = ballot(&page);
    let fields = [("ballot", code.as_str()), ("rev", "1"), ("q0", "1")];
    assert_eq!(server.post_form(&format!("/p/{}", poll.id), ip, &fields).status, 200);
    assert_eq!(total(&server, &poll), 1);
}

/// A schedule's label is fixed like any text; its slots and zone, what its
/// answers mean, are shown but not offered as texts, and stay as they were.
#[test]
fn a_schedules_label_is_fixed_and_its_slots_kept() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"] = json!([
        {"type": "schedule", "label": "Wehn?", "options": ["2027-05-03", "2027-05-04T18:00"], "timeZone": "Europe/Rome"}
    ]);
    let poll = server.create_poll(&body);
    let fields = [("q0s1".to_owned(), "yes".to_owned())];
    server.vote_fields(&poll.id, &fields, "198.51.100.71").unwrap();
    let path = format!("/p/{}/admin", poll.id);
    let ip = "198.51.100.72";
    let dash = server.post_form(&path, ip, &[("token", &poll.token)]).text();
    assert!(dash.contains("<li>Tuesday 4 May 2027, 18:00</li>"), "the slots, shown: {dash}");
    let mut fields = edit_fields(&dash);
    assert!(!fields.iter().any(|(n, _)| n.starts_with("eq0o")), "no slot as a text to fix: {fields:?}");
    set(&mut fields, "eq0", "When?");
    let mut done: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    done.push(("action", "texts-save"));
    let dash = admin_done(&server, &path, ip, &done).text();
    assert!(dash.contains("Your changes are saved."), "{dash}");
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_eq!(
        p["questions"][0],
        json!({"type": "schedule", "label": "When?", "required": false, "timeZone": "Europe/Rome",
               "options": ["2027-05-03", "2027-05-04T18:00"]})
    );
    let results = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(results["questions"][0]["slots"][1]["yes"], 1, "{results}");
}

/// A form that added or removed rows is a new structure even where its
/// shape matches the old one (a question removed, another of its type
/// added): a response that came in while the form was open makes the
/// writer refuse it, rather than count that response under another
/// question.
#[test]
fn rows_changed_in_a_form_drawn_before_a_response_are_refused() {
    let server = Server::start();
    let poll = server.create_default();
    let path = format!("/p/{}/admin", poll.id);
    let ip = "198.51.100.81";
    let dash = server.post_form(&path, ip, &[("token", &poll.token)]).text();
    let mut fields = edit_fields(&dash);
    assert!(dash.contains("texts-remove-question"), "rows can be changed while nobody answered: {dash}");
    // The form as a person left it after a remove and an add of the same
    // shape: the same fields, marked reshaped.
    set(&mut fields, "ereshaped", "1");
    set(&mut fields, "eq0", "Another question");
    server.vote(&poll.id, &[Some(1), None], "198.51.100.82").unwrap();
    let resp = post(&server, &path, ip, &fields, "texts-save");
    let text = resp.text();
    assert!(!text.contains("Your changes are saved."), "{text}");
    assert!(text.contains("This can no longer change: the poll has responses."), "{text}");
    let p = server.get(&format!("/api/polls/{}", poll.id)).json();
    assert_ne!(p["questions"][0]["label"], "Another question", "{p}");
    assert!(p.get("editedOn").is_none_or(serde_json::Value::is_null), "{p}");
}
