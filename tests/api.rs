//! Black-box tests of the polld JSON API over raw HTTP/1.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

// ===========================================================================
// Process lifecycle
// ===========================================================================

#[test]
fn server_announces_address_and_answers() {
    let server = Server::start();
    assert!(server.listen_url.starts_with("http://127.0.0.1:"));
    let port: u16 = server.addr.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "announced port 0 instead of the bound port");
    server.get("/api").assert_status(200);
}

#[test]
fn sigterm_exits_gracefully_with_code_zero() {
    let mut server = Server::start();
    server.create_default();
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM: {status:?}");
}

#[test]
fn polls_survive_a_restart() {
    let server = Server::start();
    let poll = server.create_default();
    let dir = server.into_dir();
    let server = Server::builder().in_dir(dir).start();
    let resp = server.get(&poll.path());
    resp.assert_status(200);
    assert_eq!(resp.json()["title"], "Team lunch");
    server.get_auth(&poll.results_path(), &poll.token).assert_status(200);
}

#[test]
fn unknown_paths_are_404() {
    let server = Server::start();
    for path in ["/api/nothing", "/api/polls/x/y/z", "/api/pollsx"] {
        let resp = server.get(path);
        assert_eq!(resp.status, 404, "{}", resp.describe());
    }
}

// ===========================================================================
// GET /api — OpenAPI document
// ===========================================================================

fn api_doc(server: &Server) -> Value {
    let resp = server.get("/api");
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"), "{}", resp.describe());
    resp.json()
}

/// Resolve a local `$ref` (`#/components/schemas/X`) once.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => r.strip_prefix('#').and_then(|p| doc.pointer(p)).unwrap_or(v),
        None => v,
    }
}

