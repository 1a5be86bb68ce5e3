//! `docs/API.md`, rendered from the OpenAPI document: the reference a
//! reader opens without a running server. It is generated, never edited by
//! hand, so that it cannot drift from what `GET /api` serves; the unit test
//! `api_reference_is_current` checks the committed file and, with
//! `UPDATE_DOCS=1`, rewrites it.

use serde_json::Value;

use crate::error::PROBLEM_CODES;

/// The "Generate a client" section of `docs/API.md`. tests/operations/openapi_tools.rs runs
/// these generators (at these versions, pinned by `.ci/run`) on the live
/// document and drives every endpoint through what they produce.
const GENERATE_CLIENT: &str = "## Generate a client

The document at `GET /api` generates working clients as it is, with no hand edits (the test suite \
generates both against a live server and calls every endpoint through them):

    # Python (PyPI openapi-python-client 0.29.1): the package anonpoll_client, typed models over httpx
    openapi-python-client generate --url {base_url}/api --meta none --output-path anonpoll_client

    # TypeScript (npm openapi-typescript 7.13.0): types for openapi-fetch (0.17.0). The flag keeps
    # fields with a default (a question's `type`, `resultsPublic`) optional in request bodies.
    npx openapi-typescript {base_url}/api --default-non-nullable false --output anonpoll.d.ts

Linted with Spectral's `spectral:oas` rules (npm @stoplight/spectral-cli 6.16.3): no errors. \
The warnings that remain, and why:

";

/// Spectral `spectral:oas` warnings the document keeps on purpose, with the
/// reason; tests/operations/openapi_tools.rs fails on any warning not named here.
const LINT_WARNINGS_KEPT: &[(&str, &str)] = &[
    ("info-contact", "each deployment is run by its own operator; the document names no one contact for all of them."),
    (
        "operation-description",
        "each operation's `summary` says what it does; a `description` is added where there is more to say.",
    ),
    (
        "operation-tags",
        "the API has one resource; tags would only move the generated code into per-tag modules (the Python client's `api.default`).",
    ),
];

/// Renders the OpenAPI document as the Markdown reference in `docs/API.md`.
/// A test keeps the committed file equal to this output.
pub fn markdown(doc: &Value) -> String {
    let mut out = String::new();
    let info = &doc["info"];
    out.push_str("# anonpoll API reference\n\n");
    out.push_str("<!-- Generated from the OpenAPI document served at GET /api (src/schema.rs). Do not edit by hand:\n");
    out.push_str(
        "     run `UPDATE_DOCS=1 cargo test --lib api_reference_is_current` after changing the schema. -->\n\n",
    );
    out.push_str(info["description"].as_str().unwrap_or(""));
    out.push_str("\n\n## Authentication\n\n");
    if let Some(s) = doc["components"]["securitySchemes"]["adminToken"]["description"].as_str() {
        out.push_str(&format!("`Authorization: Bearer <adminToken>`: {s}\n\n"));
    }
    out.push_str(GENERATE_CLIENT);
    for (rule, why) in LINT_WARNINGS_KEPT {
        out.push_str(&format!("- `{rule}`: {why}\n"));
    }
    out.push_str("\n## Endpoints\n");
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            let Some(item) = item.as_object() else { continue };
            for (method, op) in item {
                if method == "parameters" {
                    continue;
                }
                out.push_str(&format!("\n### `{} {}`\n\n", method.to_uppercase(), path));
                if let Some(s) = op["summary"].as_str() {
                    out.push_str(&format!("{s}\n\n"));
                }
                if let Some(s) = op["description"].as_str() {
                    out.push_str(&format!("{s}\n\n"));
                }
                let auth = op["security"].as_array().map(|a| a.iter().any(|s| s.get("adminToken").is_some()));
                let optional = op["security"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|s| s.as_object().is_some_and(|o| o.is_empty())));
                match (auth, optional) {
                    (Some(true), true) => out.push_str("Auth: Bearer token when the poll's results are private.\n\n"),
                    (Some(true), false) => out.push_str("Auth: Bearer token of the poll.\n\n"),
                    _ => out.push_str("Auth: none.\n\n"),
                }
                if let Some(content) = op["requestBody"]["content"].as_object() {
                    for (media, body) in content {
                        let schema = body["schema"]["$ref"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("");
                        out.push_str(&format!(
                            "Request body: `{media}`, schema [`{schema}`](#{}).\n\n",
                            schema.to_lowercase()
                        ));
                    }
                    if let Some(s) = op["requestBody"]["description"].as_str() {
                        out.push_str(&format!("{s}\n\n"));
                    }
                }
                out.push_str("| Status | Meaning |\n|---|---|\n");
                if let Some(responses) = op["responses"].as_object() {
                    for (status, r) in responses {
                        out.push_str(&format!("| {status} | {} |\n", r["description"].as_str().unwrap_or("")));
                    }
                }
            }
        }
    }
    out.push_str("\n## Schemas\n");
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        for (name, schema) in schemas {
            out.push_str(&format!("\n### {name}\n\n"));
            if let Some(d) = schema["description"].as_str() {
                out.push_str(&format!("{d}\n\n"));
            }
            out.push_str("```json\n");
            out.push_str(&serde_json::to_string_pretty(schema).unwrap_or_default());
            out.push_str("\n```\n");
        }
    }
    out.push_str(
        "\n## Problem types\n\nEvery error is `application/problem+json` (RFC 9457). The `type` member is one of:\n\n",
    );
    for (code, status) in PROBLEM_CODES {
        out.push_str(&format!("- {status}: `/api#problem-{code}`\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::openapi;

    #[test]
    fn api_reference_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/API.md");
        let fresh = markdown(&openapi("{base_url}", 10, crate::app::NETWORK_VOTES_PER_DAY));
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == fresh,
            "docs/API.md is stale: run `UPDATE_DOCS=1 cargo test --lib api_reference_is_current`"
        );
    }
}
