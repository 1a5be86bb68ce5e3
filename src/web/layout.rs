//! The page shell shared by every page, and the headers every page carries.
//!
//! Promises: `<html lang>` is the interface language; poll text in another
//! language is marked with its own `lang` by the pages; every HTML response
//! has a strict CSP (no inline script or style at all), `no-referrer`,
//! `nosniff`, a restrictive `Permissions-Policy`, and `no-store` so that a
//! deleted poll or an admin page never lives on in a cache.

use maud::{DOCTYPE, Markup, html};

use super::assets::ASSETS;
use super::lang::Choice;
use crate::domain::Lang;
use crate::http::Response;
use crate::i18n::{Catalogue, catalogue, endonym};

/// `connect-src 'self'`: the results page's script asks this server (only)
/// for fresh counts while it is open.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
pub const PERMISSIONS: &str = "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), \
     microphone=(), payment=(), usb=(), interest-cohort=(), browsing-topics=()";

/// What every page needs to know about the request it answers.
pub struct Ctx<'a> {
    pub lang: Lang,
    pub t: &'static Catalogue,
    /// Whether the reader chose the language with `?lang` (links then keep it).
    pub explicit: bool,
    /// The path of this page, for the language switcher and form actions.
    pub path: &'a str,
    /// The secret a page was opened with, as the form field that carries
    /// it: the admin key (`token`) of a page unlocked with it, or the
    /// receipt (`receipt`) of a voter's own-ballot page. The language
    /// switcher then posts it along (as forms): a secret is in no URL, and
    /// a plain link would lock the page again.
    pub secret: Option<(&'static str, String)>,
    /// A query parameter the language switcher's links keep (`voted=…` on
    /// the results a voter was sent to: without it they would be hidden).
    pub keep: Option<(&'static str, String)>,
    /// A page that must not offer other languages: one that can be shown
    /// only once (the invite codes just issued), which a switch would lose.
    pub once: bool,
    /// The id of the page's form that the language switcher sends along
    /// (the vote form): its languages are then submit buttons of that form
    /// (`formaction` this page in the language, `name=lang`), so that
    /// switching keeps what was entered, without script too. The page's
    /// POST handler answers them with the form again, entered, in the new
    /// language. A hidden submit button of the form comes first in the
    /// page, so that Enter in the form still sends it.
    pub switch_form: Option<&'static str>,
    /// The responses a `network` poll takes from one network a day on this
    /// server (`--network-votes-per-day`; 0: no such rule), for the pages
    /// that name the rule: set from the application by the web worker
    /// (`WebWorker::ctx`); [`Ctx::new`] assumes polld's default.
    pub network_day: u32,
}

impl<'a> Ctx<'a> {
    /// The secret this page carries under the field `name`, if any.
    pub fn secret(&self, name: &str) -> Option<&str> {
        self.secret.as_ref().filter(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    pub fn new(choice: Choice, path: &'a str) -> Ctx<'a> {
        Ctx {
            lang: choice.lang,
            t: catalogue(choice.lang),
            explicit: choice.explicit,
            path,
            secret: None,
            keep: None,
            once: false,
            switch_form: None,
            network_day: crate::app::NETWORK_VOTES_PER_DAY,
        }
    }

    /// This context for a page shown only once (see [`Ctx::once`]).
    pub fn shown_once(&self) -> Ctx<'a> {
        Ctx {
            lang: self.lang,
            t: self.t,
            explicit: self.explicit,
            path: self.path,
            secret: None,
            keep: None,
            once: true,
            switch_form: None,
            network_day: self.network_day,
        }
    }

    /// This context for a page whose language switcher sends the form
    /// `form` along (see [`Ctx::switch_form`]).
    pub fn switching_with(&self, form: &'static str) -> Ctx<'a> {
        Ctx { switch_form: Some(form), secret: None, keep: None, ..*self }
    }

    /// The request path, safe to put back into a link: a path starting with
    /// `//` (e.g. `//evil.example/x` on a 404 page) would be a link to
    /// another site, so it becomes `/`.
    fn own_path(&self) -> &str {
        if self.path.starts_with('/') && !self.path.starts_with("//") && !self.path.starts_with("/\\") {
            self.path
        } else {
            "/"
        }
    }

    /// A link to `path` that keeps an explicitly chosen language.
    pub fn href(&self, path: &str) -> String {
        if self.explicit { format!("{path}?lang={}", self.lang.code()) } else { path.to_owned() }
    }

    /// A link to `path`, which has a query already, keeping an explicitly
    /// chosen language.
    pub fn href_with(&self, path: &str) -> String {
        if self.explicit { format!("{path}&lang={}", self.lang.code()) } else { path.to_owned() }
    }

    /// This page in `lang`, for the language switcher's links.
    fn in_lang(&self, lang: Lang) -> String {
        match &self.keep {
            Some((name, value)) => format!("{}?{name}={value}&lang={}", self.own_path(), lang.code()),
            None => format!("{}?lang={}", self.own_path(), lang.code()),
        }
    }

    /// Where this page's forms post: the same path, in the same language.
    pub fn action(&self) -> String {
        format!("{}?lang={}", self.own_path(), self.lang.code())
    }
}

/// A whole page: `title` goes in `<title>` (with the site name), `main` in `<main>`.
pub fn page(ctx: &Ctx, title: &str, main: Markup) -> Markup {
    let t = ctx.t;
    html! {
        (DOCTYPE)
        html lang=(ctx.lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                meta name="robots" content="noindex";
                title { (title) " · anonpoll" }
                link rel="icon" type="image/svg+xml" href=(ASSETS.icon.url);
                link rel="stylesheet" href=(ASSETS.css.url);
                script src=(ASSETS.js.url) defer {}
            }
            body {
                // Enter in a form presses the form's first submit button in
                // the page's order, and the switcher's buttons of the form
                // come before it: this one, first of all, sends the form.
                @if let Some(form) = ctx.switch_form { button type="submit" form=(form) hidden {} }
                a.skip href="#main" { (t.skip_link) }
                header.site {
                    div.bar {
                        a.brand href=(ctx.href("/")) { (mark()) "anonpoll" }
                        nav.main aria-label=(t.nav_label) {
                            a href=(ctx.href("/")) { (t.nav_create) }
                            a href=(ctx.href("/privacy")) { (t.nav_privacy) }
                        }
                        @if !ctx.once { nav.langs aria-label=(t.lang_switch_label) {
                            ul {
                                @for l in Lang::ALL {
                                    li {
                                        @if let Some((name, value)) = &ctx.secret {
                                            form method="post" action=(format!("{}?lang={}", ctx.own_path(), l.code())) {
                                                input type="hidden" name=(name) value=(value);
                                                @if l == ctx.lang {
                                                    button type="submit" lang=(l.code()) aria-current="page" { (endonym(l)) }
                                                } @else {
                                                    button type="submit" lang=(l.code()) { (endonym(l)) }
                                                }
                                            }
                                        } @else if let Some(form) = ctx.switch_form {
                                            // What the form holds goes along; nothing is checked
                                            // (no field is required to switch).
                                            button type="submit" form=(form) formaction=(format!("{}?lang={}", ctx.own_path(), l.code()))
                                                formnovalidate name="lang" value=(l.code()) lang=(l.code())
                                                aria-current=[(l == ctx.lang).then_some("page")] { (endonym(l)) }
                                        } @else if l == ctx.lang {
                                            a href=(ctx.in_lang(l)) lang=(l.code()) hreflang=(l.code()) aria-current="page" { (endonym(l)) }
                                        } @else {
                                            a href=(ctx.in_lang(l)) lang=(l.code()) hreflang=(l.code()) { (endonym(l)) }
                                        }
                                    }
                                }
                            }
                        } }
                    }
                }
                main #main tabindex="-1" { (main) }
                footer.site {
                    p { (t.footer) " " a href=(ctx.href("/privacy")) { (t.nav_privacy) } }
                }
            }
        }
    }
}

/// The site's mark (as `icon.svg`): a rounded square holding three rising
/// bars, drawn in the page's accent colours (light or dark). Decoration:
/// the brand's text names the link.
fn mark() -> Markup {
    html! {
        svg.mark viewBox="0 0 32 32" aria-hidden="true" focusable="false" {
            rect.mark-bg width="32" height="32" rx="8" {}
            rect.mark-bar x="7" y="17" width="4.5" height="8" rx="1" {}
            rect.mark-bar x="13.75" y="11" width="4.5" height="14" rx="1" {}
            rect.mark-bar x="20.5" y="6" width="4.5" height="19" rx="1" {}
        }
    }
}

/// An HTML response with the page headers.
pub fn respond(status: u16, lang: Lang, markup: Markup) -> Response {
    Response::new(status)
        .with_header("Content-Type", "text/html; charset=utf-8")
        .with_header("Content-Language", lang.code())
        .with_header("Vary", "Accept-Language")
        .with_header("Cache-Control", "no-store")
        .with_header("Content-Security-Policy", CSP)
        .with_header("Referrer-Policy", "no-referrer")
        .with_header("Permissions-Policy", PERMISSIONS)
        .with_header("X-Content-Type-Options", "nosniff")
        .with_header("X-Frame-Options", "DENY")
        .with_header("Cross-Origin-Opener-Policy", "same-origin")
        .with_header("Cross-Origin-Resource-Policy", "same-origin")
        .with_body(markup.into_string().into_bytes())
}

/// A simple page with a heading, a text and a way back.
pub fn message_page(ctx: &Ctx, status: u16, title: &str, text: &str) -> Response {
    gone_page(ctx, status, title, text, None)
}

/// A message page saying a poll is gone (deleted, or not found): the script
/// drops the poll from "Your polls on this device". `poll` names it; without
/// it the script takes the poll from the admin page's address, if it is one.
pub fn gone_page(ctx: &Ctx, status: u16, title: &str, text: &str, poll: Option<&str>) -> Response {
    let forget = (status == 404 || poll.is_some()).then(|| poll.unwrap_or(""));
    let body = html! {
        h1 { (title) }
        p data-forget-admin=[forget] { (text) }
        p { a href=(ctx.href("/")) { (ctx.t.back_home) } }
    };
    respond(status, ctx.lang, page(ctx, title, body))
}

/// A notice box: `role=status` for good news, `role=alert` for problems.
pub fn notice(kind: &str, text: &str) -> Markup {
    let role = if kind == "error" { "alert" } else { "status" };
    html! { p class=(format!("notice {kind}")) role=(role) { (text) } }
}

/// A poll text in its own language: `lang` is set when it differs from the page.
pub fn lang_attr(content: Lang, page: Lang) -> Option<&'static str> {
    (content != page).then_some(content.code())
}

/// The poll's title under a page's heading, marked with the poll's
/// language where it is not the page's.
pub fn poll_subtitle(title: &str, lang: Option<&'static str>) -> Markup {
    html! { p.subtitle lang=[lang] { (title) } }
}