/// Every schema found as `properties.<name>` anywhere in the document.
fn property_schemas<'a>(doc: &'a Value, name: &str) -> Vec<&'a Value> {
    fn walk<'a>(doc: &'a Value, v: &'a Value, name: &str, out: &mut Vec<&'a Value>) {
        match v {
            Value::Object(map) => {
                if let Some(p) = map.get("properties").and_then(|p| p.get(name)) {
                    out.push(resolve(doc, p));
                }
                for item in map.values() {
                    walk(doc, item, name, out);
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(doc, item, name, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, doc, name, &mut out);
    out
}

#[test]
fn api_doc_is_openapi_3_1() {
    let server = Server::start();
    let doc = api_doc(&server);
    let version = doc["openapi"].as_str().unwrap_or_default();
    assert!(version.starts_with("3.1"), "openapi = {version:?}");
    assert!(doc["info"]["title"].is_string(), "info.title missing");
    assert!(doc["info"]["version"].is_string(), "info.version missing");
}

#[test]
fn api_doc_lists_every_path() {
    let server = Server::start();
    let doc = api_doc(&server);
    let paths = doc["paths"].as_object().expect("paths object");
    for p in ["/api", "/api/polls", "/api/polls/{id}", "/api/polls/{id}/results"] {
        assert!(paths.contains_key(p), "path {p} missing: {:?}", paths.keys());
    }
    assert!(paths["/api/polls"].get("post").is_some());
    for m in ["get", "patch", "delete"] {
        assert!(paths["/api/polls/{id}"].get(m).is_some(), "{m} /api/polls/{{id}} undocumented");
    }
    assert!(paths["/api/polls/{id}/results"].get("get").is_some());
}

#[test]
fn api_doc_has_bearer_security_scheme() {
    let server = Server::start();
    let doc = api_doc(&server);
    let schemes = doc["components"]["securitySchemes"].as_object().expect("components.securitySchemes");
    assert!(
        schemes
            .values()
            .any(|s| s["type"] == "http" && s["scheme"].as_str().is_some_and(|x| x.eq_ignore_ascii_case("bearer"))),
        "no http bearer scheme in {schemes:?}"
    );
}

#[test]
fn api_doc_schema_bounds() {
    let server = Server::start();
    let doc = api_doc(&server);
    let has = |name: &str, check: &dyn Fn(&Value) -> bool| {
        let schemas = property_schemas(&doc, name);
        assert!(
            schemas.iter().any(|s| check(s)),
            "no schema for property {name} with the expected bounds; found {schemas:?}"
        );
    };
    has("questions", &|s| s["maxItems"] == 20 && s["minItems"] == 1);
    has("options", &|s| s["maxItems"] == 12 && s["minItems"] == 2);
    has("expiryDays", &|s| s["enum"] == json!([7, 30, 90, 365, 730]));
    has("lang", &|s| {
        let mut langs: Vec<&str> =
            s["enum"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        langs.sort_unstable();
        langs == ["de", "en", "fr", "it"]
    });
    has("title", &|s| s["maxLength"] == 200);
}

#[test]
fn api_doc_has_curl_example() {
    let server = Server::start();
    let doc = api_doc(&server);
    let example = doc["info"]["x-example"].to_string() + &doc["info"]["description"].to_string();
    assert!(example.contains("curl"), "no curl example in info: {}", doc["info"]);
}

#[test]
fn api_doc_other_methods_are_405() {
    let server = Server::start();
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let resp = server.request(method, "/api").send();
        assert_problem(&resp, 405);
        let allow = resp.header("allow").unwrap_or_default();
        assert!(allow.contains("GET"), "Allow lacks GET: {}", resp.describe());
    }
}

// ===========================================================================
// POST /api/polls — success
// ===========================================================================

#[test]
fn create_returns_201_location_no_store() {
    let server = Server::start();
    let resp = server.post_json("/api/polls", &valid_poll_json());
    resp.assert_status(201);
    let body = resp.json();
    let id = body["id"].as_str().unwrap();
    assert_eq!(resp.header("location"), Some(format!("/api/polls/{id}").as_str()));
    let cc = resp.header("cache-control").unwrap_or_default();
    assert!(cc.contains("no-store"), "Cache-Control: {cc:?}");
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
}

#[test]
fn create_response_body_shape() {
    let server = Server::start();
    let poll = server.create_default();
    let b = &poll.body;
    let base = &server.base_url;
    assert_eq!(poll.id.len(), 16, "id {:?}", poll.id);
    assert!(is_url_safe(&poll.id), "id {:?}", poll.id);
    assert_eq!(poll.token.len(), 43, "token {:?}", poll.token);
    assert!(is_url_safe(&poll.token), "token {:?}", poll.token);
    assert_eq!(base64url_decode(&poll.token).map(|v| v.len()), Some(32));
    assert_eq!(b["shareUrl"], format!("{base}/p/{}", poll.id));
    assert_eq!(b["adminUrl"], format!("{base}/p/{}/admin#{}", poll.id, poll.token));
    assert_eq!(b["resultsUrl"], format!("{base}/p/{}/results", poll.id));
    assert_eq!(b["expiresOn"], date_from_today(30));
    let p = &b["poll"];
    assert_eq!(p["id"], poll.id.as_str());
    assert_eq!(p["title"], "Team lunch");
    assert_eq!(p["lang"], "en");
    assert_eq!(p["status"], "open");
    assert_eq!(p["resultsPublic"], false);
    assert_eq!(p["createdOn"], today());
    assert_eq!(p["expiresOn"], date_from_today(30));
    assert_eq!(p["translations"], json!({}));
    assert_eq!(p["media"], json!([]));
    assert_eq!(p["shareUrl"], b["shareUrl"]);
    assert_eq!(
        p["questions"],
        json!([
            {"type": "single", "label": "Where shall we eat?", "options": ["Pizza", "Sushi", "Salad"]},
            {"type": "single", "label": "Which day?", "options": ["Monday", "Friday"]}
        ])
    );
}

#[test]
fn create_poll_equals_get_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let got = server.get(&poll.path());
    got.assert_status(200);
    assert_eq!(got.json(), poll.body["poll"]);
}

#[test]
fn default_base_url_is_listen_address() {
    let server = Server::start();
    let poll = server.create_default();
    assert_eq!(poll.body["shareUrl"], format!("http://{}/p/{}", server.addr, poll.id));
}

#[test]
fn base_url_flag_is_used_in_links() {
    let server = Server::builder().base_url("https://polls.example.org").start();
    let poll = server.create_default();
    assert_eq!(poll.body["shareUrl"], format!("https://polls.example.org/p/{}", poll.id));
    assert_eq!(poll.body["adminUrl"], format!("https://polls.example.org/p/{}/admin#{}", poll.id, poll.token));
    assert_eq!(poll.body["resultsUrl"], format!("https://polls.example.org/p/{}/results", poll.id));
    assert_eq!(server.get(&poll.path()).json()["shareUrl"], poll.body["shareUrl"]);
}

#[test]
fn every_expiry_value_sets_expires_on() {
    let server = Server::start();
    for days in [7, 30, 90, 365, 730] {
        let poll = server.create_poll(&with(valid_poll_json(), "/expiryDays", json!(days)));
        assert_eq!(poll.body["expiresOn"], date_from_today(days), "expiryDays {days}");
        assert_eq!(poll.body["poll"]["expiresOn"], date_from_today(days));
    }
}

#[test]
fn every_language_is_accepted() {
    let server = Server::start();
    for lang in ["en", "fr", "de", "it"] {
        let poll = server.create_poll(&with(valid_poll_json(), "/lang", json!(lang)));
        assert_eq!(poll.body["poll"]["lang"], lang);
    }
}

#[test]
fn results_public_defaults_to_false() {
    let server = Server::start();
    let poll = server.create_poll(&without(valid_poll_json(), "/resultsPublic"));
    assert_eq!(poll.body["poll"]["resultsPublic"], false);
    assert_eq!(server.get(&poll.results_path()).status, 401);
}

#[test]
fn results_public_true_is_kept() {
    let server = Server::start();
    let poll = server.create_public();
    assert_eq!(poll.body["poll"]["resultsPublic"], true);
    server.get(&poll.results_path()).assert_status(200);
}

#[test]
fn ids_and_tokens_are_unique() {
    let server = Server::start();
    let polls: Vec<Created> = (0..5).map(|_| server.create_default()).collect();
    for (i, a) in polls.iter().enumerate() {
        for b in &polls[i + 1..] {
            assert_ne!(a.id, b.id);
            assert_ne!(a.token, b.token);
        }
    }
}

#[test]
fn content_type_parameters_and_case_are_accepted() {
    let server = Server::start();
    let body = serde_json::to_vec(&valid_poll_json()).unwrap();
    for ct in ["application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"] {
        let resp = server.post_bytes("/api/polls", Some(ct), &body);
        assert_eq!(resp.status, 201, "Content-Type {ct:?}: {}", resp.describe());
    }
}

#[test]
fn boundary_sizes_are_accepted() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("t".repeat(200));
    body["questions"] = questions(20, 12);
    body["questions"][0]["label"] = json!("l".repeat(500));
    body["questions"][0]["options"][11] = json!("o".repeat(200));
    let poll = server.create_poll(&body);
    let p = &poll.body["poll"];
    assert_eq!(p["title"].as_str().unwrap().chars().count(), 200);
    assert_eq!(p["questions"].as_array().unwrap().len(), 20);
    assert_eq!(p["questions"][0]["options"].as_array().unwrap().len(), 12);
    assert_eq!(p["questions"][0]["label"].as_str().unwrap().len(), 500);
}

#[test]
fn two_options_and_one_question_are_accepted() {
    let server = Server::start();
    let poll = server.create_poll(&with(valid_poll_json(), "/questions", questions(1, 2)));
    assert_eq!(poll.body["poll"]["questions"].as_array().unwrap().len(), 1);
}

#[test]
fn lengths_count_characters_not_bytes() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("é".repeat(200));
    body["questions"][0]["label"] = json!("日".repeat(500));
    body["questions"][0]["options"][0] = json!("ü".repeat(200));
    let poll = server.create_poll(&body);
    assert_eq!(poll.body["poll"]["title"], "é".repeat(200));
}

// ===========================================================================
// POST /api/polls — validation (422)
// ===========================================================================

fn post(server: &Server, body: &Value) -> Response {
    server.post_json("/api/polls", body)
}

#[test]
fn title_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/title")), "title");
}

