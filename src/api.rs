//! The JSON API: routing and one handler per endpoint.
//!
//! Handlers take a fully read request and return a response; every failure is
//! an [`Error`] turned into a problem document at the edge. The order of
//! checks is fixed: route, method (405), poll existence (404), credentials
//! (401), media type (415), size (413), syntax (400), validation (422), rate
//! limit (429), write.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::day::Day;
use crate::domain::{MediaItem, NewMedia, NewPoll, Poll, PollPatch, Tallies};
use crate::error::{AuthFailure, Error};
use crate::http::{Method, Request, Response};
use crate::ratelimit::RateLimiter;
use crate::schema;
use crate::secret::{AdminToken, PollId};
use crate::store::{Reader, Store};

/// What every worker shares.
pub struct App {
    pub store: Store,
    pub limiter: Arc<RateLimiter>,
    /// Public address of this deployment, without a trailing slash.
    pub base_url: String,
    api_doc: Vec<u8>,
}

const JSON: &[&str] = &["application/json"];
const PATCH_TYPES: &[&str] = &["application/json", "application/merge-patch+json"];

impl App {
    pub fn new(store: Store, limiter: Arc<RateLimiter>, base_url: &str) -> anyhow::Result<App> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let api_doc = serde_json::to_vec_pretty(&schema::openapi(&base_url, limiter.limit()))?;
        Ok(App { store, limiter, base_url, api_doc })
    }

    /// Creates a poll for `client`, within the shared creation limit. Used by
    /// the JSON API and the web form alike, so both obey the same limit; only
    /// the web form brings media.
    pub fn create_poll(
        &self,
        reader: &mut Reader,
        client: std::net::IpAddr,
        poll: &NewPoll,
        media: &[NewMedia],
        today: Day,
    ) -> Result<Created, Error> {
        let quota = self.limiter.try_acquire(client).map_err(Error::RateLimited)?;
        let id = PollId::generate()?;
        let token = AdminToken::generate()?;
        if let Err(e) = self.store.create_poll(&id, &token.hash(), poll, media, today) {
            self.limiter.refund(client);
            return Err(e);
        }
        let poll = reader.poll(&id, today)?.ok_or_else(|| Error::internal(anyhow::anyhow!("new poll vanished")))?;
        Ok(Created { poll, token, quota })
    }

    /// A per-worker handler with its own read connection.
    pub fn worker(self: &Arc<App>) -> anyhow::Result<Worker> {
        Ok(Worker { app: self.clone(), reader: self.store.reader()? })
    }
}

/// A poll just created, with the token to show once.
pub struct Created {
    pub poll: Poll,
    pub token: AdminToken,
    pub quota: crate::ratelimit::Quota,
}

pub struct Worker {
    app: Arc<App>,
    reader: Reader,
}

/// The routes of the API, by shape.
enum Route<'a> {
    Doc,
    Polls,
    Poll(&'a str),
    Results(&'a str),
}

impl Route<'_> {
    fn allowed(&self) -> &'static [&'static str] {
        match self {
            Route::Doc | Route::Results(_) => &["GET", "HEAD", "OPTIONS"],
            Route::Polls => &["POST", "OPTIONS"],
            Route::Poll(_) => &["GET", "HEAD", "PATCH", "DELETE", "OPTIONS"],
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
        _ => None,
    }
}

impl Worker {
    /// Answers one request. Never panics by design; the server layer still
    /// turns a panic into a 500.
    pub fn handle(&mut self, req: &Request) -> Response {
        self.dispatch(req).unwrap_or_else(|e| Response::from_error(&e))
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
        match (&route, req.method) {
            (_, Method::Options) => Ok(Response::new(204).with_header("Allow", route.allowed().join(", "))),
            (Route::Doc, Method::Get | Method::Head) => Ok(Response::new(200)
                .with_header("Content-Type", "application/json")
                .with_header("Cache-Control", "no-cache")
                .with_body(self.app.api_doc.clone())),
            (Route::Polls, Method::Post) => self.create(req, today),
            (Route::Poll(id), Method::Get | Method::Head) => {
                let poll = self.live_poll(id, today)?;
                Ok(Response::json(200, &poll_json(&poll, &self.app.base_url)))
            }
            (Route::Poll(id), Method::Patch) => self.patch(req, id, today),
            (Route::Poll(id), Method::Delete) => {
                let poll = self.live_poll(id, today)?;
                authorize(req, &poll)?;
                self.app.store.delete_poll(&poll.id)?;
                Ok(Response::new(204))
            }
            (Route::Results(id), Method::Get | Method::Head) => {
                let id = PollId::parse(id).ok_or(Error::NotFound)?;
                let (poll, tallies) = self.reader.poll_with_tallies(&id, today)?.ok_or(Error::NotFound)?;
                if !poll.results_public {
                    authorize(req, &poll)?;
                }
                Ok(Response::json(200, &results_json(&poll, &tallies)))
            }
            _ => Err(Error::MethodNotAllowed(route.allowed())),
        }
    }

