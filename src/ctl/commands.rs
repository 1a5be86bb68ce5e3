//! What each pollctl verb does: the store opened with its key file, the
//! operator's work (sweep, stats, backup, check) done on it, and every
//! command about one poll run through the application layer with that
//! poll's admin token, as the API runs it.
//!
//! Why a module of its own: this is pollctl's behaviour, apart from how its
//! arguments are read (`args.rs`) and how its results are printed
//! (`output.rs`). Promises: a command about one poll checks its token
//! before anything about the poll or the input is told; a change obeys the
//! API's own rules (`PollPatch`, `LanguageVersion`), so pollctl can write
//! nothing the API would refuse; each failure carries its exit code
//! ([`Failure`]).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use super::output::{self, Checked, print};
use super::{Cli, Command, ExportFormat, Failure, InvitesAction, TokenArgs, TranslationAction};
use crate::api::json;
use crate::app::{Access, App, Session};
use crate::day::Day;
use crate::domain::{ExpiryDays, FieldError, Key, Lang, LanguageVersion, Poll, PollPatch, Problem};
use crate::error::{AuthFailure, Error};
use crate::store::{Keys, Store};

/// Opens the store `cli` names and runs its command.
pub(super) fn execute(cli: &Cli) -> Result<(), Failure> {
    let url = cli.db.to_str().is_some_and(crate::store::is_url);
    if !url && !cli.db.exists() {
        return Err(anyhow!("no database at {}", cli.db.display()).into());
    }
    let keys = Keys::for_db(&cli.db, cli.keys.as_deref(), cli.key_lease_days, cli.accept_old_key_file)?;
    let store = Store::open_patient(&cli.db, &keys)?;
    let today = Day::today();
    let kept = store.clone();
    command(cli, store, today).map_err(|f| erased(f, &kept, cli.command.poll_id()))
}

/// "No such poll" says so when the poll's row is there but its key is gone:
/// a copy (a backup, an old WAL) opened with a key file that has moved on.
fn erased(f: Failure, store: &Store, id: Option<&str>) -> Failure {
    let Some(id) = id.filter(|_| f.code == 3).and_then(crate::secret::PollId::parse) else { return f };
    match store.reader().map_err(Error::from).and_then(|mut r| r.erased(&id)) {
        Ok(true) => Failure {
            code: 3,
            message: format!(
                "poll {id} is erased: its data key no longer exists (it was deleted or has expired, or this copy is \
                 older than the key lease)"
            ),
        },
        _ => f,
    }
}