#[test]
fn title_empty_or_blank() {
    let server = Server::start();
    for t in ["", "   ", "\u{3000}\t "] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_201_chars_rejected() {
    let server = Server::start();
    for t in ["t".repeat(201), "é".repeat(201)] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_control_characters_rejected() {
    let server = Server::start();
    for t in ["bad\u{0}title", "bell\u{7}", "esc\u{1b}[31mred", "two\nlines"] {
        let resp = post(&server, &with(valid_poll_json(), "/title", json!(t)));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn title_wrong_types() {
    let server = Server::start();
    for v in [json!(5), json!(null), json!(true), json!(["x"]), json!({"t": "x"})] {
        let resp = post(&server, &with(valid_poll_json(), "/title", v));
        assert_422_field(&resp, "title");
    }
}

#[test]
fn lang_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/lang")), "lang");
}

#[test]
fn lang_unsupported_values() {
    let server = Server::start();
    for v in [json!("es"), json!("EN"), json!(""), json!("en-GB"), json!(1), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/lang", v));
        assert_422_field(&resp, "lang");
    }
}

#[test]
fn expiry_days_missing() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/expiryDays")), "expiryDays");
}

#[test]
fn expiry_days_invalid_values() {
    let server = Server::start();
    for v in [
        json!(0),
        json!(1),
        json!(8),
        json!(29),
        json!(731),
        json!(-7),
        json!(7.5),
        json!("30"),
        json!(null),
        json!([30]),
        json!(1e20),
    ] {
        let resp = post(&server, &with(valid_poll_json(), "/expiryDays", v.clone()));
        assert_422_field(&resp, "expiryDays");
    }
}

#[test]
fn results_public_wrong_types() {
    let server = Server::start();
    for v in [json!("true"), json!(1), json!([])] {
        let resp = post(&server, &with(valid_poll_json(), "/resultsPublic", v));
        assert_422_field(&resp, "resultsPublic");
    }
}

#[test]
fn questions_missing_or_empty() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/questions")), "questions");
    assert_422_field(&post(&server, &with(valid_poll_json(), "/questions", json!([]))), "questions");
}

#[test]
fn questions_21_rejected() {
    let server = Server::start();
    let resp = post(&server, &with(valid_poll_json(), "/questions", questions(21, 2)));
    assert_422_field(&resp, "questions");
}

#[test]
fn questions_wrong_types() {
    let server = Server::start();
    for v in [json!({"type": "single"}), json!("q"), json!(3), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions", v));
        assert_422_field(&resp, "questions");
    }
}

#[test]
fn question_item_not_an_object() {
    let server = Server::start();
    for v in [json!("just a string"), json!(["a", "b"]), json!(null), json!(7)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1", v));
        assert_422_field_prefix(&resp, "questions[1]");
    }
}

#[test]
fn question_type_invalid() {
    let server = Server::start();
    for v in [json!("multiple"), json!("SINGLE"), json!(""), json!(1), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/type", v));
        assert_422_field(&resp, "questions[0].type");
    }
}

#[test]
fn question_label_invalid() {
    let server = Server::start();
    for v in [json!(""), json!("  "), json!("l".repeat(501)), json!("ctl\u{1}label"), json!(42), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1/label", v));
        assert_422_field(&resp, "questions[1].label");
    }
    let resp = post(&server, &without(valid_poll_json(), "/questions/1/label"));
    assert_422_field(&resp, "questions[1].label");
}

#[test]
fn options_count_out_of_bounds() {
    let server = Server::start();
    for n in [0usize, 1, 13] {
        let opts: Vec<String> = (0..n).map(|i| format!("opt {i}")).collect();
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", json!(opts)));
        assert_422_field(&resp, "questions[0].options");
    }
}

#[test]
fn options_missing_or_not_array() {
    let server = Server::start();
    assert_422_field(&post(&server, &without(valid_poll_json(), "/questions/0/options")), "questions[0].options");
    for v in [json!("a,b"), json!({"0": "a", "1": "b"}), json!(null)] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", v));
        assert_422_field(&resp, "questions[0].options");
    }
}

#[test]
fn options_duplicates_rejected() {
    let server = Server::start();
    for opts in [json!(["Same", "Same"]), json!(["Same", " Same "]), json!(["A", "B", "A"])] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/1/options", opts));
        assert_422_field_prefix(&resp, "questions[1].options");
    }
}

#[test]
fn option_text_invalid() {
    let server = Server::start();
    for v in [
        json!(""),
        json!("   "),
        json!("o".repeat(201)),
        json!("tab\there"),
        json!("nul\u{0}"),
        json!(5),
        json!(null),
        json!(["nested"]),
    ] {
        let resp = post(&server, &with(valid_poll_json(), "/questions/0/options/1", v));
        assert_422_field(&resp, "questions[0].options[1]");
    }
}

#[test]
fn unknown_fields_rejected() {
    let server = Server::start();
    for (ptr, v) in [
        ("/extra", json!(1)),
        ("/id", json!("AAAAAAAAAAAAAAAA")),
        ("/adminToken", json!("x".repeat(43))),
        ("/status", json!("closed")),
        ("/questions/0/extra", json!(true)),
    ] {
        let resp = post(&server, &with(valid_poll_json(), ptr, v));
        assert_422(&resp);
    }
}

#[test]
fn several_errors_are_reported_together() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["title"] = json!("");
    body["lang"] = json!("xx");
    body["questions"][1]["options"] = json!(["only one"]);
    let fields = assert_422(&post(&server, &body));
    for f in ["title", "lang", "questions[1].options"] {
        assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
    }
}

#[test]
fn top_level_not_an_object() {
    let server = Server::start();
    for v in [json!([valid_poll_json()]), json!("poll"), json!(1), json!(null), json!({})] {
        let resp = post(&server, &v);
        assert_422(&resp);
    }
}

#[test]
fn nested_junk_within_parser_limits_is_422() {
    let server = Server::start();
    let junk: Value = serde_json::from_str(&("[".repeat(60) + &"]".repeat(60))).unwrap();
    let resp = post(&server, &with(valid_poll_json(), "/questions/0/options", junk));
    assert_422_field_prefix(&resp, "questions[0].options");
    let junk = json!({"a": {"b": {"c": {"d": [1, {"e": null}]}}}});
    let resp = post(&server, &with(valid_poll_json(), "/title", junk));
    assert_422_field(&resp, "title");
}

