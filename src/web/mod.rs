//! The web interface: server-rendered pages for people, in four languages.
//!
//! Pages: `/` (create a poll), `/p/{id}` (answer it), `/p/{id}/results`,
//! `/p/{id}/admin` (manage it with the admin key), `/p/{id}/ballot` (a
//! voter's own ballot, with their receipt), `/privacy`, the
//! content-hashed static files under `/static/`, and the polls' cleaned
//! media under `/media/{id}`.
//!
//! Promises:
//! - every page works with scripting off; the one small script only fills
//!   the admin key from the URL fragment, copies links and remembers votes
//!   and receipts in `localStorage`;
//! - every text a person typed is escaped by construction (maud templates);
//! - no cookie, no stored or logged address: the client address is used only
//!   by the in-memory limiters (creation limit, vote throttle);
//! - every action goes through the application layer (`app`), exactly like
//!   the JSON API; forms are validated by `domain` alone;
//! - a request can never crash a worker: every failure is a page, made by
//!   one function (`errors::page`) with the status that fits the error.

mod admin;
pub mod assets;
pub mod ballot;
mod create;
mod device;
mod errors;
pub mod form;
pub mod lang;
#[cfg(test)]
mod layering;
mod layout;
pub mod media;
mod origin;
mod own;
mod parts;
mod poll;
mod privacy;
mod results;
pub mod uploads;

use std::sync::Arc;

use crate::app::{App, Session};
use crate::day::Day;
use crate::domain::Lang;
use crate::error::Error;
use crate::http::{Method, Request, Response};

use ballot::BallotBox;
use form::Form;
use layout::{Ctx, message_page};
use uploads::Uploads;

/// What all web workers share.
pub struct Web {
    app: Arc<App>,
    ballots: BallotBox,
    /// One-time codes of the admin page's invite form, so that sending it
    /// again (a reload of the sheet) does not issue another batch. A box of
    /// its own: its keys are not the vote forms', so neither code opens the
    /// other's form.
    invite_forms: BallotBox,
    uploads: Uploads,
    media_budget: media::MediaBudget,
}

/// Whether a request to `path` may carry files (a `multipart/form-data` body
/// up to the upload limit): the creation form and the admin page only.
pub fn accepts_uploads(path: &str) -> bool {
    matches!(route(path), Some(Route::Create | Route::Admin(_)))
}

/// Whether a request may run on the thread that read it
/// ([`crate::server::ServerConfig::inline`]): every read, and a vote, whose
/// answer waits for its commit on the connection rather than on a thread.
/// The other writes (a poll created, changed or deleted, invites, a ballot
/// changed by its receipt) wait on their thread for the writer's commit.
pub fn runs_inline(method: Method, path: &str) -> bool {
    match method {
        Method::Get | Method::Head | Method::Options => true,
        Method::Post => matches!(route(path), Some(Route::Share(_))),
        _ => false,
    }
}

/// A ballot box for `label`'s forms: keyed from the key state where several
/// nodes share the store (a form from one node is good on another), random
/// in this process otherwise.
fn ballot_box(app: &App, label: &'static [u8]) -> anyhow::Result<BallotBox> {
    if app.store.records_forms() {
        BallotBox::keyed(Day::today(), app.store.keys().clone(), label)
    } else {
        BallotBox::new(Day::today())
    }
}

impl Web {
    /// Lets the in-memory keys of the ballot box and held uploads expire on
    /// time even when no request comes (called by a timer).
    pub fn tick(&self) {
        self.ballots.tick(Day::today());
        self.invite_forms.tick(Day::today());
        self.uploads.tick();
    }

    pub fn new(app: Arc<App>, uploads: Uploads) -> anyhow::Result<Arc<Web>> {
        Ok(Arc::new(Web {
            ballots: ballot_box(&app, b"form")?,
            invite_forms: ballot_box(&app, b"invite form")?,
            app,
            uploads,
            media_budget: media::MediaBudget::new()?,
        }))
    }

