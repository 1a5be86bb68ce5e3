//! `pollctl` as a process, against a database that a real polld is serving:
//! the sweep, the operator commands and every token-authorised admin verb.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};

fn pollctl_env(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pollctl"));
    cmd.args(db_args(db)).args(args).env_remove("POLL_ADMIN_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run pollctl")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("pollctl exited by a signal")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok_json(out: &Output) -> Value {
    assert_eq!(code(out), 0, "pollctl failed: {}{}", stdout(out), stderr(out));
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn titled(title: &str, days: u32) -> Value {
    let mut body = valid_poll_json();
    body["title"] = json!(title);
    body["expiryDays"] = json!(days);
    body
}

#[test]
fn sweep_erases_polls_from_their_expiry_day_and_leaves_no_byte() {
    let server = Server::start();
    let db = server.db_path();
    let short = server.create_poll(&titled("Sweep marker short-lived poll", 7));
    let long = server.create_poll(&titled("Sweep marker long-lived poll", 30));
    server.record(&short.id, &[Some(0), Some(1)]).unwrap();

    // The day before expiry: nothing to erase.
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--as-of", &date_from_today(6)]));
    assert_eq!(v["pollsErased"], 0);
    server.get(&short.path()).assert_status(200);

    // On the expiry day itself the 7-day poll goes, with every byte of it.
    let short_body = server.sealed_body(&short.id);
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--as-of", &date_from_today(7)]));
    assert_eq!(v["pollsErased"], 1);
    assert_eq!(v["asOf"], date_from_today(7));
    server.get(&short.path()).assert_status(404);
    server.get(&long.path()).assert_status(200);
    assert_not_in_db(server.dir(), b"Sweep marker short-lived poll", "swept poll's title");
    if erasure_overwrites_sealed_bytes() {
        assert_not_in_db(server.dir(), &short_body, "swept poll's sealed document");
    }
    assert_in_db(server.dir(), &server.sealed_body(&long.id), "the live poll's sealed document");
    assert_not_in_db(server.dir(), b"Sweep marker long-lived poll", "the live poll's title, unsealed");

    // Text output for people; a second run finds nothing.
    let out = pollctl(&db, &["sweep", "--as-of", &date_from_today(7)]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("erased 0 expired poll(s)"), "{}", stdout(&out));
}

#[test]
fn two_sweeps_at_once_while_polld_serves_both_succeed() {
    let server = Server::start();
    let db = server.db_path();
    let n = 12;
    for i in 0..n {
        let resp = server.create_from(&format!("198.51.100.{i}"), &titled(&format!("Concurrent sweep {i}"), 7));
        assert_eq!(resp.status, 201, "{}", resp.describe());
    }
    let day = date_from_today(7);
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_pollctl"))
            .args(db_args(&db))
            .args(["--json", "sweep", "--as-of", &day])
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let erased = ok_json(&a)["pollsErased"].as_u64().unwrap() + ok_json(&b)["pollsErased"].as_u64().unwrap();
    assert_eq!(erased, n, "the two sweeps together erase each poll exactly once");
    // polld kept serving throughout.
    server.get("/api").assert_status(200);
    assert_eq!(server.query_int("SELECT count(*) FROM sealed_polls", &[]), 0);
}

/// The header of `export --format csv`, a documented interface
/// (docs/OPERATIONS.md, "Exports").
const CSV_HEADER: &str = "question_number,question,answered,option,count,percent,if_need_be,no,best";

#[test]
fn show_results_and_export_match_the_api() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    server.record(&poll.id, &[Some(0), Some(1)]).unwrap();
    server.record(&poll.id, &[Some(2), None]).unwrap();
    server.record(&poll.id, &[Some(0), Some(1)]).unwrap();
    let token = ["--token", poll.token.as_str()];

    let api_poll = server.get(&poll.path()).json();
    let shown = ok_json(&pollctl(&db, &[&["--json", "show", &poll.id][..], &token].concat()));
    for key in ["id", "title", "lang", "status", "resultsPublic", "createdOn", "expiresOn", "questions", "translations"]
    {
        assert_eq!(shown[key], api_poll[key], "show differs from the API on {key}");
    }
    let text = stdout(&pollctl(&db, &[&["show", &poll.id][..], &token].concat()));
    assert!(text.contains("Team lunch") && text.contains("Where shall we eat?"), "{text}");

    let api_results = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(api_results["totalResponses"], 3);
    let results = ok_json(&pollctl(&db, &[&["--json", "results", &poll.id][..], &token].concat()));
    assert_eq!(results, api_results);

    // JSON export is identical to the API's results, to stdout or a file.
    let exported = ok_json(&pollctl(&db, &[&["export", &poll.id, "--format", "json"][..], &token].concat()));
    assert_eq!(exported, api_results);
    let file = server.dir().join("export.json");
    let out = pollctl(&db, &[&["export", &poll.id, "--output", file.to_str().unwrap()][..], &token].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let from_file: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(from_file, api_results);

    // CSV: a header and one row per option, with counts and percents; the
    // last three columns are a schedule's (docs/OPERATIONS.md), empty here.
    let out = pollctl(&db, &[&["export", &poll.id, "--format", "csv"][..], &token].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let csv = stdout(&out);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), 1 + 3 + 2, "{csv}");
    assert_eq!(lines[1], "1,Where shall we eat?,3,Pizza,2,66.7,,,");
    assert_eq!(lines[3], "1,Where shall we eat?,3,Salad,1,33.3,,,");
    assert_eq!(lines[5], "2,Which day?,2,Friday,2,100.0,,,");
}

#[test]
fn csv_export_defuses_formulas() {
    let server = Server::start();
    let mut body = valid_poll_json();
    body["questions"][0]["options"] = json!(["=HYPERLINK(\"x\")", "+1", "Plain"]);
    let poll = server.create_poll(&body);
    let out = pollctl(&server.db_path(), &["export", &poll.id, "--format", "csv", "--token", &poll.token]);
    let csv = stdout(&out);
    assert!(csv.contains("'=HYPERLINK"), "{csv}");
    assert!(csv.contains(",'+1,"), "{csv}");
    assert!(!csv.lines().any(|l| l.split(',').any(|c| c.starts_with('=') || c.starts_with("\"="))), "{csv}");
}

#[test]
fn admin_verbs_change_the_poll_as_the_api_would() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let t = poll.token.as_str();

    let v = ok_json(&pollctl(&db, &["--json", "close", &poll.id, "--token", t]));
    assert_eq!(v["status"], "closed");
    assert_eq!(server.get(&poll.path()).json()["status"], "closed");
    ok_json(&pollctl(&db, &["--json", "reopen", &poll.id, "--token", t]));
    assert_eq!(server.get(&poll.path()).json()["status"], "open");

    ok_json(&pollctl(&db, &["--json", "expiry", &poll.id, "90", "--token", t]));
    assert_eq!(server.get(&poll.path()).json()["expiresOn"], date_from_today(90));

    let file = server.dir().join("fr.json");
    std::fs::write(&file, valid_translation().to_string()).unwrap();
    ok_json(&pollctl(&db, &["--json", "translation", "set", &poll.id, "fr", file.to_str().unwrap(), "--token", t]));
    assert_eq!(server.get(&poll.path()).json()["translations"]["fr"], valid_translation());
    ok_json(&pollctl(&db, &["--json", "translation", "remove", &poll.id, "fr", "--token", t]));
    assert_eq!(server.get(&poll.path()).json()["translations"], json!({}));

    let v = ok_json(&pollctl(&db, &["--json", "delete", &poll.id, "--token", t]));
    assert_eq!(v["deleted"], poll.id);
    server.get(&poll.path()).assert_status(404);
    assert_not_in_db(server.dir(), b"Team lunch", "deleted poll's title");
}

