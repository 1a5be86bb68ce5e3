//! Where a state-changing form POST says it comes from, for browsers that do
//! not send `Sec-Fetch-Site`.
//!
//! Why: with no cookies there is no ambient authority to forge, but a page on
//! another site can still make a visitor's browser send a vote or a creation.
//! Browsers that send `Sec-Fetch-Site` are judged by it (`mod.rs`); for the
//! others, this module reads `Origin`, or `Referer` when there is no
//! `Origin`.
//!
//! The rule: a POST is from this site when its `Origin` (or, lacking it, the
//! origin of its `Referer`) is the origin of the configured base URL, or
//! names the host the request was sent to (its `Host` header, either scheme:
//! a deployment reached directly, e.g. on loopback). `Origin: null` (sandboxed
//! frames, `data:` pages, pages asking for no referrer) is never this site.
//! A request with neither header (scripts, old browsers) is let through.
//!
//! Our own pages ask for `Referrer-Policy: no-referrer`, which makes browsers
//! send `Origin: null` on their own form posts; every browser that does that
//! also sends `Sec-Fetch-Site`, which then decides instead (docs/WEB.md).

use crate::http::Request;

/// Whether `req` may change state as far as its origin tells: false only if
/// it names an origin and that origin is not this site.
pub fn from_this_site(req: &Request, base_url: &str) -> bool {
    let claimed = match (req.header("origin"), req.header("referer")) {
        (Some(origin), _) => origin.trim(),
        (None, Some(referer)) => referer.trim(),
        (None, None) => return true,
    };
    let Some((scheme, authority)) = origin_of(claimed) else { return false };
    if origin_of(base_url).is_some_and(|(s, a)| s == scheme && a == authority) {
        return true;
    }
    req.header("host").is_some_and(|host| normalize(&scheme, host) == authority)
}

/// The (scheme, host[:port]) of an absolute http(s) URL or origin, lower-cased
/// and without the scheme's default port. `None` for anything else
/// (`null`, other schemes, garbage).
fn origin_of(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Credentials in a URL are not part of its origin, and not allowed here.
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some((scheme.clone(), normalize(&scheme, authority)))
}

fn normalize(scheme: &str, authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    let default = if scheme == "https" { ":443" } else { ":80" };
    authority.strip_suffix(default).map(str::to_owned).unwrap_or(authority)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Body, Method};

    fn post(headers: &[(&str, &str)]) -> Request {
        Request {
            method: Method::Post,
            path: "/p/x".into(),
            query: None,
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: Body::Bytes(Default::default()),
            client: std::net::IpAddr::from([192, 0, 2, 1]),
        }
    }

    const BASE: &str = "https://polls.example.org";

    #[test]
    fn only_this_sites_origin_passes() {
        let ok: &[&[(&str, &str)]] = &[
            &[],
            &[("host", "polls.example.org"), ("origin", "https://polls.example.org")],
            &[("origin", "HTTPS://Polls.Example.org:443")],
            &[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")],
            &[("referer", "https://polls.example.org/p/abc")],
            &[("host", "127.0.0.1:8080"), ("referer", "http://127.0.0.1:8080/")],
        ];
        for headers in ok {
            assert!(from_this_site(&post(headers), BASE), "{headers:?}");
        }
        let refused: &[&[(&str, &str)]] = &[
            &[("host", "polls.example.org"), ("origin", "https://evil.example")],
            &[("host", "polls.example.org"), ("origin", "null")],
            &[("origin", "http://polls.example.org")],
            &[("origin", "https://polls.example.org.evil.example")],
            &[("origin", "https://polls.example.org:8443")],
            &[("referer", "https://evil.example/https://polls.example.org")],
            &[("referer", "https://polls.example.org@evil.example/")],
            &[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8081")],
            &[("origin", "https://evil.example"), ("referer", "https://polls.example.org/")],
            &[("origin", "")],
        ];
        for headers in refused {
            assert!(!from_this_site(&post(headers), BASE), "{headers:?}");
        }
    }
}
