//! The one way a test skips because a tool it needs is missing: visibly
//! when run by a person, counted, and never under `CI=true`, where it fails
//! instead (CI installs every tool, so a missing one there is a broken CI).

use std::io::Write;
use std::path::PathBuf;

/// The file each skip adds a line to (`file<TAB>test<TAB>tool`), under the
/// checkout's `target/`: `scripts/test` empties it before the run and counts
/// its lines after, since libtest reports a skipped test as passed.
pub const SKIPS_FILE: &str = "target/skipped-tests.tsv";

/// For a test whose outside `tool` is missing (`why` says what it is for and
/// how to get it): returns, and the caller then returns, skipping.
///
/// Under `CI=true`, where `.ci/run` must have installed the tool, it panics.
/// Otherwise the notice is written straight to the process's stderr, not with
/// `eprintln!`: libtest captures the print macros of a passing test and shows
/// them only on failure, so a skipped test would read "ok" with no trace that
/// it never ran. The skip is also added to [`SKIPS_FILE`], named by the test
/// (libtest names each test's thread after it), for the run's closing count.
#[track_caller]
pub fn skip_or_fail(tool: &str, why: &str) {
    let file = std::panic::Location::caller().file();
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{file}: {tool} is missing and CI=true: {why}");
    let _ = writeln!(
        std::io::stderr().lock(),
        "NOTICE {file}: {tool} is missing; this test is SKIPPED ({why}); with CI=true it fails instead"
    );
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("(unnamed test)");
    count_in(SKIPS_FILE, file, test, tool);
}

/// Adds `file<TAB>test<TAB>what` to `list` under the checkout, for the
/// run's closing count.
fn count_in(list: &str, file: &str, test: &str, what: &str) {
    let line = format!("{file}\t{test}\t{}\n", what.replace(['\t', '\n'], " "));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(list);
    // One write of one short line in append mode: lines from tests running
    // at once do not interleave.
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::OpenOptions::new().create(true).append(true).open(&path)?.write_all(line.as_bytes()));
    if let Err(e) = written {
        let _ = writeln!(std::io::stderr().lock(), "NOTICE: this test could not be counted in {}: {e}", path.display());
    }
}

/// The file each SQLite-only test run on PostgreSQL adds a line to
/// (`file<TAB>test<TAB>why`): `scripts/test` counts them apart from the
/// tests that passed on PostgreSQL.
pub const SQLITE_ONLY_FILE: &str = "target/sqlite-only-tests.tsv";

/// For a test of something only SQLite has (WAL frames, `-shm` pages, the
/// writer's mix, `pollctl backup`'s copy, the database file's mode): true
/// when this run is on PostgreSQL ([`super::on_postgres`]), after a one-line
/// a note on stderr and a line in [`SQLITE_ONLY_FILE`]; the caller then
/// returns. Its doc comment says what covers the promise on PostgreSQL.
#[track_caller]
pub fn sqlite_only(why: &str) -> bool {
    if !super::on_postgres() {
        return false;
    }
    let file = std::panic::Location::caller().file();
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("(unnamed test)");
    let _ = writeln!(std::io::stderr().lock(), "note {file}: {test} runs on SQLite only ({why})");
    count_in(SQLITE_ONLY_FILE, file, test, why);
    true
}
