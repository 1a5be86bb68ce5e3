//! Which language a page is shown in.
//!
//! Order (issue #3): an explicit `?lang=xx`, else the browser's
//! `Accept-Language` by q-value, else the poll's own language on a poll's
//! pages, else English. Only the four interface languages are ever chosen.

use crate::domain::Lang;
use crate::http::Request;

/// The chosen language, and whether the reader picked it with `?lang`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub lang: Lang,
    pub explicit: bool,
}

pub fn negotiate(req: &Request, fallback: Option<Lang>) -> Choice {
    if let Some(lang) = req.query_param("lang").and_then(|c| Lang::from_code(&c.to_ascii_lowercase())) {
        return Choice { lang, explicit: true };
    }
    let lang = req.header("accept-language").and_then(from_accept_language).or(fallback).unwrap_or(Lang::En);
    Choice { lang, explicit: false }
}

/// The best supported language of an `Accept-Language` value (RFC 9110
/// section 12.5.4): highest q first, then the order given; `q=0` excludes.
pub fn from_accept_language(value: &str) -> Option<Lang> {
    let mut best: Option<(u16, Lang)> = None;
    for item in value.split(',').take(32) {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or("").trim();
        let primary = tag.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        let Some(lang) = Lang::from_code(&primary) else { continue };
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .next()
            .map_or(Some(1000), parse_q);
        let Some(q) = q else { continue };
        if q == 0 {
            continue;
        }
        if best.is_none_or(|(bq, _)| q > bq) {
            best = Some((q, lang));
        }
    }
    best.map(|(_, l)| l)
}

/// A q-value in thousandths; `None` if malformed.
fn parse_q(s: &str) -> Option<u16> {
    let v: f32 = s.trim().parse().ok()?;
    (0.0..=1.0).contains(&v).then(|| (v * 1000.0).round() as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_follows_q_values() {
        assert_eq!(from_accept_language("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5"), Some(Lang::Fr));
        assert_eq!(from_accept_language("es, de;q=0.5, it;q=0.8"), Some(Lang::It));
        assert_eq!(from_accept_language("en;q=0.1, de"), Some(Lang::De));
        assert_eq!(from_accept_language("de;q=0, it;q=0.2"), Some(Lang::It));
        assert_eq!(from_accept_language("DE-at"), Some(Lang::De));
        assert_eq!(from_accept_language("es, pt;q=0.9"), None);
        assert_eq!(from_accept_language("fr;q=abc, it;q=0.3"), Some(Lang::It));
        assert_eq!(from_accept_language("fr;q=2"), None);
        assert_eq!(from_accept_language(""), None);
    }
}
