//! `/privacy`: what anonpoll keeps, where and for how long, in the reader's
//! language. The rows mirror docs/PRIVACY.md; keep them in step.

use std::time::Duration;

use maud::html;

use super::layout::{Ctx, page, respond};
use crate::http::Response;

pub fn page_response(ctx: &Ctx, throttle_window: Duration) -> Response {
    let t = ctx.t;
    let (a, b, c) = (t.privacy_throttle_row)(throttle_window.as_secs().div_ceil(60));
    let body = html! {
        h1 { (t.privacy_title) }
        p.lead { (t.privacy_intro) }
        div.table-wrap {
            table.kept {
                caption { (t.privacy_table_caption) }
                thead { tr { th scope="col" { (t.privacy_col_what) } th scope="col" { (t.privacy_col_where) } th scope="col" { (t.privacy_col_until) } } }
                tbody {
                    @for (what, place, until) in t.privacy_rows.iter().take(7) {
                        tr { th scope="row" { (what) } td { (place) } td { (until) } }
                    }
                    tr { th scope="row" { (a) } td { (b) } td { (c) } }
                    @for (what, place, until) in t.privacy_rows.iter().skip(7) {
                        tr { th scope="row" { (what) } td { (place) } td { (until) } }
                    }
                }
            }
        }
        h2 { (t.privacy_never_heading) }
        ul { @for p in t.privacy_never { li { (p) } } }
        h2 { (t.privacy_browser_heading) }
        p { (t.privacy_browser) }
    };
    respond(200, ctx.lang, page(ctx, t.privacy_title, body))
}
