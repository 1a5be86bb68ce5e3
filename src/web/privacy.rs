//! `/privacy`: what anonpoll keeps, where and for how long, in the reader's
//! language. The rows mirror docs/PRIVACY.md; keep them in step.

use std::time::Duration;

use maud::html;

use super::layout::{Ctx, page, respond};
use crate::http::Response;

pub fn page_response(ctx: &Ctx, throttle_window: Duration) -> Response {
    let t = ctx.t;
    let (a, b, c) = (t.privacy_throttle_row)(throttle_window.as_secs().div_ceil(60));
    // The throttle's row, whose window is the server's, goes eighth.
    let mut rows: Vec<(&str, &str, &str)> = t.privacy_rows.to_vec();
    rows.insert(7.min(rows.len()), (&a, &b, &c));
    // The day rule's, in the server's number, last; none where it is off.
    let day_row = (ctx.network_day > 0).then(|| (t.privacy_network_day_row)(ctx.network_day));
    if let Some((a, b, c)) = &day_row {
        rows.push((a, b, c));
    }
    let body = html! {
        h1 { (t.privacy_title) }
        p.lead { (t.privacy_intro) }
        // Below ~600 px the rows are stacked as cards (app.css), each cell
        // under its column's name (from `data-label`); the ARIA roles keep
        // it a table for assistive technology, which a change of `display`
        // would otherwise undo.
        div.table-wrap {
            table.kept.stacks role="table" {
                caption { (t.privacy_table_caption) }
                thead role="rowgroup" {
                    tr role="row" {
                        th scope="col" role="columnheader" { (t.privacy_col_what) }
                        th scope="col" role="columnheader" { (t.privacy_col_where) }
                        th scope="col" role="columnheader" { (t.privacy_col_until) }
                    }
                }
                tbody role="rowgroup" {
                    @for &(what, place, until) in &rows {
                        tr role="row" {
                            th scope="row" role="rowheader" { (what) }
                            td role="cell" data-label=(t.privacy_col_where) { (place) }
                            td role="cell" data-label=(t.privacy_col_until) { (until) }
                        }
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