fn command(cli: &Cli, store: Store, today: Day) -> Result<(), Failure> {
    match &cli.command {
        Command::Sweep { as_of, dry_run: true } => {
            let as_of = as_of.unwrap_or(today);
            let due = store.reader()?.due_for_sweep(as_of)?;
            let v = output::sweep_preview(as_of, &due);
            print(cli, &v, || output::sweep_preview_text(as_of, &v, &due));
        }
        Command::Sweep { as_of, dry_run: false } => {
            let as_of = as_of.unwrap_or(today);
            let report = store.sweep(as_of)?;
            print(cli, &output::sweep_report(as_of, &report), || output::sweep_report_text(as_of, &report));
            // The key state must have reached the day asked (the work is
            // idempotent: a state already ahead is fine).
            if report.key_day < as_of {
                return Err(anyhow!(
                    "the key state is at {}, not {as_of}: the day's key work did not finish",
                    report.key_day
                )
                .into());
            }
        }
        Command::Stats => {
            let s = store.stats(today)?;
            print(cli, &output::stats(&s), || output::stats_text(&s));
        }
        Command::Backup { file } => {
            store.backup(file)?;
            let v = json!({"backup": file.display().to_string()});
            print(cli, &v, || format!("backup written to {}", file.display()));
        }
        Command::Check => {
            let h = store.health()?;
            let polls = store.check_polls()?;
            let key_day = store.keys().day();
            let behind = key_day < today;
            let ok = h.integrity == "ok" && h.schema_version == h.binary_schema_version && polls.is_empty() && !behind;
            let checked = Checked { health: &h, polls: &polls, key_day, behind, ok };
            print(cli, &output::check(&checked), || output::check_text(&checked));
            if !ok {
                return Err(anyhow!("the database is not healthy").into());
            }
        }
        Command::Show { id, auth } => {
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            let v = json::poll(&poll, session.links());
            print(cli, &v, || {
                let links = session.links();
                format!(
                    "{}\nshare page: {}\nresults page: {}",
                    output::describe(&poll),
                    links.share(&poll.id),
                    links.results(&poll.id)
                )
            });
            note_default_base_url(cli);
        }
        Command::Results { id, auth } => {
            let mut session = session(cli, store)?;
            let token = token(auth)?;
            let poll = session.admin(id, &token, today)?;
            let figures = session.results(&poll, Access::Token(&token))?;
            print(cli, &json::results(&poll, &figures), || output::results_text(&poll, &figures));
        }
        Command::Export { id, format, output, auth } => {
            let bytes = match format {
                ExportFormat::Ballots => {
                    let mut session = session(cli, store)?;
                    let token = token(auth)?;
                    let poll = session.admin(id, &token, today)?;
                    let ballots = session.ballots(&poll, &token)?;
                    output::ballots_csv(&poll, &ballots)?
                }
                ExportFormat::Json => {
                    let results = results(cli, store, id, auth, today)?;
                    let mut b = serde_json::to_vec_pretty(&results).map_err(anyhow::Error::from)?;
                    b.push(b'\n');
                    b
                }
                ExportFormat::Csv => output::csv_export(&results(cli, store, id, auth, today)?)?,
            };
            write_output(output.as_deref(), &bytes)?;
        }
        Command::Close { id, auth } => {
            change(cli, store, id, auth, PollPatch { closed: Some(true), ..PollPatch::default() }, today)?;
        }
        Command::Reopen { id, auth } => {
            change(cli, store, id, auth, PollPatch { closed: Some(false), ..PollPatch::default() }, today)?;
        }
        Command::Expiry { id, days, auth } => {
            // Token first: without it, nothing about the input is told.
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            let expiry = ExpiryDays::try_from(*days).map_err(|p| invalid(Key::ExpiryDays.into(), p))?;
            let patch = PollPatch { expiry: Some(expiry), ..PollPatch::default() };
            show_change(cli, &mut session, &poll, &patch, today)?;
        }
        Command::Settings { id, results, closes_on, shuffle, duplicate_check, vote_changes, auth } => {
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            // The API's own PATCH rules decide what is valid.
            let mut body = serde_json::Map::new();
            if let Some(r) = results {
                body.insert(Key::ResultsVisibility.name().into(), Value::from(r.as_str()));
            }
            if let Some(day) = closes_on {
                let day = if day == "none" { Value::Null } else { Value::from(day.as_str()) };
                body.insert(Key::ClosesOn.name().into(), day);
            }
            if let Some(shuffle) = shuffle {
                body.insert(Key::ShuffleOptions.name().into(), Value::from(*shuffle));
            }
            if let Some(check) = duplicate_check {
                body.insert(Key::DuplicateCheck.name().into(), Value::from(check.as_str()));
            }
            if let Some(changes) = vote_changes {
                body.insert(Key::VoteChanges.name().into(), Value::from(*changes));
            }
            let patch = PollPatch::from_json(&Value::Object(body)).map_err(Error::Invalid)?;
            show_change(cli, &mut session, &poll, &patch, today)?;
        }
        Command::Invites { action: InvitesAction::Add { id, count, auth } } => {
            let mut session = session(cli, store)?;
            let token = token(auth)?;
            let poll = session.admin(id, &token, today)?;
            let issued = session.issue_invites(&poll, &token, *count, today)?;
            let v = json::issued(&poll, &issued, session.links());
            print(cli, &v, || output::issued_text(&v));
            if !cli.json {
                eprintln!(
                    "pollctl: {} invite code(s) issued, shown only now; the poll has {}, {} used",
                    issued.codes.len(),
                    issued.status.issued,
                    issued.status.used
                );
            }
            note_default_base_url(cli);
        }
        Command::Invites { action: InvitesAction::Status { id, auth } } => {
            let mut session = session(cli, store)?;
            let token = token(auth)?;
            let poll = session.admin(id, &token, today)?;
            let status = session.invite_status(&poll, &token)?;
            let v = json::invite_status(&status);
            print(cli, &v, || format!("invite codes: {} issued, {} used", status.issued, status.used));
        }
        Command::Translation { action: TranslationAction::Set { id, lang, file, auth } } => {
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            let lang = language(lang)?;
            let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
            let body: Value = crate::api::strict::parse(text.as_bytes())
                .map_err(|e| Error::Malformed(format!("{} is not valid JSON: {e}", file.display())))?;
            let version = LanguageVersion::from_json(&body, lang).map_err(Error::Invalid)?;
            let patch = PollPatch { translations: [(lang, Some(version))].into(), ..PollPatch::default() };
            show_change(cli, &mut session, &poll, &patch, today)?;
        }
        Command::Translation { action: TranslationAction::Remove { id, lang, auth } } => {
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            let patch = PollPatch { translations: [(language(lang)?, None)].into(), ..PollPatch::default() };
            show_change(cli, &mut session, &poll, &patch, today)?;
        }
        Command::Delete { id, auth } => {
            let mut session = session(cli, store)?;
            let poll = session.admin(id, &token(auth)?, today)?;
            session.app().delete(&poll)?;
            let v = json!({"deleted": poll.id.as_str()});
            print(cli, &v, || format!("poll {} and all its responses erased", poll.id));
        }
    }
    Ok(())
}