#[test]
fn settings_change_as_the_api_would_and_show_prints_them() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let t = poll.token.as_str();
    let closes = date_from_today(10);
    let args = ["--json", "settings", &poll.id, "--results", "afterClose", "--closes-on", &closes, "--shuffle", "true"];
    let v = ok_json(&pollctl(&db, &[&args[..], &["--token", t]].concat()));
    assert_eq!(
        (&v["resultsVisibility"], &v["closesOn"], &v["shuffleOptions"]),
        (&json!("afterClose"), &json!(closes), &json!(true))
    );
    assert_eq!(server.get(&poll.path()).json()["closesOn"], json!(closes));

    let out = pollctl(&db, &["show", &poll.id, "--token", t]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("results: afterClose"), "{text}");
    assert!(text.contains(&format!("voting closes on {closes}")), "{text}");
    assert!(text.contains("options shuffled"), "{text}");

    // The API's rules, the API's field names; exit 5 and nothing changed.
    for bad in [["--closes-on", "2000-01-01"], ["--results", "everyone"]] {
        let out = pollctl(&db, &["settings", &poll.id, bad[0], bad[1], "--token", t]);
        assert_eq!(code(&out), 5, "{}", stderr(&out));
    }
    let out = pollctl(&db, &["settings", &poll.id, "--closes-on", "2000-01-01", "--token", t]);
    assert!(stderr(&out).contains("closesOn"), "{}", stderr(&out));
    let out = pollctl(&db, &["settings", &poll.id, "--token", t]);
    assert_eq!(code(&out), 5, "nothing to change: {}", stderr(&out));
    assert_eq!(server.get(&poll.path()).json()["resultsVisibility"], "afterClose");

    let v = ok_json(&pollctl(&db, &["--json", "settings", &poll.id, "--closes-on", "none", "--token", t]));
    assert_eq!(v["closesOn"], json!(null));
}

