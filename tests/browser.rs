//! Headless-browser tests: runs tests/e2e/web.mjs (playwright-core driving
//! Debian's Chromium, with axe-core) against a real polld. Without Chromium
//! or the npm packages the test is skipped with a notice locally, and fails
//! in CI (`CI=true`), where both are installed by .ci/run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;

#[test]
fn create_vote_see_results_and_manage_in_a_real_browser() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    let ready = Path::new("/usr/bin/chromium").exists() && e2e.join("node_modules/playwright-core").exists();
    if !ready {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium (/usr/bin/chromium) or tests/e2e/node_modules is missing in CI"
        );
        eprintln!("SKIPPED: browser tests need /usr/bin/chromium and `npm ci` in tests/e2e");
        return;
    }
    let server = Server::start();
    let shots = root.join("target/screenshots");
    let out = Command::new("node")
        .current_dir(&e2e)
        .arg("web.mjs")
        .arg(&server.base_url)
        .arg(&shots)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "browser scenario failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}
