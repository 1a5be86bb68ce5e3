//! The JSON API: routing and one handler per endpoint.
//!
//! Handlers take a fully read request and return a response; every failure is
//! an [`Error`] turned into a problem document at the edge. The order of
//! checks is fixed: route, method (405), poll existence (404), credentials
//! (401), media type (415), size (413), syntax (400), validation (422), rate
//! limit (429), write.

pub mod json;
pub mod strict;

use std::sync::Arc;

use serde_json::Value;

use crate::app::{Access, App, Links, Session, check_token};
use crate::day::Day;
use crate::domain::{NewPoll, PollPatch};
use crate::error::Error;
use crate::http::{Method, Request, Response};
use crate::schema;

const JSON: &[&str] = &["application/json"];
const PATCH_TYPES: &[&str] = &["application/json", "application/merge-patch+json"];

/// What every API worker shares: the application and the OpenAPI document,
/// rendered once.
pub struct Api {
    app: Arc<App>,
    doc: Arc<Vec<u8>>,
}

impl Api {
    pub fn new(app: Arc<App>) -> anyhow::Result<Api> {
        let doc = serde_json::to_vec_pretty(&schema::openapi(
            app.links().base(),
            app.limiter.limit(),
            app.network_votes_per_day(),
        ))?;
        Ok(Api { app, doc: Arc::new(doc) })
    }

    /// A per-worker handler with its own session (read connection).
    pub fn worker(&self) -> anyhow::Result<Worker> {
        Ok(Worker { session: self.app.session()?, doc: self.doc.clone() })
    }
}

pub struct Worker {
    session: Session,
    doc: Arc<Vec<u8>>,
}

/// The routes of the API, by shape.
enum Route<'a> {
    Doc,
    Polls,
    Poll(&'a str),
    Results(&'a str),
    Invites(&'a str),
}

impl Route<'_> {
    fn allowed(&self) -> &'static [&'static str] {
        match self {
            Route::Doc | Route::Results(_) => &["GET", "HEAD", "OPTIONS"],
            Route::Polls => &["POST", "OPTIONS"],
            Route::Poll(_) => &["GET", "HEAD", "PATCH", "DELETE", "OPTIONS"],
            Route::Invites(_) => &["GET", "HEAD", "POST", "OPTIONS"],
        }
    }
}

fn route(path: &str) -> Option<Route<'_>> {
    let rest = path.strip_prefix("/api")?;
    if rest.is_empty() {
        return Some(Route::Doc);
    }
    let rest = rest.strip_prefix("/polls")?;
    if rest.is_empty() {
        return Some(Route::Polls);
    }
    let rest = rest.strip_prefix('/')?;
    match rest.split_once('/') {
        None if !rest.is_empty() => Some(Route::Poll(rest)),
        Some((id, "results")) if !id.is_empty() => Some(Route::Results(id)),
        Some((id, "invites")) if !id.is_empty() => Some(Route::Invites(id)),
        _ => None,
    }
}

impl Worker {
    /// Answers one request. Never panics by design; the server layer still
    /// turns a panic into a 500.
    pub fn handle(&mut self, req: &Request) -> Response {
        self.dispatch(req).unwrap_or_else(|e| Response::from_error(&e))
    }

    /// `GET /healthz`: 200 `ok` and the key state's day while this node's
    /// database answers, the day followed by `(behind: the day's key work
    /// failed)` while the day's key work has failed; 503 (with Retry-After)
    /// while the database does not answer. For load balancers' health
    /// checks (deploy/several-nodes/Caddyfile), which route by the status,
    /// and monitoring, which also reads the line; tells nothing about any
    /// poll.
    pub fn health(&mut self, req: &Request) -> Response {
        if !matches!(req.method, Method::Get | Method::Head) {
            return Response::new(405).with_header("Allow", "GET, HEAD");
        }
        match self.session.healthy(Day::today()) {
            Ok(fit) => Response::new(200)
                .with_header("Content-Type", "text/plain; charset=utf-8")
                .with_header("Cache-Control", "no-store")
                .with_body(
                    format!(
                        "ok\nkey state: {}{}\n",
                        fit.key_day,
                        if fit.key_work_failed { " (behind: the day's key work failed)" } else { "" }
                    )
                    .into_bytes(),
                ),
            Err(e) => Response::from_error(&e),
        }
    }

    /// True for paths this module owns.
    pub fn owns(path: &str) -> bool {
        path == "/api" || path.starts_with("/api/")
    }

