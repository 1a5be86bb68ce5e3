//! The static files (one stylesheet, one script, one icon), embedded in the
//! binary and served under a content-hashed name.
//!
//! Why hashed names: the files can then be cached for a year
//! (`immutable`), and a new release changes the name, so no browser ever
//! mixes an old stylesheet with new pages.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};

use crate::http::Response;

pub struct Asset {
    pub url: String,
    content_type: &'static str,
    body: &'static [u8],
}

impl Asset {
    fn new(stem: &str, ext: &str, content_type: &'static str, body: &'static [u8]) -> Asset {
        let digest = Sha256::digest(body);
        let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        Asset { url: format!("/static/{stem}.{hash}.{ext}"), content_type, body }
    }
}

pub struct Assets {
    pub css: Asset,
    pub js: Asset,
    pub icon: Asset,
}

pub static ASSETS: LazyLock<Assets> = LazyLock::new(|| Assets {
    css: Asset::new("app", "css", "text/css; charset=utf-8", include_bytes!("static/app.css")),
    js: Asset::new("app", "js", "text/javascript; charset=utf-8", include_bytes!("static/app.js")),
    icon: Asset::new("icon", "svg", "image/svg+xml", include_bytes!("static/icon.svg")),
});

/// The file at `path`, if it is one of ours.
pub fn serve(path: &str) -> Option<Response> {
    let a = &*ASSETS;
    let asset = [&a.css, &a.js, &a.icon].into_iter().find(|x| x.url == path)?;
    Some(
        Response::new(200)
            .with_header("Content-Type", asset.content_type)
            .with_header("Cache-Control", "public, max-age=31536000, immutable")
            .with_header("X-Content-Type-Options", "nosniff")
            .with_header("Cross-Origin-Resource-Policy", "same-origin")
            .with_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
            .with_body(asset.body.to_vec()),
    )
}
