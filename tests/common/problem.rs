//! Assertions on RFC 9457 problem documents, the API's only error shape,
//! and on the 422 `errors: [{field, message}]` list the API promises.

use serde_json::Value;

use super::Response;

/// Asserts status, `application/problem+json` and `{type, title, status, detail}`.
pub fn assert_problem(resp: &Response, status: u16) -> Value {
    assert_eq!(resp.status, status, "unexpected status: {}", resp.describe());
    assert_eq!(
        resp.media_type().as_deref(),
        Some("application/problem+json"),
        "error must be application/problem+json: {}",
        resp.describe()
    );
    let body = resp.json();
    assert!(body.is_object(), "problem body not an object: {}", resp.describe());
    assert!(body["type"].is_string(), "problem without type: {}", resp.describe());
    assert!(body["title"].is_string(), "problem without title: {}", resp.describe());
    assert_eq!(body["status"].as_u64(), Some(u64::from(status)), "problem.status mismatch: {}", resp.describe());
    assert!(body["detail"].is_string(), "problem without detail: {}", resp.describe());
    body
}

/// Asserts a 422 problem with a non-empty `errors: [{field, message}]`;
/// returns the list of fields.
pub fn assert_422(resp: &Response) -> Vec<String> {
    let body = assert_problem(resp, 422);
    let errors = body["errors"].as_array().unwrap_or_else(|| panic!("422 without errors array: {}", resp.describe()));
    assert!(!errors.is_empty(), "422 with empty errors: {}", resp.describe());
    errors
        .iter()
        .map(|e| {
            assert!(e["message"].is_string(), "error without message: {}", resp.describe());
            e["field"].as_str().unwrap_or_else(|| panic!("error without field: {}", resp.describe())).to_string()
        })
        .collect()
}

/// Asserts a 422 that names exactly `field` among its errors.
pub fn assert_422_field(resp: &Response, field: &str) {
    let fields = assert_422(resp);
    assert!(
        fields.iter().any(|f| f == field),
        "expected an error for field {field:?}, got {fields:?}: {}",
        resp.describe()
    );
}

/// Asserts a 422 naming `prefix` or a sub-path of it (`prefix.x`, `prefix[n]`).
pub fn assert_422_field_prefix(resp: &Response, prefix: &str) {
    let fields = assert_422(resp);
    assert!(
        fields.iter().any(|f| f == prefix
            || f.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))),
        "expected an error under {prefix:?}, got {fields:?}: {}",
        resp.describe()
    );
}