#[test]
fn extremely_deep_nesting_is_rejected_and_server_survives() {
    let server = Server::start();
    for body in [
        format!(r#"{{"title":{}1{}}}"#, "[".repeat(100_000), "]".repeat(100_000)),
        "{\"a\":".repeat(40_000) + "1" + &"}".repeat(40_000),
    ] {
        assert!(body.len() < BODY_LIMIT);
        let resp = server.post_bytes("/api/polls", Some("application/json"), body.as_bytes());
        assert!(resp.status == 400 || resp.status == 422, "deep nesting: {}", resp.describe());
        assert_problem(&resp, resp.status);
    }
    server.get("/api").assert_status(200);
    server.create_default();
}

#[test]
fn malformed_json_is_400() {
    let server = Server::start();
    let good = serde_json::to_string(&valid_poll_json()).unwrap();
    for body in [
        b"{\"title\":".to_vec(),
        b"{title: 'x'}".to_vec(),
        format!("{good}xyz").into_bytes(),
        format!("{good}{good}").into_bytes(),
        b"{\"title\":\"a\",}".to_vec(),
    ] {
        let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
        assert_problem(&resp, 400);
    }
}

#[test]
fn empty_body_is_400() {
    let server = Server::start();
    let resp = server.post_bytes("/api/polls", Some("application/json"), b"");
    assert_problem(&resp, 400);
    let resp = server
        .request("POST", "/api/polls")
        .xff(&Server::fresh_client_ip())
        .header("Content-Type", "application/json")
        .send();
    assert!(resp.status == 400 || resp.status == 411, "POST without body: {}", resp.describe());
}

#[test]
fn non_utf8_body_is_400() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    let pos = find_bytes(&body, b"Team lunch").unwrap();
    body[pos] = 0xff;
    body[pos + 1] = 0xfe;
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_problem(&resp, 400);
    let resp = server.post_bytes("/api/polls", Some("application/json"), b"\xc3\x28\x80\xff");
    assert_problem(&resp, 400);
}

#[test]
fn wrong_content_type_is_415() {
    let server = Server::start();
    let body = serde_json::to_vec(&valid_poll_json()).unwrap();
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        Some("text/json"),
    ] {
        let resp = server.post_bytes("/api/polls", ct, &body);
        assert_problem(&resp, 415);
    }
}

#[test]
fn oversized_body_is_413() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    body.resize(BODY_LIMIT + 1, b' ');
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_problem(&resp, 413);
    let big = vec![b' '; 300_000];
    let resp = server.post_bytes("/api/polls", Some("application/json"), &big);
    assert_problem(&resp, 413);
}

#[test]
fn body_of_exactly_the_limit_is_accepted() {
    let server = Server::start();
    let mut body = serde_json::to_vec(&valid_poll_json()).unwrap();
    body.resize(BODY_LIMIT, b' ');
    let resp = server.post_bytes("/api/polls", Some("application/json"), &body);
    assert_eq!(resp.status, 201, "{}", resp.describe());
}

#[test]
fn huge_declared_length_is_413_without_reading() {
    let server = Server::start();
    let head = format!(
        "POST /api/polls HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Forwarded-For: {}\r\nContent-Length: 300000\r\n\r\n{{\"ti",
        server.addr,
        Server::fresh_client_ip()
    );
    let started = Instant::now();
    let resp = send_raw(&server.addr, head.as_bytes());
    assert!(started.elapsed() < Duration::from_secs(5), "413 took {:?}", started.elapsed());
    assert_problem(&resp, 413);
    server.get("/api").assert_status(200);
}