/// The application over `store`, for one command.
fn session(cli: &Cli, store: Store) -> Result<Session, Failure> {
    Ok(std::sync::Arc::new(App::offline(store, &base_url(cli))?).session()?)
}

/// The base of every link: --base-url / POLL_BASE_URL, else polld's own
/// default (http://<listen address>), so that links are never bare paths.
fn base_url(cli: &Cli) -> String {
    cli.base_url.clone().unwrap_or_else(|| {
        let listen = std::env::var("POLL_LISTEN").unwrap_or_else(|_| crate::config::DEFAULT_LISTEN.to_owned());
        format!("http://{listen}")
    })
}

/// Says on stderr which base the printed links have when none was given:
/// right for a polld on its defaults, not for one behind a public address.
fn note_default_base_url(cli: &Cli) {
    if cli.base_url.is_none() {
        eprintln!(
            "pollctl: the links are on polld's default base URL {}; give --base-url or POLL_BASE_URL as polld has it",
            base_url(cli)
        );
    }
}

fn invalid(path: crate::domain::FieldPath, problem: Problem) -> Error {
    Error::Invalid(vec![FieldError::new(path, problem)])
}

/// A language code given on the command line.
fn language(code: &str) -> Result<Lang, Failure> {
    Lang::from_code(code).ok_or_else(|| {
        invalid(crate::domain::FieldPath::from(Key::Translations).name(code), Problem::UnknownLanguage).into()
    })
}

/// A poll's results as the API shows them, with the admin token.
fn results(cli: &Cli, store: Store, id: &str, auth: &TokenArgs, today: Day) -> Result<Value, Failure> {
    let mut session = session(cli, store)?;
    let token = token(auth)?;
    let poll = session.admin(id, &token, today)?;
    let results = session.results(&poll, Access::Token(&token))?;
    Ok(json::results(&poll, &results))
}

/// Applies a change with the API's own checks, once the token is checked.
fn change(cli: &Cli, store: Store, id: &str, auth: &TokenArgs, patch: PollPatch, today: Day) -> Result<(), Failure> {
    let mut session = session(cli, store)?;
    let poll = session.admin(id, &token(auth)?, today)?;
    show_change(cli, &mut session, &poll, &patch, today)
}

fn show_change(cli: &Cli, session: &mut Session, poll: &Poll, patch: &PollPatch, today: Day) -> Result<(), Failure> {
    let updated = session.patch(poll, patch, today)?;
    let v = json::poll(&updated, session.links());
    print(cli, &v, || output::describe(&updated));
    Ok(())
}

/// The token from --token / POLL_ADMIN_TOKEN or the first line of --token-file.
fn token(auth: &TokenArgs) -> Result<String, Failure> {
    if let Some(t) = &auth.token {
        return Ok(t.trim().to_owned());
    }
    if let Some(path) = &auth.token_file {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        return Ok(text.lines().next().unwrap_or("").trim().to_owned());
    }
    Err(Error::Unauthorized(AuthFailure::Missing).into())
}

/// Writes an export to the file `path`, or to standard output.
fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match path {
        Some(p) => std::fs::write(p, bytes).with_context(|| format!("cannot write {}", p.display()))?,
        None => std::io::stdout().write_all(bytes).context("cannot write to standard output")?,
    }
    Ok(())
}
