//! Property tests of the web side's parsers, through the real page handler
//! (in process, no network): arbitrary form bodies on every form, arbitrary
//! Accept-Language headers and query strings. Whatever arrives, the answer is
//! a page with a 2xx/3xx/4xx status, never a 500 and never a panic.
//!
//! Case counts are proptest's default (256) unless `PROPTEST_CASES` is set.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, OnceLock};

use anonpoll::day::Day;
use anonpoll::domain::NewPoll;
use anonpoll::http::{Body, Method, Request};
use anonpoll::media::Limits;

use anonpoll::store::Store;
use anonpoll::web::uploads::Uploads;
use anonpoll::web::{Web, WebWorker};
use proptest::prelude::*;
use serde_json::json;

struct Fixture {
    _dir: tempfile::TempDir,
    web: Arc<Web>,
    poll: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let keys = anonpoll::store::Keys::at(&dir.path().join("p.keys"));
        let store = Store::open_db(&dir.path().join("p.sqlite3"), &keys, Default::default()).unwrap();
        let app = crate::common::in_process::unthrottled_app(store);
        let poll = NewPoll::from_json(&json!({
            "title": "Property poll", "lang": "en", "expiryDays": 30, "resultsPublic": true,
            "questions": [{"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]
        }))
        .unwrap();
        let created = app.session().unwrap().create(IpAddr::V4(Ipv4Addr::LOCALHOST), &poll, &[], Day::today()).unwrap();
        let uploads = Uploads::new(Limits::default(), 1 << 20, 1 << 20).unwrap();
        let web = Web::new(app, uploads).unwrap();
        Fixture { _dir: dir, web, poll: created.poll.id.to_string() }
    })
}

thread_local! {
    static WORKER: std::cell::RefCell<Option<WebWorker>> = const { std::cell::RefCell::new(None) };
}

fn handle(req: &Request) -> (u16, String) {
    WORKER.with(|w| {
        let mut w = w.borrow_mut();
        let worker = w.get_or_insert_with(|| fixture().web.worker().unwrap());
        let r = worker.handle(req).settle();
        (r.status, String::from_utf8_lossy(&r.body).into_owned())
    })
}

fn request(method: Method, path: &str, headers: Vec<(String, String)>, body: Vec<u8>) -> Request {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (path.to_owned(), None),
    };
    Request {
        method,
        path,
        query,
        headers,
        body: Body::Bytes(body.into()),
        client: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)),
    }
}

fn form_post(path: &str, body: Vec<u8>) -> Request {
    request(Method::Post, path, vec![("content-type".into(), "application/x-www-form-urlencoded".into())], body)
}

/// Field names the forms really use, plus arbitrary ones.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("title".to_owned()),
        Just("lang".to_owned()),
        Just("expiry".to_owned()),
        Just("results".to_owned()),
        Just("action".to_owned()),
        Just("token".to_owned()),
        Just("ballot".to_owned()),
        Just("confirm".to_owned()),
        (0usize..25).prop_map(|i| format!("q{i}")),
        (0usize..25).prop_map(|i| format!("q{i}_label")),
        (0usize..25, 0usize..15).prop_map(|(i, j)| format!("q{i}_o{j}")),
        (0usize..25, 0usize..15).prop_map(|(i, j)| format!("q{i}-o{j}")),
        "[a-z_0-9\\-\\[\\]\\.]{0,20}",
        any::<String>(),
    ]
}

fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("close".to_owned()),
        Just("reopen".to_owned()),
        Just("delete".to_owned()),
        Just("expiry".to_owned()),
        Just("fr".to_owned()),
        Just("30".to_owned()),
        "-?[0-9]{1,25}",
        "[a-zA-Z ]{0,40}",
        any::<String>(),
    ]
}

fn form_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec((field_name(), field_value()), 0..40).prop_map(|pairs| {
            let mut s = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &pairs {
                s.append_pair(k, v);
            }
            s.finish().into_bytes()
        }),
        prop::collection::vec(any::<u8>(), 0..600),
    ]
}

fn assert_page(status: u16, body: &str, what: &str) -> Result<(), TestCaseError> {
    prop_assert!((200..500).contains(&status), "{what}: status {status}: {}", &body[..body.len().min(400)]);
    Ok(())
}

proptest! {
    #[test]
    fn any_form_body_on_any_form_gets_a_page(body in form_body(), target in 0usize..5) {
        let f = fixture();
        let path = match target {
            0 => "/".to_owned(),
            1 => format!("/p/{}", f.poll),
            2 => format!("/p/{}/results", f.poll),
            3 => format!("/p/{}/admin", f.poll),
            _ => "/p/AAAAAAAAAAAAAAAA".to_owned(),
        };
        let (status, page) = handle(&form_post(&path, body));
        assert_page(status, &page, &path)?;
    }

    #[test]
    fn any_accept_language_gets_a_page_in_a_known_language(value in any::<String>(), q in "[a-z=&;.,*0-9\\-]{0,30}") {
        let f = fixture();
        for path in ["/".to_owned(), format!("/p/{}?{q}", f.poll), format!("/p/{}/results?{q}", f.poll), "/privacy".to_owned()] {
            let req = request(Method::Get, &path, vec![("accept-language".into(), value.clone())], Vec::new());
            let (status, page) = handle(&req);
            prop_assert_eq!(status, 200, "{}: {}", path, &page[..page.len().min(300)]);
            prop_assert!(["en", "fr", "de", "it"].iter().any(|l| page.contains(&format!("<html lang=\"{l}\""))), "{}", path);
        }
    }

    #[test]
    fn any_path_and_method_is_answered(path in "/[a-zA-Z0-9_/\\-\\.%]{0,60}", post in any::<bool>()) {
        let req = if post { form_post(&path, b"a=b".to_vec()) } else { request(Method::Get, &path, Vec::new(), Vec::new()) };
        let (status, page) = handle(&req);
        assert_page(status, &page, &path)?;
    }
}