#[test]
fn oversized_chunked_body_is_413() {
    let server = Server::start();
    let mut req = format!(
        "POST /api/polls HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Forwarded-For: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        server.addr,
        Server::fresh_client_ip()
    )
    .into_bytes();
    for _ in 0..10 {
        req.extend_from_slice(format!("{:x}\r\n", 30_000).as_bytes());
        req.extend_from_slice(&[b' '; 30_000]);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let resp = send_raw(&server.addr, &req);
    assert_problem(&resp, 413);
}

// ===========================================================================
// Rate limiting
// ===========================================================================

fn assert_rate_headers(resp: &Response) {
    let policy = resp.header("ratelimit-policy").unwrap_or_else(|| panic!("no RateLimit-Policy: {}", resp.describe()));
    assert!(
        policy.contains("10") && policy.contains("3600"),
        "RateLimit-Policy should state 10 per 3600 s: {policy:?}"
    );
    assert!(resp.has_header("ratelimit"), "no RateLimit: {}", resp.describe());
}

#[test]
fn ratelimit_headers_on_201() {
    let server = Server::start();
    let resp = server.create_from("192.0.2.10", &valid_poll_json());
    resp.assert_status(201);
    assert_rate_headers(&resp);
}

#[test]
fn eleventh_creation_in_an_hour_is_429() {
    let server = Server::start();
    for i in 0..10 {
        let resp = server.create_from("192.0.2.20", &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("192.0.2.20", &valid_poll_json());
    assert_problem(&resp, 429);
    assert_rate_headers(&resp);
    let retry: u64 = resp
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {}", resp.describe()))
        .parse()
        .expect("Retry-After in seconds");
    assert!(retry > 0 && retry <= 3600, "Retry-After {retry}");
    // Still limited on the next try, and a different client is not.
    assert_eq!(server.create_from("192.0.2.20", &valid_poll_json()).status, 429);
    server.create_from("192.0.2.21", &valid_poll_json()).assert_status(201);
}

#[test]
fn rate_limit_uses_last_forwarded_entry() {
    let server = Server::start();
    for i in 0..10 {
        let xff = format!("198.51.100.{i}, 192.0.2.30");
        server.create_from(&xff, &valid_poll_json()).assert_status(201);
    }
    let resp = server.create_from("198.51.100.99, 192.0.2.30", &valid_poll_json());
    assert_eq!(resp.status, 429, "{}", resp.describe());
    server.create_from("192.0.2.30, 192.0.2.31", &valid_poll_json()).assert_status(201);
}

#[test]
fn forged_forwarded_for_is_ignored_from_untrusted_peer() {
    let server = Server::builder().trusted_proxy("10.255.255.255/32").start();
    for i in 0..10 {
        let resp = server.create_from(&format!("192.0.2.{}", 100 + i), &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("192.0.2.200", &valid_poll_json());
    assert_problem(&resp, 429);
    let resp = server.request("POST", "/api/polls").json(&valid_poll_json()).send();
    assert_eq!(resp.status, 429, "{}", resp.describe());
}

#[test]
fn ipv6_clients_share_a_budget_per_64() {
    let server = Server::start();
    for i in 0..10 {
        let resp = server.create_from("2001:db8::1", &valid_poll_json());
        assert_eq!(resp.status, 201, "creation {}: {}", i + 1, resp.describe());
    }
    let resp = server.create_from("2001:db8::2", &valid_poll_json());
    assert_problem(&resp, 429);
    let resp = server.create_from("2001:db8:0:0:ffff:ffff:ffff:ffff", &valid_poll_json());
    assert_eq!(resp.status, 429, "{}", resp.describe());
    server.create_from("2001:db8:0:1::1", &valid_poll_json()).assert_status(201);
}

#[test]
fn rate_limit_applies_to_creation_only() {
    let server = Server::start();
    let poll = server.create_from("192.0.2.40", &valid_poll_json());
    let poll = Created::from_response(&poll);
    for _ in 0..9 {
        server.create_from("192.0.2.40", &valid_poll_json()).assert_status(201);
    }
    assert_eq!(server.create_from("192.0.2.40", &valid_poll_json()).status, 429);
    for _ in 0..3 {
        server.request("GET", &poll.path()).xff("192.0.2.40").send().assert_status(200);
        server.request("GET", &poll.results_path()).xff("192.0.2.40").bearer(&poll.token).send().assert_status(200);
    }
    server
        .request("PATCH", &poll.path())
        .xff("192.0.2.40")
        .bearer(&poll.token)
        .json(&json!({"closed": true}))
        .send()
        .assert_status(200);
}

// ===========================================================================
// GET /api/polls/{id}
// ===========================================================================

#[test]
fn get_poll_returns_public_fields() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.get(&poll.path());
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
    let p = resp.json();
    for key in [
        "id",
        "title",
        "lang",
        "status",
        "resultsPublic",
        "createdOn",
        "expiresOn",
        "questions",
        "translations",
        "media",
        "shareUrl",
    ] {
        assert!(p.get(key).is_some(), "{key} missing from {p}");
    }
    assert_eq!(p["status"], "open");
    assert_eq!(p["questions"][0]["type"], "single");
}

#[test]
fn get_poll_never_reveals_token_or_hash() {
    let server = Server::start();
    let poll = server.create_default();
    let text = server.get(&poll.path()).text();
    let hash = sha256(poll.token.as_bytes());
    for needle in
        [poll.token.clone(), hex(&hash), hex(&hash).to_uppercase(), "adminToken".to_string(), "token".to_string()]
    {
        assert!(!text.contains(&needle), "{needle:?} in public poll: {text}");
    }
}

#[test]
fn unknown_poll_is_404() {
    let server = Server::start();
    server.create_default();
    for path in ["/api/polls/AAAAAAAAAAAAAAAA", "/api/polls/AAAAAAAAAAAAAAAA/results"] {
        assert_problem(&server.get(path), 404);
    }
}

#[test]
fn malformed_ids_are_404() {
    let server = Server::start();
    let poll = server.create_default();
    let long = format!("{}x", poll.id);
    let short = &poll.id[..15];
    for id in ["abc", long.as_str(), short, "..%2F..%2Fetc", "%00", "AAAAAAAA%27%20OR%201=1", "AAAAAAAAAAAAAAA%21"] {
        let resp = server.get(&format!("/api/polls/{id}"));
        assert_problem(&resp, 404);
        let resp = server.get_auth(&format!("/api/polls/{id}/results"), &poll.token);
        assert_problem(&resp, 404);
    }
}

// ===========================================================================
// GET /api/polls/{id}/results
// ===========================================================================

fn assert_401(resp: &Response, invalid_token: bool) {
    assert_problem(resp, 401);
    let www =
        resp.header("www-authenticate").unwrap_or_else(|| panic!("401 without WWW-Authenticate: {}", resp.describe()));
    assert!(www.starts_with("Bearer"), "WWW-Authenticate {www:?}");
    if invalid_token {
        assert!(www.contains("error=\"invalid_token\""), "WWW-Authenticate lacks error=\"invalid_token\": {www:?}");
    }
}

#[test]
fn public_results_need_no_token() {
    let server = Server::start();
    let poll = server.create_public();
    let resp = server.get(&poll.results_path());
    resp.assert_status(200);
    assert_eq!(resp.json()["id"], poll.id.as_str());
}

#[test]
fn private_results_without_token_are_401() {
    let server = Server::start();
    let poll = server.create_default();
    assert_401(&server.get(&poll.results_path()), false);
}

#[test]
fn private_results_with_wrong_token_are_401_invalid_token() {
    let server = Server::start();
    let poll = server.create_default();
    let mut wrong = poll.token.clone();
    let last = if wrong.ends_with('A') { "B" } else { "A" };
    wrong.replace_range(42.., last);
    for token in [wrong.as_str(), "x", &"A".repeat(43), &poll.token[..42]] {
        assert_401(&server.get_auth(&poll.results_path(), token), true);
    }
}

#[test]
fn another_polls_token_is_401_invalid_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    assert_401(&server.get_auth(&poll.results_path(), &other.token), true);
}

#[test]
fn non_bearer_schemes_are_401() {
    let server = Server::start();
    let poll = server.create_default();
    for value in [
        format!("Basic {}", poll.token),
        format!("Token {}", poll.token),
        poll.token.clone(),
        "Bearer".to_string(),
        "Bearer ".to_string(),
    ] {
        let resp = server.request("GET", &poll.results_path()).header("Authorization", &value).send();
        assert_problem(&resp, 401);
        assert!(resp.has_header("www-authenticate"), "{}", resp.describe());
    }
}

#[test]
fn correct_token_reads_private_results() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.get_auth(&poll.results_path(), &poll.token);
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
}

#[test]
fn bearer_scheme_is_case_insensitive() {
    // RFC 9110 §11.1: the auth scheme is case-insensitive.
    let server = Server::start();
    let poll = server.create_default();
    let resp =
        server.request("GET", &poll.results_path()).header("Authorization", &format!("bearer {}", poll.token)).send();
    resp.assert_status(200);
}

#[test]
fn token_in_query_string_does_not_authenticate() {
    let server = Server::start();
    let poll = server.create_default();
    for q in ["access_token", "token", "adminToken"] {
        let resp = server.get(&format!("{}?{q}={}", poll.results_path(), poll.token));
        assert_eq!(resp.status, 401, "{}", resp.describe());
    }
}

#[test]
fn results_of_a_poll_without_votes() {
    let server = Server::start();
    let poll = server.create_default();
    let r = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(r["id"], poll.id.as_str());
    assert_eq!(r["status"], "open");
    assert_eq!(r["totalResponses"], 0);
    assert_eq!(r["responsesByDay"], json!([]));
    let qs = r["questions"].as_array().expect("questions");
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0]["label"], "Where shall we eat?");
    assert_eq!(qs[0]["type"], "single");
    assert_eq!(qs[0]["answered"], 0);
    let labels: Vec<&str> = qs[0]["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Pizza", "Sushi", "Salad"]);
    for q in qs {
        for o in q["options"].as_array().unwrap() {
            assert_eq!(o["count"], 0);
            assert_eq!(o["percent"].as_f64(), Some(0.0));
        }
    }
}