    /// Whether several nodes may share this store (its forms must then be
    /// good on every node, and spent in the database).
    pub fn shared_store(&self) -> bool {
        self.app.store.records_forms()
    }

    /// A per-worker handler with its own session (read connection).
    pub fn worker(self: &Arc<Web>) -> anyhow::Result<WebWorker> {
        Ok(WebWorker { web: self.clone(), session: self.app.session()? })
    }
}

pub struct WebWorker {
    web: Arc<Web>,
    session: Session,
}

/// The pages, by path shape.
#[derive(Debug, PartialEq, Eq)]
enum Route<'a> {
    Create,
    Privacy,
    Share(&'a str),
    Results(&'a str),
    Admin(&'a str),
    /// A voter's own ballot, with their receipt.
    Ballot(&'a str),
}

fn route(path: &str) -> Option<Route<'_>> {
    match path {
        "/" => return Some(Route::Create),
        "/privacy" => return Some(Route::Privacy),
        _ => {}
    }
    let rest = path.strip_prefix("/p/")?;
    match rest.split_once('/') {
        None if !rest.is_empty() => Some(Route::Share(rest)),
        Some((id, "results")) if !id.is_empty() => Some(Route::Results(id)),
        Some((id, "admin")) if !id.is_empty() => Some(Route::Admin(id)),
        Some((id, "ballot")) if !id.is_empty() => Some(Route::Ballot(id)),
        _ => None,
    }
}

impl WebWorker {
    /// Answers one request with a page. Never panics by design.
    pub fn handle(&mut self, req: &Request) -> Response {
        if matches!(req.method, Method::Get | Method::Head)
            && let Some(r) = assets::serve(&req.path)
        {
            return r;
        }
        let today = Day::today();
        if let Some(reference) = media::held_route(&req.path) {
            // A kept picture's thumbnail on the form that holds it.
            return media::serve_held(&self.web.uploads, req, reference);
        }
        if let Some(id) = media::route(&req.path) {
            // Media answer players and <img>, not people: a bare status.
            return media::serve(&mut self.session, &self.web.media_budget, req, id, today).unwrap_or_else(|e| {
                if let Error::Internal(cause) = &e {
                    eprintln!("anonpoll: internal error: {cause:#}");
                }
                Response::new(e.status()).with_header("Content-Type", "text/plain; charset=utf-8")
            });
        }
        let Some(route) = route(&req.path) else {
            let ctx = Ctx::new(lang::negotiate(req, None), &req.path);
            return message_page(&ctx, 404, ctx.t.page_not_found_title, ctx.t.page_not_found_text);
        };
        let result = match req.method {
            Method::Get | Method::Head => self.get(req, &route, today),
            Method::Post => self.post(req, &route, today),
            _ => Err(Error::MethodNotAllowed(&["GET", "HEAD", "POST"])),
        };
        result.unwrap_or_else(|e| errors::page(&self.ctx(req, None), &e))
    }

    fn get(&mut self, req: &Request, route: &Route, today: Day) -> Result<Response, Error> {
        match route {
            Route::Create => {
                let mut draft = create::Draft::blank(self.lang(req, None));
                draft.once = create::fresh_once(self, today)?;
                Ok(create::form_page(&self.ctx(req, None), &draft, &self.web.uploads))
            }
            Route::Privacy => Ok(privacy::page_response(&self.ctx(req, None), self.web.app.vote_window())),
            Route::Share(id) => {
                let poll = self.session.poll(id, today)?;
                poll::share_page(self, req, &poll, today)
            }
            Route::Results(id) => {
                let poll = self.session.poll(id, today)?;
                results::get(self, req, &poll, today)
            }
            Route::Admin(id) => {
                let poll = self.session.poll(id, today)?;
                let ctx = self.ctx(req, Some(poll.lang));
                Ok(admin::get(&ctx, &poll, req.query_param("done")))
            }
            Route::Ballot(id) => {
                let poll = self.session.poll(id, today)?;
                own::get(self, req, &poll)
            }
        }
    }

    fn post(&mut self, req: &Request, route: &Route, today: Day) -> Result<Response, Error> {
        // No cookies means no ambient authority to forge, but a page on another
        // site could still make a visitor's browser send a vote. Browsers say
        // where a request comes from; tools that do not say are let through.
        if let Some(site) = req.header("sec-fetch-site")
            && !matches!(site.trim(), "same-origin" | "none")
        {
            let ctx = self.ctx(req, None);
            return Ok(message_page(&ctx, 403, ctx.t.error_title, ctx.t.cross_site));
        }
        // Browsers that do not send Sec-Fetch-Site still name the page that
        // sent the form (origin.rs).
        if req.header("sec-fetch-site").is_none() && !origin::from_this_site(req, self.web.app.links().base()) {
            let ctx = self.ctx(req, None);
            return Ok(message_page(&ctx, 403, ctx.t.error_title, ctx.t.cross_site));
        }
        let form = Form::parse(req, self.web.uploads.body_limit)?;
        match route {
            Route::Create => create::post(self, req, &form, today),
            Route::Privacy => Err(Error::MethodNotAllowed(&["GET", "HEAD"])),
            Route::Share(id) => {
                let poll = self.session.poll(id, today)?;
                poll::vote(self, req, &form, &poll, today)
            }
            Route::Results(id) => {
                let poll = self.session.poll(id, today)?;
                results::post(self, req, &form, &poll, today)
            }
            Route::Admin(id) => {
                let poll = self.session.poll(id, today)?;
                admin::post(self, req, &form, poll, today)
            }
            Route::Ballot(id) => {
                let poll = self.session.poll(id, today)?;
                own::post(self, req, &form, &poll, today)
            }
        }
    }

    fn lang(&self, req: &Request, fallback: Option<Lang>) -> Lang {
        lang::negotiate(req, fallback).lang
    }

    fn ctx<'r>(&self, req: &'r Request, fallback: Option<Lang>) -> Ctx<'r> {
        Ctx { network_day: self.web.app.network_votes_per_day(), ..Ctx::new(lang::negotiate(req, fallback), &req.path) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_shape() {
        assert_eq!(route("/"), Some(Route::Create));
        assert_eq!(route("/privacy"), Some(Route::Privacy));
        assert_eq!(route("/p/abc"), Some(Route::Share("abc")));
        assert_eq!(route("/p/abc/results"), Some(Route::Results("abc")));
        assert_eq!(route("/p/abc/admin"), Some(Route::Admin("abc")));
        assert_eq!(route("/p/abc/ballot"), Some(Route::Ballot("abc")));
        for p in
            ["/p/", "/p//results", "/p//ballot", "/p/abc/ballot/", "/p/abc/", "/p/abc/other", "/x", "/privacy/", ""]
        {
            assert_eq!(route(p), None, "{p}");
        }
    }

    /// Reads and votes run on the thread that read them; every other write
    /// waits for the writer's commit on its thread, so runs on a blocking one.
    #[test]
    fn reads_and_votes_run_inline_other_writes_do_not() {
        let inline = [
            (Method::Get, "/p/abc"),
            (Method::Head, "/p/abc/results"),
            (Method::Get, "/api/polls/abc"),
            (Method::Options, "/api/polls"),
            (Method::Post, "/p/abc"),
        ];
        let blocking = [
            (Method::Post, "/"),
            (Method::Post, "/p/abc/admin"),
            (Method::Post, "/p/abc/ballot"),
            (Method::Post, "/api/polls"),
            (Method::Patch, "/api/polls/abc"),
            (Method::Delete, "/api/polls/abc"),
            (Method::Post, "/api/polls/abc/invites"),
            (Method::Post, "/p/abc/results"),
        ];
        for ((method, path), want) in inline.iter().map(|r| (r, true)).chain(blocking.iter().map(|r| (r, false))) {
            assert_eq!(runs_inline(*method, path), want, "{method:?} {path}");
        }
    }
}