#[test]
fn invites_are_issued_and_counted_and_the_duplicate_check_set_as_the_api_would() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let t = poll.token.as_str();
    let show = |server: &Server| {
        let out = pollctl(&server.db_path(), &["show", &poll.id, "--token", t]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    assert!(show(&server).contains("duplicate check: network"), "{}", show(&server));

    let v = ok_json(&pollctl(&db, &["--json", "settings", &poll.id, "--duplicate-check", "invite", "--token", t]));
    assert_eq!(v["duplicateCheck"], "invite");
    assert_eq!(server.get(&poll.path()).json()["duplicateCheck"], "invite");
    assert!(show(&server).contains("duplicate check: invite"), "{}", show(&server));
    let out = pollctl(&db, &["settings", &poll.id, "--duplicate-check", "ip", "--token", t]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert!(stderr(&out).contains("duplicateCheck"), "{}", stderr(&out));

    // --json: the API's 201 document, links on pollctl's --base-url.
    let base = ["--base-url", "https://polls.example.org"];
    let v = ok_json(&pollctl(&db, &[&base[..], &["--json", "invites", "add", &poll.id, "3", "--token", t]].concat()));
    assert_eq!((&v["issued"], &v["used"]), (&json!(3), &json!(0)));
    let json_codes: Vec<String> =
        v["invites"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap().to_owned()).collect();
    assert_eq!(json_codes.len(), 3);
    for i in v["invites"].as_array().unwrap() {
        let share = format!("https://polls.example.org/p/{}#invite={}", poll.id, i["code"].as_str().unwrap());
        assert_eq!(i["url"], share);
    }
    // Text: `CODE<TAB>URL` per line on stdout, the counts on stderr.
    let out = pollctl(&db, &["invites", "add", &poll.id, "2", "--token", t]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines: Vec<(String, String)> = stdout(&out)
        .lines()
        .map(|l| {
            let (c, u) = l.split_once('\t').unwrap_or_else(|| panic!("not CODE<TAB>URL: {l:?}"));
            (c.to_owned(), u.to_owned())
        })
        .collect();
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    for (c, u) in &lines {
        assert_eq!(c.len(), 24, "{c}");
        assert!(u.ends_with(&format!("#invite={c}")), "{u}");
        assert!(!json_codes.contains(c));
    }
    assert!(stderr(&out).contains("the poll has 5, 0 used"), "{}", stderr(&out));

    // The codes pollctl printed vote on the share page polld serves.
    let ip = Server::fresh_client_ip();
    let ballot = [("q0".to_owned(), "0".to_owned()), ("q1".to_owned(), "1".to_owned())];
    for code in [&json_codes[0], &lines[1].0] {
        let fields = [&ballot[..], &[("invite".to_owned(), code.clone())]].concat();
        server.vote_fields(&poll.id, &fields, &ip).unwrap();
    }
    let v = ok_json(&pollctl(&db, &["--json", "invites", "status", &poll.id, "--token", t]));
    assert_eq!(v, json!({"issued": 5, "used": 2}));
    let out = pollctl(&db, &["invites", "status", &poll.id, "--token", t]);
    assert_eq!(stdout(&out).trim(), "invite codes: 5 issued, 2 used");
    assert_eq!(server.get_auth(&format!("/api/polls/{}/invites", poll.id), t).json(), v);

    // Exit codes as the other verbs: 3 no such poll, 4 token, 5 invalid, 2 usage.
    for (args, want) in [
        (vec!["invites", "add", "AAAAAAAAAAAAAAAAAAAAAA", "1", "--token", t], 3),
        (vec!["invites", "status", "AAAAAAAAAAAAAAAAAAAAAA", "--token", t], 3),
        (vec!["invites", "add", &poll.id, "1"], 4),
        (vec!["invites", "add", &poll.id, "1", "--token", "wrong"], 4),
        (vec!["invites", "status", &poll.id, "--token", "wrong"], 4),
        (vec!["invites", "add", &poll.id, "0", "--token", t], 5),
        (vec!["invites", "add", &poll.id, "1001", "--token", t], 5),
        (vec!["invites", "add", &poll.id, "many", "--token", t], 2),
        (vec!["invites", "add", &poll.id, "--token", t], 2),
    ] {
        let out = pollctl(&db, &args);
        assert_eq!(code(&out), want, "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?} printed {}", stdout(&out));
    }
    let out = pollctl(&db, &["invites", "add", &poll.id, "1001", "--token", t]);
    assert!(stderr(&out).contains("count"), "{}", stderr(&out));
    assert_eq!(ok_json(&pollctl(&db, &["--json", "invites", "status", &poll.id, "--token", t]))["issued"], 5);
    // Codes never stored as printed.
    for (c, _) in &lines {
        assert_not_in_db(server.dir(), c.replace('-', "").as_bytes(), "an invite code");
    }
}

#[test]
fn token_can_come_from_the_environment_or_a_file() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let out = pollctl_env(&db, &["--json", "close", &poll.id], &[("POLL_ADMIN_TOKEN", &poll.token)]);
    assert_eq!(ok_json(&out)["status"], "closed");
    let file = server.dir().join("token.txt");
    std::fs::write(&file, format!("{}\n", poll.token)).unwrap();
    let out = pollctl(&db, &["--json", "reopen", &poll.id, "--token-file", file.to_str().unwrap()]);
    assert_eq!(ok_json(&out)["status"], "open");
    // The token never shows in pollctl's output.
    assert!(!stdout(&out).contains(&poll.token) && !stderr(&out).contains(&poll.token));
}

#[test]
fn wrong_or_missing_tokens_change_nothing_and_exit_4() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let other = server.create_default();
    for args in [
        vec!["close", &poll.id, "--token", "not-the-token"],
        vec!["close", &poll.id, "--token", &other.token],
        vec!["close", &poll.id],
        vec!["delete", &poll.id, "--token", &other.token],
        vec!["results", &poll.id, "--token", "x"],
        vec!["export", &poll.id],
    ] {
        let out = pollctl(&db, &args);
        assert_eq!(code(&out), 4, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("token"), "{}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?} printed {}", stdout(&out));
    }
    let now = server.get(&poll.path()).json();
    assert_eq!(now["status"], "open");
}

#[test]
fn unknown_polls_and_invalid_input_have_their_own_exit_codes() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let t = poll.token.as_str();
    assert_eq!(code(&pollctl(&db, &["show", "AAAAAAAAAAAAAAAA", "--token", t])), 3);
    assert_eq!(code(&pollctl(&db, &["show", "../../etc/passwd", "--token", t])), 3);

    let out = pollctl(&db, &["expiry", &poll.id, "8", "--token", t]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert!(stderr(&out).contains("expiryDays"), "{}", stderr(&out));

    let file = server.dir().join("bad.json");
    std::fs::write(&file, json!({"title": "Court", "questions": [{"label": "Où", "options": ["a", "b"]}]}).to_string())
        .unwrap();
    let out = pollctl(&db, &["translation", "set", &poll.id, "fr", file.to_str().unwrap(), "--token", t]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    let out = pollctl(&db, &["translation", "set", &poll.id, "en", file.to_str().unwrap(), "--token", t]);
    assert_eq!(code(&out), 5, "own language: {}", stderr(&out));
    std::fs::write(&file, "{not json").unwrap();
    let out = pollctl(&db, &["translation", "set", &poll.id, "fr", file.to_str().unwrap(), "--token", t]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    let out = pollctl(&db, &["sweep", "--as-of", "tomorrow"]);
    assert_eq!(code(&out), 2, "usage error: {}", stderr(&out));

    // Nothing changed.
    let now = server.get(&poll.path()).json();
    assert_eq!(now["expiresOn"], date_from_today(30));
    assert_eq!(now["translations"], json!({}));
}

#[test]
fn stats_and_check_need_no_token_and_reveal_no_poll() {
    let server = Server::start();
    let db = server.db_path();
    let a = server.create_poll(&titled("Stats secret title", 30));
    server.create_default();
    server.record(&a.id, &[Some(0), None]).unwrap();
    server.exec_sql("UPDATE sealed_polls SET expires_on = ?1 WHERE id != ?2", [today(), a.id.clone()]);

    let out = pollctl(&db, &["--json", "stats"]);
    let v = ok_json(&out);
    assert_eq!(v["livePolls"], 1);
    assert_eq!(v["expiredPolls"], 1);
    assert_eq!(v["responses"], 1);
    assert!(v["databaseBytes"].as_u64().unwrap() > 0);
    let text = stdout(&pollctl(&db, &["stats"]));
    for secret in ["Stats secret title", a.id.as_str()] {
        assert!(!stdout(&out).contains(secret) && !text.contains(secret), "stats revealed {secret}");
    }

    let v = ok_json(&pollctl(&db, &["--json", "check"]));
    assert_eq!(v["integrity"], "ok");
    assert_eq!(v["ok"], true);
    assert_eq!(v["schemaVersion"], v["expectedSchemaVersion"]);
}

/// `pollctl backup` copies a SQLite file: private, sound, never over an
/// existing file. On PostgreSQL it refuses, names pg_dump
/// (docs/OPERATIONS.md, "Running several nodes") and writes nothing; that a
/// PostgreSQL copy holds nothing in clear is tests/operations/several_nodes.rs's
/// base-backup scan.
#[test]
fn backup_needs_no_token_makes_a_private_sound_copy_and_overwrites_nothing() {
    let server = Server::start();
    let db = server.db_path();
    server.create_poll(&titled("Backup poll", 30));
    server.create_default();
    let copy = server.dir().join("backup.sqlite3");
    let out = pollctl(&db, &["backup", copy.to_str().unwrap()]);
    if on_postgres() {
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains("pg_dump"), "{}", stderr(&out));
        assert!(!copy.exists(), "a file written for a PostgreSQL backup");
        return;
    }
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // As docs/OPERATIONS.md says: only the operator may read a backup.
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&copy).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the backup's mode is {:o}", mode & 0o777);
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let polls: i64 = conn.query_row("SELECT count(*) FROM sealed_polls", [], |r| r.get(0)).unwrap();
    assert_eq!(polls, 2);
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    drop(conn);
    let out = pollctl(&db, &["backup", copy.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "an existing file must not be overwritten");
}

#[test]
fn check_fails_on_a_newer_schema_and_a_missing_database_is_an_error() {
    let server = Server::start();
    let db = server.db_path();
    // A file that is not there, whichever engine the run is on (its
    // database's name would be found beside it on PostgreSQL).
    let nope = server.dir().join("nope.sqlite3");
    let out = Command::new(env!("CARGO_BIN_EXE_pollctl")).arg("--db").arg(&nope).arg("stats").output().unwrap();
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no database"), "{}", stderr(&out));
    assert!(!nope.exists(), "pollctl must not create a database");
    set_schema_version(server.dir(), 99);
    let out = pollctl(&db, &["check"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("newer"), "{}", stderr(&out));
}

#[test]
fn every_verb_has_help() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite3");
    for verb in [
        vec!["sweep"],
        vec!["stats"],
        vec!["backup"],
        vec!["check"],
        vec!["show"],
        vec!["results"],
        vec!["export"],
        vec!["close"],
        vec!["reopen"],
        vec!["expiry"],
        vec!["settings"],
        vec!["translation"],
        vec!["translation", "set"],
        vec!["translation", "remove"],
        vec!["invites"],
        vec!["invites", "add"],
        vec!["invites", "status"],
        vec!["delete"],
    ] {
        let mut args = verb.clone();
        args.push("--help");
        let out = pollctl(&db, &args);
        assert_eq!(code(&out), 0, "{verb:?} --help");
        assert!(stdout(&out).contains("Usage:"), "{verb:?}: {}", stdout(&out));
    }
    let out = pollctl(&db, &["--help"]);
    assert!(stdout(&out).contains("Exit codes"), "{}", stdout(&out));
    // What the sweep erases, and how to preview it.
    let help = stdout(&pollctl(&db, &["sweep", "--help"]));
    for what in ["responses", "media", "--dry-run", "--as-of"] {
        assert!(help.contains(what), "sweep --help does not mention {what}: {help}");
    }
}

#[test]
fn sweep_dry_run_lists_what_a_sweep_would_erase_and_erases_nothing() {
    let server = Server::start();
    let db = server.db_path();
    let short = server.create_poll(&titled("Dry run short-lived poll", 7));
    let long = server.create_poll(&titled("Dry run long-lived poll", 30));
    server.record(&short.id, &[Some(0), Some(1)]).unwrap();
    server.record(&short.id, &[Some(1), None]).unwrap();
    server.record(&long.id, &[Some(2), None]).unwrap();
    // A third poll, 7 days too, made on the web form with a picture.
    let picture = media::jpeg_with_exif("dry run");
    let code_once = once(&server);
    let resp = server
        .request("POST", "/")
        .xff(&Server::fresh_client_ip())
        .header("Content-Type", &media::multipart_type())
        .body(media::multipart(
            &media::minimal_form(&code_once, "Dry run picture poll", "A picture"),
            &[media::File("pm", "p.jpg", "image/jpeg", &picture)],
        ))
        .send();
    assert_eq!(resp.status, 201, "{}", resp.describe());
    // Media bytes as stored: sealed, padded (what a sweep frees).
    let media_bytes = server.query_int("SELECT sum(length(bytes)) FROM sealed_media", &[]);
    let counts = || -> (i64, i64, i64) {
        let n = server.query_ints(
            "SELECT (SELECT count(*) FROM sealed_polls), (SELECT count(*) FROM sealed_ballots),
                    (SELECT count(*) FROM sealed_media)",
            &[],
        );
        (n[0], n[1], n[2])
    };
    let before = counts();
    assert_eq!(before, (3, 3, 1));

    let (day7, day30) = (date_from_today(7), date_from_today(30));
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--dry-run", "--as-of", &day7]));
    let due7 = json!({"expiresOn": day7, "polls": 2, "responses": 2, "media": 1, "mediaBytes": media_bytes});
    assert_eq!(
        v,
        json!({"asOf": day7, "dryRun": true, "pollsDue": 2, "responses": 2, "media": 1, "mediaBytes": media_bytes,
            "byExpiryDay": [due7]})
    );
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--dry-run", "--as-of", &day30]));
    assert_eq!((&v["pollsDue"], &v["responses"], &v["media"]), (&json!(3), &json!(3), &json!(1)));
    assert_eq!(
        v["byExpiryDay"][1],
        json!({"expiresOn": day30, "polls": 1, "responses": 1, "media": 0, "mediaBytes": 0})
    );
    // Today: nothing is due.
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--dry-run"]));
    assert_eq!((&v["asOf"], &v["pollsDue"], &v["byExpiryDay"]), (&json!(today()), &json!(0), &json!([])));

    let out = pollctl(&db, &["sweep", "--dry-run", "--as-of", &day7]);
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("dry run, nothing erased: a sweep as of {day7} would erase 2 poll(s)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("expiring {day7}: 2 poll(s), 2 response(s), 1 media file(s) of {media_bytes} bytes")),
        "{text}"
    );
    // Counts only: nothing about any single poll.
    let json_out = stdout(&pollctl(&db, &["--json", "sweep", "--dry-run", "--as-of", &day30]));
    for secret in ["Dry run", short.id.as_str(), long.id.as_str()] {
        assert!(!text.contains(secret) && !json_out.contains(secret), "the dry run revealed {secret}");
    }

    // Nothing was erased or changed.
    assert_eq!(counts(), before);
    server.get(&short.path()).assert_status(200);
    assert_in_db(server.dir(), &server.sealed_body(&short.id), "the previewed poll's sealed document");
    // The sweep then erases exactly what the dry run listed.
    let v = ok_json(&pollctl(&db, &["--json", "sweep", "--as-of", &day7]));
    assert_eq!(v["pollsErased"], 2);
    assert_eq!(counts(), (1, 1, 0));
}

#[test]
fn results_are_text_for_people_and_the_api_s_json_with_json() {
    let server = Server::start();
    let db = server.db_path();
    let poll = typed_poll(&server);
    let out = pollctl(&db, &["results", &poll.id, "--token", &poll.token]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(serde_json::from_str::<Value>(&text).is_err(), "results without --json printed JSON: {text}");
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    let has = |want: &[&str]| assert!(lines.iter().any(|l| l == want), "no line {want:?} in:\n{text}");
    has(&["poll", &format!("{}:", poll.id), "Team", "lunch"]);
    has(&["responses:", "3"]);
    has(&["responses", "per", "day:", &format!("{}:", today()), "3"]);
    // Single choice: each option's count and share of the question's answers.
    has(&["1.", "Lunch", "(2", "answered)"]);
    has(&["Pizza", "0", "0.0", "%"]);
    has(&["Sushi", "2", "100.0", "%"]);
    // Multiple choice: shares of the ballots that answered, so more than 100 % in all.
    has(&["Olives", "1", "50.0", "%"]);
    has(&["Chili", "2", "100.0", "%"]);
    // Ranking: first choices, then the places (Wed beats Mon 2–1 and Tue 2–0).
    has(&["first", "choices:"]);
    has(&["Wed", "2", "66.7", "%"]);
    has(&["ranking", "(Schulze", "method):"]);
    has(&["1.", "Wed"]);
    // Scale: the distribution by value, mean and median.
    has(&["4.", "Mood", "(3", "answered)"]);
    has(&["2", "2"]);
    has(&["5", "1"]);
    has(&["mean", "3.00,", "median", "2.00"]);
    // A ranking nobody ranked says so, rather than every option first.
    let fresh = server.create_poll(&with(
        valid_poll_json(),
        "/questions",
        json!([{"type": "ranked", "label": "Days", "options": ["Mon", "Tue", "Wed"]}]),
    ));
    let empty = pollctl(&db, &["results", &fresh.id, "--token", &fresh.token]);
    let text = stdout(&empty);
    assert!(text.contains("   ranking (Schulze method): nobody has ranked yet\n"), "{text}");
    assert!(!text.contains("1. Mon, Tue, Wed"), "{text}");
    // --json is the API's document, as before.
    let v = ok_json(&pollctl(&db, &["--json", "results", &poll.id, "--token", &poll.token]));
    assert_eq!(v, server.get_auth(&poll.results_path(), &poll.token).json());
}

#[test]
fn links_are_absolute_on_the_base_url_or_on_polld_s_default() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pollctl"));
        cmd.args(db_args(&db)).args(args).args(["--token", &poll.token]);
        for k in ["POLL_ADMIN_TOKEN", "POLL_BASE_URL", "POLL_LISTEN"] {
            cmd.env_remove(k);
        }
        cmd.envs(env.iter().copied());
        let out = cmd.output().unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        out
    };
    let share = |base: &str| format!("{base}/p/{}", poll.id);
    // pollctl's options, its environment, and the base its links must have.
    type Case = (&'static [&'static str], &'static [(&'static str, &'static str)], &'static str);
    let cases: [Case; 4] = [
        (&[], &[], "http://127.0.0.1:8080"),
        (&[], &[("POLL_LISTEN", "127.0.0.1:9090")], "http://127.0.0.1:9090"),
        (&["--base-url", "https://polls.example.org/"], &[], "https://polls.example.org"),
        (&[], &[("POLL_BASE_URL", "https://env.example.org")], "https://env.example.org"),
    ];
    for (args, env, base) in cases {
        let out = run(&[args, &["--json", "show", &poll.id]].concat(), env);
        assert_eq!(ok_json(&out)["shareUrl"], share(base), "{args:?} {env:?}");
        // The text form prints the links its help promises.
        let out = run(&[args, &["show", &poll.id]].concat(), env);
        let text = stdout(&out);
        assert!(text.contains(&format!("share page: {}\n", share(base))), "{text}");
        assert!(text.contains(&format!("results page: {}/results", share(base))), "{text}");
        // Only a base pollctl made up is pointed out.
        let noted = stderr(&out).contains("give --base-url or POLL_BASE_URL");
        assert_eq!(noted, args.is_empty() && !env.iter().any(|(k, _)| *k == "POLL_BASE_URL"), "{}", stderr(&out));
    }
    let help = stdout(&run(&["show", "--help"], &[]));
    assert!(help.contains("share and results links"), "{help}");
}

