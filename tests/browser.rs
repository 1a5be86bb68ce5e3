//! Headless-browser tests: runs tests/e2e/web.mjs, design.mjs, flows.mjs, schedule.mjs and quickpoll.mjs (playwright-core driving
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

/// Runs `tests/e2e/<script>` with node against a fresh polld (base URL and
/// screenshot directory first, then `args`, made in a temporary directory
/// that `args` receives), and fails with its output unless it succeeds.
/// Skips with a notice (fails with `CI=true`) without Chromium or the npm
/// packages.
fn run_scenario(script: &str, args: impl FnOnce(&Path, &Path) -> Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    let ready = Path::new("/usr/bin/chromium").exists() && e2e.join("node_modules/playwright-core").exists();
    if !ready {
        common::skip_or_fail("Chromium or tests/e2e/node_modules", "needs /usr/bin/chromium and `npm ci` in tests/e2e");
        return;
    }
    let server = Server::start();
    let files = tempfile::tempdir().unwrap();
    let out = Command::new("node")
        .current_dir(&e2e)
        .arg(script)
        .arg(&server.base_url)
        .arg(root.join("target/screenshots"))
        .args(args(root, files.path()))
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

/// A picture made here, with EXIF for the server to strip.
fn picture(files: &Path, marker: &str) -> String {
    let picture = files.join("picture.jpg");
    std::fs::write(&picture, common::media::jpeg_with_exif(marker)).unwrap();
    picture.display().to_string()
}

#[test]
fn create_vote_see_results_and_manage_in_a_real_browser() {
    run_scenario("web.mjs", |root, files| {
        // A real sound and video from the media fixtures (Opus in Ogg,
        // WebM: codecs every Chromium plays).
        let fixtures = root.join("tests/fixtures/media");
        let sound = fixture(&fixtures, &[".opus", ".ogg"]).expect("an Ogg/Opus fixture");
        let video = fixture(&fixtures, &[".webm"]).expect("a WebM fixture");
        vec![picture(files, "browser"), sound, video]
    });
}

/// The design of issue 16 (tests/e2e/design.mjs): every touched page in
/// four languages, light and dark, at 360 and 1280 px.
#[test]
fn the_pages_look_right_in_four_languages_light_and_dark() {
    run_scenario("design.mjs", |_, files| vec![picture(files, "design")]);
}

/// The web flows of issue 25 (tests/e2e/flows.mjs): nothing a person can
/// lose (the admin link, earlier receipts, the invite sheet's way back),
/// nothing that leaves them stuck.
#[test]
fn the_web_flows_lose_nothing_and_leave_no_one_stuck() {
    run_scenario("flows.mjs", |_, _| Vec::new());
}

/// Scheduling (tests/e2e/schedule.mjs): a schedule made in the creation
/// form, answered by tap and keyboard and read best first, in four
/// languages; answered without script; seen in the dark.
#[test]
fn a_schedule_is_made_answered_and_read_in_four_languages() {
    run_scenario("schedule.mjs", |_, _| Vec::new());
}

/// Issue 37's quick poll, walked whole (tests/e2e/quickpoll.mjs): made in
/// the creation form, voted with the results shown after, a typo fixed on
/// the admin page and reloaded, the share page saying so; in each of the
/// four languages, with script (light) and without (dark).
#[test]
fn the_quick_poll_is_made_voted_and_fixed_in_four_languages_with_and_without_script() {
    run_scenario("quickpoll.mjs", |_, _| Vec::new());
}
