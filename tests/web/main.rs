//! The web interface over real HTTP, one module per flow: a real polld,
//! pages in every language (`pages`), the creation form (`create`), votes
//! with their one-time ballots (`vote`) and budget (`throttle`), settings,
//! question types, invite codes, receipts and the admin page.
//!
//! What belongs here: a test that drives polld's pages as a browser without
//! script does (form posts, links) and judges the HTML. What needs script or
//! layout goes to tests/browser.rs (a real Chromium); the JSON API to
//! tests/api. The whole binary also runs on PostgreSQL (scripts/test's
//! second pass). The helpers below are shared by the flows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::*;
use serde_json::json;

const LANGS: [&str; 4] = ["en", "fr", "de", "it"];

fn ballot(html: &str) -> String {
    ballot_code(html).unwrap_or_else(|| panic!("no ballot code in page:\n{html}"))
}

fn assert_page_headers(resp: &Response) {
    let csp = resp.header("content-security-policy").unwrap_or_else(|| panic!("no CSP: {}", resp.describe()));
    // Exactly these directives, each with exactly this source: a loosened
    // one (`connect-src *`, `'unsafe-inline'`) fails.
    let mut directives: Vec<&str> = csp.split(';').map(str::trim).filter(|d| !d.is_empty()).collect();
    directives.sort_unstable();
    assert_eq!(
        directives,
        [
            "base-uri 'none'",
            "connect-src 'self'",
            "default-src 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "img-src 'self'",
            "media-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
        ],
        "{csp}"
    );
    assert_eq!(resp.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
    assert!(resp.header("permissions-policy").is_some_and(|p| p.contains("camera=()")));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert!(resp.media_type().as_deref() == Some("text/html"), "{}", resp.describe());
    resp.assert_no_cookie();
    let text = resp.text();
    assert!(!text.contains("<script>"), "inline script in page");
    assert!(!text.contains(" style="), "inline style in page");
}

fn html_lang(resp: &Response) -> String {
    let text = resp.text();
    let start = text.find("<html lang=\"").expect("html lang") + 12;
    text[start..start + 2].to_owned()
}

fn public_poll(server: &Server) -> Created {
    server.create_public()
}

/// Votes on the share page of `id` and answers the POST's response.
fn vote_form(server: &Server, id: &str, xff: &str, pairs: &[(&str, &str)]) -> (Response, String) {
    let page = server.request("GET", &format!("/p/{id}")).xff(xff).send();
    let code = ballot(&page.text());
    let mut all = vec![("ballot", code.as_str())];
    all.extend_from_slice(pairs);
    (server.post_form(&format!("/p/{id}"), xff, &all), code)
}

fn total(server: &Server, poll: &Created) -> u64 {
    server.get_auth(&poll.results_path(), &poll.token).json()["totalResponses"].as_u64().unwrap()
}

/// Whether the input with `id` is checked.
fn is_checked(html: &str, id: &str) -> bool {
    let tag = html.split(&format!("id=\"{id}\"")).nth(1).and_then(|rest| rest.split('>').next()).unwrap_or("");
    tag.contains(" checked")
}

/// The value of the option marked `selected` in the select with `id`: its
/// `value`, or its text where it has none (what a browser sends).
fn selected_option(html: &str, id: &str) -> Option<String> {
    let select = html.split(&format!("id=\"{id}\"")).nth(1)?.split("</select>").next()?;
    let option = select.split("<option").find(|o| o.split('>').next().is_some_and(|tag| tag.contains("selected")))?;
    let (tag, text) = option.split_once('>')?;
    match tag.split("value=\"").nth(1) {
        Some(value) => value.split('"').next().map(str::to_owned),
        None => text.split('<').next().map(str::to_owned),
    }
}

/// polld with extra arguments (the shared harness takes none of these).
struct Polld {
    child: std::process::Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Polld {
    fn start(args: &[&str]) -> Polld {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_polld"))
            .args(db_args(&dir.path().join(DB_NAME)))
            .args(["--listen", "127.0.0.1:0"])
            .args(if args.contains(&NETWORK_DAY_FLAG) { Vec::new() } else { vec![NETWORK_DAY_FLAG, "0"] })
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("polld output").unwrap();
            if let Some(url) = line.split("listening on http://").nth(1) {
                break url.trim().to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Polld { child, addr, _dir: dir }
    }
}

impl Drop for Polld {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The cells of table `id` in a page: per body row, the row header's text
/// and the texts of its cells, tags dropped.
fn table_rows(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no table {id} in page:\n{html}"));
    let table = &html[start..];
    let table = &table[..table.find("</table>").expect("end of table")];
    let body = &table[table.find("<tbody").expect("tbody")..];
    let text = |s: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in s.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.trim().to_owned()
    };
    body.split("<tr")
        .skip(1)
        .map(|row| row.split("<t").skip(1).map(|cell| text(&format!("<t{cell}"))).collect())
        .collect()
}

mod admin;
mod create;
mod edits;
mod invites;
mod pages;
mod question_types;
mod receipts;
mod schedule;
mod settings;
mod throttle;
mod vote;