/// Votes on `poll_id` with the form `fields` (docs/WEB.md) from a fresh
/// client; panics unless the vote counted.
fn vote_fields(server: &Server, poll_id: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    server.vote_fields(poll_id, &fields, &Server::fresh_client_ip()).unwrap();
}

/// A poll with one question of each type and three ballots.
fn typed_poll(server: &Server) -> Created {
    let mut body = valid_poll_json();
    body["questions"] = json!([
        {"label": "Lunch", "options": ["Pizza", "Sushi"]},
        {"type": "multiple", "label": "Toppings", "options": ["Olives", "Basil", "Chili"], "maxChoices": 2},
        {"type": "ranked", "label": "Days", "options": ["Mon", "Tue", "Wed"]},
        {"type": "scale", "label": "Mood", "scaleMin": 1, "scaleMax": 5, "minLabel": "bad", "maxLabel": "good", "required": true}
    ]);
    let poll = server.create_poll(&body);
    vote_fields(server, &poll.id, &[("q0", "1"), ("q1", "0"), ("q1", "2"), ("q2r2", "1"), ("q2r0", "2"), ("q3", "5")]);
    vote_fields(server, &poll.id, &[("q1", "2"), ("q2r0", "1"), ("q3", "2")]);
    vote_fields(server, &poll.id, &[("q0", "1"), ("q2r2", "1"), ("q2r1", "2"), ("q2r0", "3"), ("q3", "2")]);
    poll
}

