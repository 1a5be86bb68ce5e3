//! Headless-browser tests: runs tests/e2e/web.mjs (playwright-core driving
//! Debian's Chromium, with axe-core) against a real polld. Without Chromium
//! or the npm packages the test is skipped with a notice locally, and fails
//! in CI (`CI=true`), where both are installed by .ci/run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;

/// The first fixture in tests/fixtures/media whose name ends with one of `ends`.
fn fixture(dir: &Path, ends: &[&str]) -> Option<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    names.into_iter().find(|p| ends.iter().any(|e| p.to_string_lossy().ends_with(e))).map(|p| p.display().to_string())
}

#[test]
fn create_vote_see_results_and_manage_in_a_real_browser() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    let ready = Path::new("/usr/bin/chromium").exists() && e2e.join("node_modules/playwright-core").exists();
    if !ready {
        common::skip_or_fail("Chromium or tests/e2e/node_modules", "needs /usr/bin/chromium and `npm ci` in tests/e2e");
        return;
    }
    let server = Server::start();
    let shots = root.join("target/screenshots");
    // A picture made here (with EXIF to strip), and a real sound and video
    // from the media fixtures (Opus in Ogg, WebM: codecs every Chromium plays).
    let files = tempfile::tempdir().unwrap();
    let picture = files.path().join("picture.jpg");
    std::fs::write(&picture, common::media::jpeg_with_exif("browser")).unwrap();
    let fixtures = root.join("tests/fixtures/media");
    let sound = fixture(&fixtures, &[".opus", ".ogg"]).expect("an Ogg/Opus fixture");
    let video = fixture(&fixtures, &[".webm"]).expect("a WebM fixture");
    let out = Command::new("node")
        .current_dir(&e2e)
        .arg("web.mjs")
        .arg(&server.base_url)
        .arg(&shots)
        .arg(&picture)
        .arg(&sound)
        .arg(&video)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "browser scenario failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

/// The design of issue 16 (tests/e2e/design.mjs): every touched page in
/// four languages, light and dark, at 360 and 1280 px.
#[test]
fn the_pages_look_right_in_four_languages_light_and_dark() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    let ready = Path::new("/usr/bin/chromium").exists() && e2e.join("node_modules/playwright-core").exists();
    if !ready {
        common::skip_or_fail("Chromium or tests/e2e/node_modules", "needs /usr/bin/chromium and `npm ci` in tests/e2e");
        return;
    }
    let server = Server::start();
    let shots = root.join("target/screenshots");
    let files = tempfile::tempdir().unwrap();
    let picture = files.path().join("picture.jpg");
    std::fs::write(&picture, common::media::jpeg_with_exif("design")).unwrap();
    let out = Command::new("node")
        .current_dir(&e2e)
        .arg("design.mjs")
        .arg(&server.base_url)
        .arg(&shots)
        .arg(&picture)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "design scenario failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}