#[test]
fn results_show_closed_status() {
    let server = Server::start();
    let poll = server.create_public();
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert_eq!(server.get(&poll.results_path()).json()["status"], "closed");
}

// ===========================================================================
// PATCH /api/polls/{id}
// ===========================================================================

#[test]
fn patch_requires_the_polls_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    let body = json!({"closed": true});
    let resp = server.request("PATCH", &poll.path()).json(&body).send();
    assert_401(&resp, false);
    assert_401(&server.patch_json(&poll.id, "wrong-token", &body), true);
    assert_401(&server.patch_json(&poll.id, &other.token, &body), true);
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_close_and_reopen() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": true}));
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
    let p = resp.json();
    assert_eq!(p["status"], "closed");
    assert_eq!(p["id"], poll.id.as_str());
    assert!(!resp.text().contains(&poll.token));
    assert_eq!(server.get(&poll.path()).json()["status"], "closed");
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": false}));
    resp.assert_status(200);
    assert_eq!(resp.json()["status"], "open");
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_returns_the_full_public_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": true}));
    resp.assert_status(200);
    assert_eq!(resp.json(), server.get(&poll.path()).json());
}

#[test]
fn patch_expiry_counts_from_today() {
    let server = Server::start();
    let poll = server.create_default();
    for days in [7, 90, 730, 365, 30] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": days}));
        resp.assert_status(200);
        assert_eq!(resp.json()["expiresOn"], date_from_today(days));
        assert_eq!(server.get(&poll.path()).json()["expiresOn"], date_from_today(days));
    }
}

#[test]
fn patch_expiry_invalid_values() {
    let server = Server::start();
    let poll = server.create_default();
    for v in [json!(8), json!(0), json!(-30), json!("7"), json!(null), json!(7.5)] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"expiryDays": v}));
        assert_422_field(&resp, "expiryDays");
    }
    assert_eq!(server.get(&poll.path()).json()["expiresOn"], date_from_today(30));
}

#[test]
fn patch_closed_wrong_type() {
    let server = Server::start();
    let poll = server.create_default();
    for v in [json!("true"), json!(1), json!(null), json!([true])] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"closed": v}));
        assert_422_field(&resp, "closed");
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_adds_and_removes_translations() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": valid_translation()}}));
    resp.assert_status(200);
    assert_eq!(resp.json()["translations"]["fr"], valid_translation());
    let got = server.get(&poll.path()).json();
    assert_eq!(got["translations"], json!({"fr": valid_translation()}));

    let de = json!({
        "title": "Mittagessen",
        "questions": [
            {"label": "Wo?", "options": ["Pizza", "Sushi", "Salat"]},
            {"label": "Wann?", "options": ["Montag", "Freitag"]}
        ]
    });
    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"de": de, "fr": null}}));
    resp.assert_status(200);
    assert_eq!(resp.json()["translations"], json!({"de": de}));
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({"de": de}));

    let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"de": null}}));
    resp.assert_status(200);
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_translation_replaces_existing() {
    let server = Server::start();
    let poll = server.create_default();
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"it": valid_translation()}})).assert_status(200);
    let v2 = with(valid_translation(), "/title", json!("Pranzo di squadra"));
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"it": v2}})).assert_status(200);
    assert_eq!(server.get(&poll.path()).json()["translations"]["it"]["title"], "Pranzo di squadra");
}