    fn live_poll(&mut self, id: &str, today: Day) -> Result<Poll, Error> {
        let id = PollId::parse(id).ok_or(Error::NotFound)?;
        self.reader.poll(&id, today)?.ok_or(Error::NotFound)
    }

    fn create(&mut self, req: &Request, today: Day) -> Result<Response, Error> {
        let body = json_body(req, JSON)?;
        let poll = NewPoll::from_json(&body).map_err(Error::Invalid)?;
        let created = self.app.create_poll(&mut self.reader, req.client, &poll, &[], today)?;
        let base = &self.app.base_url;
        let id = &created.poll.id;
        let body = json!({
            "id": id.as_str(),
            "adminToken": created.token.expose(),
            "shareUrl": format!("{base}/p/{id}"),
            "adminUrl": format!("{base}/p/{id}/admin#{}", created.token.expose()),
            "resultsUrl": format!("{base}/p/{id}/results"),
            "expiresOn": created.poll.expires_on.to_string(),
            "poll": poll_json(&created.poll, base),
        });
        let mut r = Response::json(201, &body).with_header("Location", format!("/api/polls/{id}"));
        for (name, value) in created.quota.headers() {
            r = r.with_header(name, value);
        }
        Ok(r)
    }

    fn patch(&mut self, req: &Request, id: &str, today: Day) -> Result<Response, Error> {
        let poll = self.live_poll(id, today)?;
        authorize(req, &poll)?;
        let body = json_body(req, PATCH_TYPES)?;
        let patch = PollPatch::from_json(&body).map_err(Error::Invalid)?;
        patch.check_against(&poll.shape()).map_err(Error::Invalid)?;
        self.app.store.patch_poll(&poll.id, &patch, today)?;
        let updated = self.reader.poll(&poll.id, today)?.ok_or(Error::NotFound)?;
        Ok(Response::json(200, &poll_json(&updated, &self.app.base_url)))
    }
}

/// Checks the Bearer token against the poll's stored hash (constant time).
fn authorize(req: &Request, poll: &Poll) -> Result<(), Error> {
    let token = req.bearer().map_err(Error::Unauthorized)?;
    check_token(poll, token)
}

/// Checks a presented admin token (from a header, a form or the CLI) against
/// the poll's stored hash, in constant time.
pub fn check_token(poll: &Poll, token: &str) -> Result<(), Error> {
    if poll.token_hash.matches(token) { Ok(()) } else { Err(Error::Unauthorized(AuthFailure::InvalidToken)) }
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
    serde_json::from_slice(bytes).map_err(|e| Error::Malformed(format!("The request body is not valid JSON: {e}.")))
}

pub fn status(poll: &Poll) -> &'static str {
    if poll.closed { "closed" } else { "open" }
}

/// The public poll: everything but the token.
pub fn poll_json(poll: &Poll, base_url: &str) -> Value {
    json!({
        "id": poll.id.as_str(),
        "title": poll.title,
        "lang": poll.lang,
        "status": status(poll),
        "resultsPublic": poll.results_public,
        "createdOn": poll.created_on.to_string(),
        "expiresOn": poll.expires_on.to_string(),
        "questions": poll.questions,
        "translations": poll.translations.iter().map(|(l, v)| (l.code().to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "media": poll.media.iter().map(|m| media_json(m, base_url)).collect::<Vec<_>>(),
        "shareUrl": format!("{base_url}/p/{}", poll.id),
    })
}

/// The path a media item is served at.
pub fn media_path(m: &MediaItem) -> String {
    format!("/media/{}", m.id.as_str())
}

/// One media item of the public poll.
fn media_json(m: &MediaItem, base_url: &str) -> Value {
    json!({
        "id": m.id.as_str(),
        "url": format!("{base_url}{}", media_path(m)),
        "kind": m.kind,
        "mimeType": m.mime,
        "bytes": m.size,
        "question": m.slot.question(),
        "alt": m.alt,
        "width": m.width,
        "height": m.height,
    })
}

/// Percent of `count` in `of`, to one decimal; 0 when nothing was answered.
pub fn percent(count: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { (count as f64 * 1000.0 / of as f64).round() / 10.0 }
}

pub fn results_json(poll: &Poll, tallies: &Tallies) -> Value {
    let questions: Vec<Value> = poll
        .questions
        .iter()
        .zip(&tallies.votes)
        .map(|(q, votes)| {
            let answered: u64 = votes.iter().sum();
            json!({
                "label": q.label,
                "type": q.kind,
                "answered": answered,
                "options": q.options.iter().zip(votes).map(|(o, &n)| json!({
                    "label": o, "count": n, "percent": percent(n, answered),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "id": poll.id.as_str(),
        "status": status(poll),
        "totalResponses": tallies.total,
        "questions": questions,
        "responsesByDay": tallies.by_day.iter().map(|(d, n)| json!({"date": d.to_string(), "count": n})).collect::<Vec<_>>(),
    })
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

    #[test]
    fn percent_rounds_to_one_decimal() {
        assert_eq!(percent(1, 3), 33.3);
        assert_eq!(percent(2, 3), 66.7);
        assert_eq!(percent(0, 0), 0.0);
        assert_eq!(percent(5, 5), 100.0);
    }
}
