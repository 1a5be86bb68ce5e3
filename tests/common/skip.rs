//! The one way a test skips because a tool it needs is missing: visibly
//! when run by a person, and never under `CI=true`, where it fails instead
//! (CI installs every tool, so a missing one there is a broken CI).

use std::io::Write;

/// For a test whose outside `tool` is missing (`why` says what it is for and
/// how to get it): returns, and the caller then returns, skipping.
///
/// Under `CI=true`, where `.ci/run` must have installed the tool, it panics.
/// Otherwise the notice is written straight to the process's stderr, not with
/// `eprintln!`: libtest captures the print macros of a passing test and shows
/// them only on failure, so a skipped test would read "ok" with no trace that
/// it never ran.
#[track_caller]
pub fn skip_or_fail(tool: &str, why: &str) {
    let file = std::panic::Location::caller().file();
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{file}: {tool} is missing and CI=true: {why}");
    let _ = writeln!(
        std::io::stderr().lock(),
        "NOTICE {file}: {tool} is missing; this test is SKIPPED ({why}); with CI=true it fails instead"
    );
}