#[test]
fn patch_translation_shape_must_match_poll() {
    let server = Server::start();
    let poll = server.create_default();
    let bad = [
        without(valid_translation(), "/questions/1"),
        with(valid_translation(), "/questions/2", json!({"label": "x", "options": ["a", "b"]})),
        without(valid_translation(), "/questions/0/options/2"),
        with(valid_translation(), "/questions/1/options/2", json!("extra")),
        without(valid_translation(), "/title"),
        without(valid_translation(), "/questions"),
        without(valid_translation(), "/questions/0/label"),
        with(valid_translation(), "/questions", json!([])),
        json!("Déjeuner"),
        json!([]),
        json!(42),
    ];
    for t in bad {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": t}}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_translation_text_rules() {
    // Reading: a language version obeys the same text rules as the poll
    // (non-empty after trim, length bounds, no control characters, distinct
    // options, no unknown fields).
    let server = Server::start();
    let poll = server.create_default();
    let bad = [
        with(valid_translation(), "/title", json!("")),
        with(valid_translation(), "/title", json!("t".repeat(201))),
        with(valid_translation(), "/title", json!("bell\u{7}")),
        with(valid_translation(), "/questions/0/label", json!("l".repeat(501))),
        with(valid_translation(), "/questions/0/label", json!("  ")),
        with(valid_translation(), "/questions/0/options/0", json!("")),
        with(valid_translation(), "/questions/0/options/0", json!("o".repeat(201))),
        with(valid_translation(), "/questions/0/options/1", json!("Pizza")),
        with(valid_translation(), "/extra", json!(1)),
    ];
    for t in bad {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": t}}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
    // Boundary values are fine.
    let mut ok = valid_translation();
    ok["title"] = json!("é".repeat(200));
    ok["questions"][0]["label"] = json!("l".repeat(500));
    ok["questions"][0]["options"][0] = json!("o".repeat(200));
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": ok}})).assert_status(200);
}

#[test]
fn patch_translation_language_keys() {
    let server = Server::start();
    let poll = server.create_default(); // lang en
    for lang in ["en", "es", "FR", "", "xx"] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": {lang: valid_translation()}}));
        assert_422(&resp);
    }
    for v in [json!([]), json!("fr"), json!(null)] {
        let resp = server.patch_json(&poll.id, &poll.token, &json!({"translations": v}));
        assert_422(&resp);
    }
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));
}

#[test]
fn patch_keys_can_be_combined() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json(
        &poll.id,
        &poll.token,
        &json!({"closed": true, "expiryDays": 7, "translations": {"fr": valid_translation()}}),
    );
    resp.assert_status(200);
    let p = server.get(&poll.path()).json();
    assert_eq!(p["status"], "closed");
    assert_eq!(p["expiresOn"], date_from_today(7));
    assert_eq!(p["translations"]["fr"], valid_translation());
}

#[test]
fn patch_is_all_or_nothing() {
    let server = Server::start();
    let poll = server.create_default();
    let before = server.get(&poll.path()).json();
    for body in [
        json!({"closed": true, "expiryDays": 8}),
        json!({"expiryDays": 7, "closed": "yes"}),
        json!({"closed": true, "translations": {"fr": without(valid_translation(), "/questions/1")}}),
        json!({"translations": {"fr": valid_translation(), "es": valid_translation()}}),
        json!({"translations": {"fr": valid_translation()}, "expiryDays": 3}),
        json!({"closed": true, "unknown": 1}),
    ] {
        let resp = server.patch_json(&poll.id, &poll.token, &body);
        assert_422(&resp);
        assert_eq!(server.get(&poll.path()).json(), before, "changed by {body}");
    }
}

#[test]
fn patch_empty_or_unknown_keys_are_422() {
    let server = Server::start();
    let poll = server.create_default();
    for body in [
        json!({}),
        json!({"title": "New title"}),
        json!({"resultsPublic": true}),
        json!({"questions": []}),
        json!({"status": "closed"}),
        json!([{"closed": true}]),
        json!(null),
    ] {
        let resp = server.patch_json(&poll.id, &poll.token, &body);
        assert_422(&resp);
    }
    let p = server.get(&poll.path()).json();
    assert_eq!(p["title"], "Team lunch");
    assert_eq!(p["resultsPublic"], false);
}

#[test]
fn patch_content_types() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/merge-patch+json")
        .json(&json!({"closed": true}))
        .send();
    resp.assert_status(200);
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/json; charset=utf-8")
        .json(&json!({"closed": false}))
        .send();
    resp.assert_status(200);
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let resp = server
            .request("PATCH", &poll.path())
            .bearer(&poll.token)
            .header("Content-Type", ct)
            .json(&json!({"closed": true}))
            .send();
        assert_problem(&resp, 415);
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn patch_malformed_json_is_400() {
    let server = Server::start();
    let poll = server.create_default();
    for body in [&b"{\"closed\": tru"[..], b"{closed: true}", b"\xff\xfe"] {
        let resp = server
            .request("PATCH", &poll.path())
            .bearer(&poll.token)
            .header("Content-Type", "application/json")
            .body(body.to_vec())
            .send();
        assert_problem(&resp, 400);
    }
}

#[test]
fn patch_oversized_body_is_413() {
    let server = Server::start();
    let poll = server.create_default();
    let mut body = b"{\"closed\": true}".to_vec();
    body.resize(BODY_LIMIT + 1, b' ');
    let resp = server
        .request("PATCH", &poll.path())
        .bearer(&poll.token)
        .header("Content-Type", "application/json")
        .body(body)
        .send();
    assert_problem(&resp, 413);
}

#[test]
fn patch_unknown_poll_is_404() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.patch_json("AAAAAAAAAAAAAAAA", &poll.token, &json!({"closed": true}));
    assert_problem(&resp, 404);
}

// ===========================================================================
// DELETE /api/polls/{id}
// ===========================================================================

#[test]
fn delete_requires_the_polls_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    assert_401(&server.request("DELETE", &poll.path()).send(), false);
    assert_401(&server.delete(&poll.id, "nope"), true);
    assert_401(&server.delete(&poll.id, &other.token), true);
    let resp = server.request("DELETE", &poll.path()).header("Authorization", &format!("Basic {}", poll.token)).send();
    assert_problem(&resp, 401);
    server.get(&poll.path()).assert_status(200);
}

#[test]
fn delete_returns_204_and_poll_is_gone() {
    let server = Server::start();
    let poll = server.create_public();
    let resp = server.delete(&poll.id, &poll.token);
    resp.assert_status(204);
    assert!(resp.body.is_empty(), "204 with a body: {}", resp.describe());
    assert!(resp.header("content-length").is_none_or(|v| v == "0"), "{}", resp.describe());
    assert_problem(&server.get(&poll.path()), 404);
    assert_problem(&server.get(&poll.results_path()), 404);
    assert_problem(&server.get_auth(&poll.results_path(), &poll.token), 404);
    assert_problem(&server.patch_json(&poll.id, &poll.token, &json!({"closed": true})), 404);
    assert_problem(&server.delete(&poll.id, &poll.token), 404);
}

