//! `GET /api`: the OpenAPI 3.1 document lists every path, the bearer
//! scheme, the domain's bounds and a curl example, and refuses other methods.

use serde_json::{Value, json};

use crate::common::*;

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
    // Invite codes (issue 15): issued and counted with the admin token.
    for m in ["post", "get"] {
        let op = &paths["/api/polls/{id}/invites"][m];
        assert!(op.is_object(), "{m} /api/polls/{{id}}/invites undocumented");
        assert_eq!(op["security"], json!([{"adminToken": []}]), "{m} invites needs the token");
        assert!(op["responses"].get("401").is_some() && op["responses"].get("404").is_some(), "{m} invites");
    }
    assert!(paths["/api/polls/{id}/invites"]["post"]["responses"].get("422").is_some());
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
    // Question types (issue 14).
    has("minChoices", &|s| s["minimum"] == 1 && s["maximum"] == 12);
    has("maxChoices", &|s| s["minimum"] == 1 && s["maximum"] == 12);
    has("scaleMin", &|s| s["minimum"] == 0 && s["maximum"] == 9);
    has("scaleMax", &|s| s["minimum"] == 1 && s["maximum"] == 10);
    has("minLabel", &|s| s["maxLength"] == 100);
    has("maxLabel", &|s| s["maxLength"] == 100);
    has("required", &|s| s["type"] == "boolean" && s["default"] == false);
    has("duplicateCheck", &|s| s["enum"] == json!(["network", "invite", "none"]) && s["default"] == "network");
    has("count", &|s| s["minimum"] == 1 && s["maximum"] == 1000);
    // Receipts (issue 15): a boolean, true unless set, in creation and PATCH
    // bodies, and always in the poll answer.
    has("voteChanges", &|s| s["type"] == "boolean" && s["default"] == true);
    let schemas = &doc["components"]["schemas"];
    for name in ["NewPoll", "PollPatch", "Poll"] {
        assert_eq!(schemas[name]["properties"]["voteChanges"]["type"], "boolean", "{name} lacks voteChanges");
    }
    let required = |name: &str| schemas[name]["required"].as_array().unwrap().contains(&json!("voteChanges"));
    assert!(required("Poll"), "the poll answer always carries voteChanges");
    assert!(!required("NewPoll"), "a creation body without voteChanges stays valid");
    let types: Vec<&Value> = doc["components"]["schemas"]["Question"]["oneOf"]
        .as_array()
        .map(|a| a.iter().map(|r| &resolve(&doc, r)["properties"]["type"]["const"]).collect())
        .unwrap_or_default();
    assert_eq!(types, [&json!("single"), &json!("multiple"), &json!("ranked"), &json!("scale"), &json!("schedule")]);
    // A schedule's zone and slots, and its results by their `type`.
    has("timeZone", &|s| s["type"] == "string" && s["maxLength"] == 64);
    let slots = &schemas["ScheduleQuestion"]["properties"]["options"];
    assert_eq!((&slots["minItems"], &slots["maxItems"], &slots["uniqueItems"]), (&json!(1), &json!(12), &json!(true)));
    let mapping = &schemas["QuestionResults"]["discriminator"]["mapping"];
    assert_eq!(mapping["schedule"], "#/components/schemas/ScheduleResults");
    let results = &schemas["ScheduleResults"]["properties"];
    assert_eq!(results["slots"]["items"]["required"], json!(["slot", "yes", "ifNeedBe", "no", "best"]));
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