#[test]
fn show_results_and_exports_cover_every_question_type() {
    let server = Server::start();
    let db = server.db_path();
    let poll = typed_poll(&server);
    let token = ["--token", poll.token.as_str()];

    let out = pollctl(&db, &[&["show", &poll.id][..], &token].concat());
    let text = stdout(&out);
    for line in [
        "1. Lunch [one answer]",
        "2. Toppings [1 to 2 answers]",
        "3. Days [ranking]",
        "4. Mood [scale 1 (bad) to 5 (good), required]",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    let shown = ok_json(&pollctl(&db, &[&["--json", "show", &poll.id][..], &token].concat()));
    assert_eq!(shown["questions"][1]["maxChoices"], 2);
    assert_eq!(shown["questions"][3]["required"], true);

    let r = ok_json(&pollctl(&db, &[&["--json", "results", &poll.id][..], &token].concat()));
    let q = &r["questions"];
    assert_eq!((q[1]["answered"].as_u64(), q[1]["options"][2]["count"].as_u64()), (Some(2), Some(2)));
    // Wed first twice, Mon first once: Wed beats Mon 2–1 and Tue 2–0.
    assert_eq!(q[2]["ranking"][0], json!({"place": 1, "options": ["Wed"]}));
    assert_eq!(q[2]["options"][2]["firstChoices"], 2);
    assert_eq!(q[2]["pairwise"][2], json!([2, 2, 0]));
    assert_eq!((q[3]["mean"].as_f64(), q[3]["median"].as_f64()), (Some(3.0), Some(2.0)));

    let out = pollctl(&db, &[&["export", &poll.id, "--format", "csv"][..], &token].concat());
    let csv = stdout(&out);
    assert_eq!(csv.lines().next(), Some(CSV_HEADER), "{csv}");
    assert!(csv.lines().any(|l| l == "3,Days,3,Wed,2,66.7,,,"), "{csv}");
    assert!(csv.lines().any(|l| l == "4,Mood,3,2,2,66.7,,,"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 2 + 3 + 3 + 5, "{csv}");

    let out = pollctl(&db, &[&["export", &poll.id, "--format", "ballots"][..], &token].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let csv = stdout(&out);
    let mut lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.remove(0), "q1:Pizza,q1:Sushi,q2:Olives,q2:Basil,q2:Chili,q3:Mon,q3:Tue,q3:Wed,q4");
    lines.sort_unstable();
    assert_eq!(lines, [",,0,0,1,1,,,2", "0,1,,,,3,2,1,2", "0,1,1,0,1,2,,1,5"]);
    // Nothing of a ballot is given without the token.
    let out = pollctl(&db, &["export", &poll.id, "--format", "ballots", "--token", "wrong"]);
    assert_eq!(code(&out), 4);
    assert!(stdout(&out).is_empty());
}

/// A poll with a single choice, a schedule in Europe/Paris and one without
/// a zone, and three ballots cast on its share page (docs/WEB.md).
fn schedule_poll(server: &Server) -> Created {
    let mut body = valid_poll_json();
    body["questions"] = json!([
        {"label": "Lunch", "options": ["Pizza", "Sushi"]},
        {"type": "schedule", "label": "When?", "options": ["2027-01-14", "2027-01-14T18:30", "2027-01-15T09:00"], "timeZone": "europe/paris"},
        {"type": "schedule", "label": "Which day?", "options": ["2027-02-01", "2027-02-02"]}
    ]);
    let poll = server.create_poll(&body);
    vote_fields(
        server,
        &poll.id,
        &[("q0", "0"), ("q1s0", "yes"), ("q1s1", "ifneedbe"), ("q1s2", "no"), ("q2s0", "yes")],
    );
    // Slot 0 left out: no.
    vote_fields(server, &poll.id, &[("q1s1", "yes"), ("q1s2", "yes")]);
    vote_fields(server, &poll.id, &[("q0", "1")]);
    poll
}

#[test]
fn show_results_and_exports_cover_a_schedule() {
    let server = Server::start();
    let db = server.db_path();
    let poll = schedule_poll(&server);
    let token = ["--token", poll.token.as_str()];
    let run = |args: &[&str]| {
        let out = pollctl(&db, &[args, &token].concat());
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        stdout(&out)
    };

    // show: the rule with the zone as the database spells it, the slots.
    let text = run(&["show", &poll.id]);
    let shown = [
        "2. When? [schedule: yes, if need be or no per slot; times in Europe/Paris]",
        "   - 2027-01-14",
        "   - 2027-01-14T18:30",
        "   - 2027-01-15T09:00",
        "3. Which day? [schedule: yes, if need be or no per slot]",
        "   - 2027-02-01",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| *l == shown[0]).unwrap_or_else(|| panic!("no {:?} in:\n{text}", shown[0]));
    assert_eq!(lines[at..at + shown.len()], shown, "{text}");
    let json = ok_json(&pollctl(&db, &[&["--json", "show", &poll.id][..], &token].concat()));
    assert_eq!(json["questions"], server.get(&poll.path()).json()["questions"]);
    assert_eq!(json["questions"][1]["timeZone"], "Europe/Paris");

    // results: per slot yes, if need be and no, best first, the best marked.
    let text = run(&["results", &poll.id]);
    let words: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    let at =
        |want: &[&str]| words.iter().position(|l| l == want).unwrap_or_else(|| panic!("no line {want:?} in:\n{text}"));
    let heading = at(&["2.", "When?", "(2", "answered)"]);
    assert_eq!(words[heading + 1], ["slots,", "best", "first", "(yes,", "if", "need", "be,", "no):"], "{text}");
    assert_eq!(words[heading + 2], ["times", "in", "Europe/Paris"], "{text}");
    // Slot 1 has one yes and one if need be; slots 0 and 2 one yes each, in time order.
    assert_eq!(at(&["2027-01-14T18:30", "1", "1", "0", "best"]), heading + 3, "{text}");
    assert_eq!(at(&["2027-01-14", "1", "0", "1"]), heading + 4, "{text}");
    assert_eq!(at(&["2027-01-15T09:00", "1", "0", "1"]), heading + 5, "{text}");
    assert_eq!(at(&["2027-02-01", "1", "0", "0", "best"]), at(&["3.", "Which", "day?", "(1", "answered)"]) + 2);
    at(&["2027-02-02", "0", "0", "1"]);
    let api = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(ok_json(&pollctl(&db, &[&["--json", "results", &poll.id][..], &token].concat())), api);

    // The results CSV: a schedule's rows in slot order, count = yes and its
    // percent, then if need be, no and `best`.
    let csv = run(&["export", &poll.id, "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            CSV_HEADER,
            "1,Lunch,2,Pizza,1,50.0,,,",
            "1,Lunch,2,Sushi,1,50.0,,,",
            "2,When?,2,2027-01-14,1,50.0,0,1,",
            "2,When?,2,2027-01-14T18:30,1,50.0,1,0,best",
            "2,When?,2,2027-01-15T09:00,1,50.0,0,1,",
            "3,Which day?,1,2027-02-01,1,100.0,0,0,best",
            "3,Which day?,1,2027-02-02,0,0.0,0,1,",
        ],
        "{csv}"
    );

    // The ballots: a column per slot, `yes`, `ifneedbe` or `no`; empty
    // where the ballot left the question out.
    let csv = run(&["export", &poll.id, "--format", "ballots"]);
    let mut lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines.remove(0),
        "q1:Pizza,q1:Sushi,q2:2027-01-14,q2:2027-01-14T18:30,q2:2027-01-15T09:00,q3:2027-02-01,q3:2027-02-02"
    );
    lines.sort_unstable();
    assert_eq!(lines, [",,no,yes,yes,,", "0,1,,,,,", "1,0,yes,ifneedbe,no,yes,no"], "{csv}");
}

#[test]
fn vote_changes_is_set_and_shown_as_the_api_would() {
    let server = Server::start();
    let db = server.db_path();
    let poll = server.create_default();
    let t = poll.token.as_str();
    let show = || {
        let out = pollctl(&db, &["show", &poll.id, "--token", t]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    // On by default, and `show` says what it means.
    let text = show();
    assert!(text.contains("vote changes: on (voters get a receipt"), "{text}");

    let out = pollctl(&db, &["settings", &poll.id, "--vote-changes", "false", "--token", t]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(server.get(&poll.path()).json()["voteChanges"], json!(false));
    let text = show();
    assert!(text.lines().any(|l| l == "vote changes: off"), "{text}");
    assert!(!text.contains("vote changes: on"), "{text}");

    let v = ok_json(&pollctl(&db, &["--json", "settings", &poll.id, "--vote-changes", "true", "--token", t]));
    assert_eq!(v["voteChanges"], json!(true));
    assert_eq!(server.get(&poll.path()).json()["voteChanges"], json!(true));
    // With another setting in the same call.
    let v = ok_json(&pollctl(
        &db,
        &["--json", "settings", &poll.id, "--vote-changes", "false", "--duplicate-check", "none", "--token", t],
    ));
    assert_eq!((&v["voteChanges"], &v["duplicateCheck"]), (&json!(false), &json!("none")));

    // Anything but true or false is a usage error (exit code 2, as
    // `pollctl --help` documents), named by its option, and changes nothing.
    for bad in ["maybe", "on", "1", "yes", "False ", ""] {
        let out = pollctl(&db, &["settings", &poll.id, "--vote-changes", bad, "--token", t]);
        assert_eq!(code(&out), 2, "--vote-changes {bad:?}: {}{}", stdout(&out), stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("--vote-changes"), "{bad:?}: {err}");
        assert!(err.contains("true") && err.contains("false"), "the valid values are named: {err}");
    }
    let out = pollctl(&db, &["settings", &poll.id, "--token", t, "--vote-changes"]);
    assert_eq!(code(&out), 2, "no value: {}", stderr(&out));
    assert_eq!(server.get(&poll.path()).json()["voteChanges"], json!(false));
    // A wrong token: exit code 4, nothing changed.
    let out = pollctl(&db, &["settings", &poll.id, "--vote-changes", "true", "--token", &"A".repeat(43)]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(server.get(&poll.path()).json()["voteChanges"], json!(false));
}
