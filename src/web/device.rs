//! What a browser may keep of anonpoll on its own device, drawn for the
//! script: the opt-in to keep an admin link in `localStorage` ("Your poll
//! is ready") and the home page's list of the polls kept so.
//!
//! Why this exists: an admin link is shown once, and ordinary navigation
//! (a reload, Back, a language link) could lose it for good. Keeping it in
//! the browser is the one remedy that needs no account and sends nothing:
//! the entries are written and read by `app.js` alone, never by a request.
//! Both parts are `hidden` until the script shows them, since without the
//! script they could do nothing.

use maud::{Markup, html};

use super::layout::Ctx;

/// The checkbox (off by default, no `name`: it is in no form and never
/// sent) that keeps this poll's admin link in this browser. The script
/// reads the entry from the data attributes: `localStorage`
/// `anonpoll:admin:{id}` = `"{erase day} {admin link} {title}"`.
pub fn keep_admin(ctx: &Ctx, id: &str, title: &str, until: &str, admin_link: &str) -> Markup {
    let t = ctx.t;
    html! {
        div.field.check.keep-admin id="keep-admin-field" data-keep-poll=(id) data-keep-title=(title) data-until=(until)
            data-keep-link=(admin_link) hidden {
            input type="checkbox" id="keep-admin" aria-describedby="keep-admin-hint";
            label for="keep-admin" { (t.keep_admin_label) }
            p.hint id="keep-admin-hint" { (t.keep_admin_hint) }
        }
    }
}

/// "Your polls on this device": filled by the script from `localStorage`,
/// shown only when it holds an entry. The forget button's words come along
/// for the rows the script makes.
pub fn my_polls(ctx: &Ctx) -> Markup {
    let t = ctx.t;
    html! {
        section.my-polls id="my-polls" aria-labelledby="my-polls-heading" data-forget=(t.my_polls_forget) hidden {
            h2 id="my-polls-heading" { (t.my_polls_heading) }
            p.hint { (t.my_polls_hint) }
            ul id="my-polls-list" {}
        }
    }
}