    fn dispatch(&mut self, req: &Request) -> Result<Response, Error> {
        let Some(route) = route(&req.path) else {
            return Err(Error::NotFound);
        };
        let today = Day::today();
        let links = self.session.links().clone();
        match (&route, req.method) {
            (_, Method::Options) => Ok(Response::new(204).with_header("Allow", route.allowed().join(", "))),
            (Route::Doc, Method::Get | Method::Head) => Ok(Response::new(200)
                .with_header("Content-Type", "application/json")
                .with_header("Cache-Control", "no-cache")
                .with_body(self.doc.as_ref().clone())),
            (Route::Polls, Method::Post) => {
                let poll = NewPoll::from_json_on(&json_body(req, JSON)?, today).map_err(Error::Invalid)?;
                let created = self.session.create(req.client, &poll, &[], today)?;
                let mut r = Response::json(201, &json::created(&created, &links))
                    .with_header("Location", Links::api_path(&created.poll.id));
                for (name, value) in created.quota.headers() {
                    r = r.with_header(name, value);
                }
                Ok(r)
            }
            (Route::Poll(id), Method::Get | Method::Head) => {
                let poll = self.session.poll(id, today)?;
                Ok(Response::json(200, &json::poll(&poll, &links)))
            }
            (Route::Poll(id), Method::Patch) => {
                // Token before body: an unauthenticated caller learns nothing
                // about a body's validity.
                let poll = self.session.poll(id, today)?;
                check_token(&poll, bearer(req)?)?;
                let patch = PollPatch::from_json(&json_body(req, PATCH_TYPES)?).map_err(Error::Invalid)?;
                let updated = self.session.patch(&poll, &patch, today)?;
                Ok(Response::json(200, &json::poll(&updated, &links)))
            }
            (Route::Poll(id), Method::Delete) => {
                let poll = self.session.poll(id, today)?;
                check_token(&poll, bearer(req)?)?;
                self.session.app().delete(&poll)?;
                Ok(Response::new(204))
            }
            (Route::Results(id), Method::Get | Method::Head) => {
                let poll = self.session.poll(id, today)?;
                let results = self.session.results(&poll, Access::from_bearer(req.bearer()))?;
                Ok(Response::json(200, &json::results(&poll, &results)))
            }
            // Token before body, as for PATCH.
            (Route::Invites(id), Method::Post) => {
                let poll = self.session.poll(id, today)?;
                let token = bearer(req)?;
                check_token(&poll, token)?;
                let count = invite_count(&json_body(req, JSON)?)?;
                let issued = self.session.issue_invites(&poll, token, count, today)?;
                Ok(Response::json(201, &json::issued(&poll, &issued, &links)))
            }
            (Route::Invites(id), Method::Get | Method::Head) => {
                let poll = self.session.poll(id, today)?;
                let status = self.session.invite_status(&poll, bearer(req)?)?;
                Ok(Response::json(200, &json::invite_status(&status)))
            }
            _ => Err(Error::MethodNotAllowed(route.allowed())),
        }
    }
}

/// `{"count": N}`, the body of an invite request: N a whole number from 1
/// to [`crate::app::INVITES_PER_CALL`] (the use case checks the range too,
/// for every front end; here it is checked with the other fields, so that
/// every problem is reported at once, as for the other bodies).
fn invite_count(body: &serde_json::Value) -> Result<u64, Error> {
    use crate::domain::{FieldError, FieldPath, Key, Problem};
    let Some(obj) = body.as_object() else {
        return Err(Error::Invalid(vec![FieldError::new(FieldPath::root(), Problem::NotAnObject)]));
    };
    let mut errors: Vec<FieldError> = obj
        .keys()
        .filter(|k| k.as_str() != "count")
        .map(|k| FieldError::new(FieldPath::root().name(k), Problem::UnknownField { allowed: &["count"] }))
        .collect();
    let range = || Problem::IntegerRange { min: 1, max: crate::app::INVITES_PER_CALL as usize };
    let count = match obj.get("count") {
        None => Err(Problem::Required),
        Some(v) => crate::domain::whole_number(v)
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| (1..=crate::app::INVITES_PER_CALL).contains(n))
            .ok_or_else(range),
    };
    match count {
        Ok(n) if errors.is_empty() => Ok(n),
        Ok(_) => Err(Error::Invalid(errors)),
        Err(p) => {
            errors.push(FieldError::new(Key::Count, p));
            Err(Error::Invalid(errors))
        }
    }
}

/// The Bearer token of the request, or why there is none (401).
fn bearer(req: &Request) -> Result<&str, Error> {
    req.bearer().map_err(Error::Unauthorized)
}

/// The body as JSON, after the media type and size checks.
fn json_body(req: &Request, accepted: &'static [&'static str]) -> Result<Value, Error> {
    match req.media_type() {
        Some(t) if accepted.contains(&t.as_str()) => {}
        _ => return Err(Error::UnsupportedMediaType { accepted }),
    }
    let bytes = req.body_bytes()?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::Malformed("The request body is empty; a JSON object is expected.".into()));
    }
    strict::parse(bytes).map_err(|e| Error::Malformed(format!("The request body is not valid JSON: {e}.")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_shape() {
        assert!(matches!(route("/api"), Some(Route::Doc)));
        assert!(matches!(route("/api/polls"), Some(Route::Polls)));
        assert!(matches!(route("/api/polls/abc"), Some(Route::Poll("abc"))));
        assert!(matches!(route("/api/polls/abc/results"), Some(Route::Results("abc"))));
        for p in
            ["/api/", "/api/polls/", "/api/polls/abc/", "/api/polls/abc/votes", "/apix", "/", "/api/polls//results"]
        {
            assert!(route(p).is_none(), "{p}");
        }
    }
}