#[test]
fn delete_leaves_other_polls_alone() {
    let server = Server::start();
    let a = server.create_default();
    let b = server.create_default();
    server.delete(&a.id, &a.token).assert_status(204);
    server.get(&b.path()).assert_status(200);
    server.get_auth(&b.results_path(), &b.token).assert_status(200);
}

#[test]
fn delete_unknown_poll_is_404() {
    let server = Server::start();
    let poll = server.create_default();
    assert_problem(&server.delete("AAAAAAAAAAAAAAAA", &poll.token), 404);
}

// ===========================================================================
// Methods not allowed / no voting endpoint
// ===========================================================================

#[test]
fn collection_allows_only_post() {
    let server = Server::start();
    for method in ["PUT", "GET", "DELETE", "PATCH"] {
        let resp = server.request(method, "/api/polls").json(&valid_poll_json()).send();
        assert_problem(&resp, 405);
        let allow = resp.header("allow").unwrap_or_default();
        assert!(allow.contains("POST"), "Allow {allow:?}: {}", resp.describe());
        assert!(!allow.contains("GET"), "polls must not be listable: {allow:?}");
    }
}

#[test]
fn poll_resource_rejects_post_and_put() {
    let server = Server::start();
    let poll = server.create_default();
    for method in ["POST", "PUT"] {
        let resp = server.request(method, &poll.path()).bearer(&poll.token).json(&json!({"closed": true})).send();
        assert!(resp.status == 405 || resp.status == 404, "{}", resp.describe());
        if resp.status == 405 {
            let allow = resp.header("allow").unwrap_or_default();
            for m in ["GET", "PATCH", "DELETE"] {
                assert!(allow.contains(m), "Allow {allow:?} lacks {m}");
            }
        }
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn no_endpoint_accepts_votes() {
    let server = Server::start();
    let poll = server.create_public();
    let vote = json!({"choices": [0, 1], "answers": [0, 1]});
    for (method, path) in [
        ("POST", poll.results_path()),
        ("PUT", poll.results_path()),
        ("PATCH", poll.results_path()),
        ("POST", format!("{}/votes", poll.path())),
        ("POST", format!("{}/responses", poll.path())),
        ("POST", format!("{}/vote", poll.path())),
    ] {
        let resp = server.request(method, &path).json(&vote).send();
        assert!(resp.status == 405 || resp.status == 404, "{}", resp.describe());
        if resp.status == 405 {
            assert!(resp.has_header("allow"), "405 without Allow: {}", resp.describe());
        }
    }
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 0);
}

// ===========================================================================
// Concurrency
// ===========================================================================

#[test]
fn concurrent_clients_are_all_served() {
    let server = Server::start();
    let poll = server.create_public();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let server = &server;
                let poll = &poll;
                s.spawn(move || {
                    let created = server.create_poll(&with(valid_poll_json(), "/title", json!(format!("Poll {i}"))));
                    server.record(&poll.id, &[Some(i % 3), Some(i % 2)]).unwrap();
                    server.get(&poll.results_path()).assert_status(200);
                    server.get(&created.path()).assert_status(200);
                    created
                })
            })
            .collect();
        for h in handles {
            let created = h.join().expect("client thread");
            assert!(created.body["poll"]["title"].as_str().unwrap().starts_with("Poll "));
        }
    });
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 8);
    let counts: Vec<u64> = option_counts(&r, 0);
    assert_eq!(counts, [3, 3, 2]);
    assert_eq!(option_counts(&r, 1), [4, 4]);
}

fn option_counts(results: &Value, q: usize) -> Vec<u64> {
    results["questions"][q]["options"].as_array().unwrap().iter().map(|o| o["count"].as_u64().unwrap()).collect()
}

/// Issue 13, item 6: input that means different things to different readers
/// is refused, not guessed at.
#[test]
fn duplicate_keys_invisible_texts_and_bidi_controls_are_refused() {
    let server = Server::start();
    let poll = r#"{"title": "A", "lang": "en", "expiryDays": 7, "title": "B",
                   "questions": [{"label": "Q", "options": ["a", "b"]}]}"#;
    let resp = server.post_bytes("/api/polls", Some("application/json"), poll.as_bytes());
    let problem = assert_problem(&resp, 400);
    assert!(problem["detail"].as_str().unwrap().contains("duplicate key \"title\""), "{problem}");
    let nested = r#"{"title": "A", "lang": "en", "expiryDays": 7,
                     "questions": [{"label": "Q", "options": ["a", "b"], "label": "R"}]}"#;
    assert_problem(&server.post_bytes("/api/polls", Some("application/json"), nested.as_bytes()), 400);
    let created = server.create_default();
    let patch = server
        .request("PATCH", &format!("/api/polls/{}", created.id))
        .bearer(&created.token)
        .header("Content-Type", "application/json")
        .body(br#"{"closed": true, "closed": false}"#.to_vec())
        .send();
    assert_problem(&patch, 400);
    assert_eq!(server.get(&format!("/api/polls/{}", created.id)).json()["status"], "open", "nothing changed");

    for blank in ["\u{200b}", "\u{2060}\u{200b}\u{feff}", " \u{200d} "] {
        assert_422_field(&post(&server, &with(valid_poll_json(), "/title", json!(blank))), "title");
    }
    for (ptr, field) in [
        ("/title", "title"),
        ("/questions/0/label", "questions[0].label"),
        ("/questions/0/options/1", "questions[0].options[1]"),
    ] {
        for bidi in ["abc\u{202e}fed", "\u{2066}x\u{2069}"] {
            let resp = post(&server, &with(valid_poll_json(), ptr, json!(bidi)));
            assert_422_field(&resp, field);
            assert!(resp.text().contains("bidirectional"), "{}", resp.text());
        }
    }
    // Invisible characters inside visible text carry meaning: kept as sent.
    let hearts = server.create_poll(&with(valid_poll_json(), "/title", json!("I \u{2764}\u{fe0f} polls")));
    assert_eq!(server.get(&format!("/api/polls/{}", hearts.id)).json()["title"], "I \u{2764}\u{fe0f} polls");
}
