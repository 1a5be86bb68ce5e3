//! `pollctl`: operator commands over the store (a SQLite file or a
//! PostgreSQL database), for cron and for people.
//!
//! Operator commands (`sweep`, `stats`, `backup`, `check`) need no token and
//! say nothing about any single poll. Everything about one poll needs that
//! poll's admin token, exactly as the API does: running the service gives no
//! right to read or change someone's poll.
//!
//! Exit codes: 0 success; 1 runtime failure (I/O, database); 2 usage error;
//! 3 no such poll (unknown, expired or erased); 4 missing or wrong admin
//! token; 5 invalid input (the change was refused, nothing was written); 6
//! the key file is missing, damaged or another database's (nothing touched).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, anyhow};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::api::json;
use crate::app::{Access, App, Session};
use crate::day::Day;
use crate::domain::{
    Answer, Ballot, ExpiryDays, FieldError, Key, Lang, LanguageVersion, Poll, PollPatch, Problem, QuestionKind,
};
use crate::error::{AuthFailure, Error};
use crate::store::{Keys, Store};

#[derive(Debug, Parser)]
#[command(
    name = "pollctl",
    version,
    about = "Operate an anonpoll database: expiry sweeps, checks, backups and token-authorised admin actions.",
    after_help = "Exit codes: 0 ok, 1 failure, 2 usage, 3 no such poll, 4 missing or wrong token, 5 invalid input, 6 key file missing, damaged or another database's."
)]
pub struct Cli {
    /// SQLite database file (the same one polld uses), or the PostgreSQL
    /// database polld uses, as `postgresql://USER@HOST:PORT/DBNAME`.
    #[arg(long, env = "POLL_DB", default_value = "./data/anonpoll.sqlite3", global = true)]
    pub db: PathBuf,

    /// The key file that the database's polls are sealed under (the same
    /// one polld uses; default, as polld's: in a folder of its own beside
    /// the database's, `./data-keys/anonpoll.keys` for
    /// `./data/anonpoll.sqlite3`).
    #[arg(long, env = "POLL_KEYS", global = true)]
    pub keys: Option<PathBuf>,

    /// Days ahead a poll's data key is wrapped at most. The database keeps
    /// polld's: give it only to change it for every process.
    #[arg(long, env = "POLL_KEY_LEASE_DAYS", global = true,
          value_parser = clap::value_parser!(u16).range(1..=crate::keyring::MAX_LEASE_DAYS as i64))]
    pub key_lease_days: Option<u16>,

    /// Use a key file that is behind the database's key state (refused
    /// otherwise, as an old copy); says so on stderr.
    #[arg(long, env = "POLL_ACCEPT_OLD_KEY_FILE", global = true)]
    pub accept_old_key_file: bool,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// Public base URL of the links pollctl prints (`show`, `invites add`):
    /// give it as polld has it. Default, as polld's: http://<POLL_LISTEN>,
    /// that is http://127.0.0.1:8080.
    #[arg(long, env = "POLL_BASE_URL", global = true)]
    pub base_url: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

/// Where the admin token comes from: never required on the command line, so
/// it need not sit in shell history.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The poll's admin token.
    /// (Tokens and ids may start with '-'; they are still taken as values.)
    #[arg(long, env = "POLL_ADMIN_TOKEN", hide_env_values = true, allow_hyphen_values = true)]
    pub token: Option<String>,

    /// A file whose first line is the poll's admin token.
    #[arg(long, conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// The results as the API answers them.
    Json,
    /// The results, one row per option (or scale value).
    Csv,
    /// The ballots, one row each (no day, shuffled), one column per option
    /// (multiple: 0/1; ranked: the rank) or the value.
    Ballots,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Erase every poll whose expiry day has come, with its responses,
    /// language versions, invite codes and media (pictures, sounds, videos),
    /// then truncate the WAL. Meant for hourly cron; safe while polld runs.
    /// `--dry-run` lists what would be erased, per expiry day, and changes
    /// nothing.
    Sweep {
        /// Sweep as if today were this day (YYYY-MM-DD): erases every poll
        /// expiring by then. Preview it with --dry-run first.
        #[arg(long, value_parser = parse_day)]
        as_of: Option<Day>,
        /// Erase nothing: list, per expiry day, how many polls, responses
        /// and media files the sweep would erase (nothing about any single poll).
        #[arg(long)]
        dry_run: bool,
    },
    /// Counts of polls and responses and the database size (nothing about any single poll).
    Stats,
    /// Write a consistent, compacted copy of the live database (VACUUM INTO).
    Backup {
        /// The copy to create; must not exist.
        file: PathBuf,
    },
    /// Check the database: the engine's own integrity check and the schema
    /// version; the key state against today; and every poll opened whole,
    /// its ballot rows against the digest its counts carry (a row deleted,
    /// added or put back is found) and its counts against a recount.
    /// Names each poll that does not check out; exits 1 if any does, or if
    /// the key state is behind today.
    Check,
    /// Print a poll as the API shows it, with its share and results links
    /// (absolute: see --base-url).
    Show {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Print a poll's results: counts and percentages per option, a
    /// ranking's places, a scale's distribution (--json: the API's document).
    Results {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Export a poll's results: JSON identical to the API's, CSV per option,
    /// or CSV per ballot (`--format ballots`).
    Export {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormat,
        /// Write to this file instead of standard output.
        #[arg(long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Close a poll: it accepts no more responses.
    Close {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Reopen a closed poll.
    Reopen {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Set a poll's lifetime to DAYS from today (7, 30, 90, 365 or 730).
    Expiry {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        days: i64,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Change who sees the results and when, the closing day, shuffling,
    /// the duplicate check or whether voters may change their ballots (the
    /// API's PATCH fields resultsVisibility, closesOn, shuffleOptions,
    /// duplicateCheck, voteChanges).
    Settings {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// public, afterVote, afterClose or private.
        #[arg(long)]
        results: Option<String>,
        /// The day voting ends (YYYY-MM-DD, after today, before the erase
        /// day), or `none` to remove it.
        #[arg(long)]
        closes_on: Option<String>,
        /// Whether the share page shows options in a random order.
        #[arg(long)]
        shuffle: Option<bool>,
        /// How a second vote is held back: network, invite (one vote per
        /// invite code) or none.
        #[arg(long)]
        duplicate_check: Option<String>,
        /// Whether voters get a receipt with which to change or withdraw
        /// their ballot while the poll is open.
        #[arg(long)]
        vote_changes: Option<bool>,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Issue invite codes (one vote each on a poll whose duplicate check is
    /// `invite`), or count them.
    Invites {
        #[command(subcommand)]
        action: InvitesAction,
    },
    /// Set or remove a language version of a poll.
    Translation {
        #[command(subcommand)]
        action: TranslationAction,
    },
    /// Erase a poll and all its responses, for good.
    Delete {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum InvitesAction {
    /// Issue COUNT new codes (1 to 1,000; at most 10,000 per poll) and print
    /// each with its invite link, one per line (`CODE<TAB>URL`; with --json
    /// the API's 201 document). The codes are shown only now: only their
    /// hashes are stored.
    Add {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        count: u64,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// How many codes the poll has, and how many have cast a vote.
    Status {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum TranslationAction {
    /// Set the language version LANG from a JSON file shaped like the API's
    /// LanguageVersion: {"title": ..., "questions": [{"label": ..., "options": [...]}]}.
    Set {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        lang: String,
        file: PathBuf,
        #[command(flatten)]
        auth: TokenArgs,
    },
    /// Remove the language version LANG.
    Remove {
        /// The poll id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        lang: String,
        #[command(flatten)]
        auth: TokenArgs,
    },
}

fn parse_day(s: &str) -> Result<Day, String> {
    Day::parse(s).ok_or_else(|| format!("'{s}' is not a day in the form YYYY-MM-DD"))
}

/// A failure with its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        // A key file that is missing, damaged or another database's has a
        // code of its own: nothing was touched, and the fix is the file.
        let code = if e.chain().any(|c| c.is::<crate::keyring::KeyError>()) { 6 } else { 1 };
        Failure { code, message: format!("{e:#}") }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let code = match &e {
            Error::NotFound => 3,
            Error::Unauthorized(_) => 4,
            Error::Invalid(_) | Error::Malformed(_) => 5,
            _ => 1,
        };
        let message = match &e {
            Error::NotFound => "no such poll (unknown, expired or erased)".to_owned(),
            Error::Unauthorized(AuthFailure::Missing) => {
                "this command needs the poll's admin token: --token, --token-file or POLL_ADMIN_TOKEN".to_owned()
            }
            Error::Unauthorized(_) => "the token is not this poll's admin token; nothing was changed".to_owned(),
            Error::Invalid(errors) => {
                let lines: Vec<String> = errors.iter().map(|f| format!("  {}: {}", f.path, f.problem)).collect();
                format!("invalid input; nothing was changed:\n{}", lines.join("\n"))
            }
            other => other.to_string(),
        };
        Failure { code, message }
    }
}

pub fn run(cli: Cli) -> ExitCode {
    match execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("pollctl: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn print(cli: &Cli, value: &Value, text: impl FnOnce() -> String) {
    if cli.json {
        println!("{value}");
    } else {
        println!("{}", text());
    }
}

fn execute(cli: &Cli) -> Result<(), Failure> {
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

impl Command {
    /// The poll a command is about, if any.
    fn poll_id(&self) -> Option<&str> {
        match self {
            Command::Show { id, .. }
            | Command::Results { id, .. }
            | Command::Export { id, .. }
            | Command::Close { id, .. }
            | Command::Reopen { id, .. }
            | Command::Expiry { id, .. }
            | Command::Settings { id, .. }
            | Command::Delete { id, .. }
            | Command::Invites { action: InvitesAction::Add { id, .. } | InvitesAction::Status { id, .. } }
            | Command::Translation {
                action: TranslationAction::Set { id, .. } | TranslationAction::Remove { id, .. },
            } => Some(id),
            Command::Sweep { .. } | Command::Stats | Command::Backup { .. } | Command::Check => None,
        }
    }
}

fn command(cli: &Cli, store: Store, today: Day) -> Result<(), Failure> {
    match &cli.command {
        Command::Sweep { as_of, dry_run: true } => {
            let as_of = as_of.unwrap_or(today);
            let due = store.reader()?.due_for_sweep(as_of)?;
            let sum = |f: fn(&_) -> u64| due.iter().map(f).sum::<u64>();
            let days: Vec<Value> = due
                .iter()
                .map(|d| {
                    json!({"expiresOn": d.expires_on.to_string(), "polls": d.polls, "responses": d.responses,
                        "media": d.media, "mediaBytes": d.media_bytes})
                })
                .collect();
            let v = json!({"asOf": as_of.to_string(), "dryRun": true, "pollsDue": sum(|d| d.polls),
                "responses": sum(|d| d.responses), "media": sum(|d| d.media), "mediaBytes": sum(|d| d.media_bytes),
                "byExpiryDay": days});
            print(cli, &v, || {
                let mut out = format!(
                    "dry run, nothing erased: a sweep as of {as_of} would erase {} poll(s) with {} response(s) \
                     and {} media file(s) of {} bytes",
                    v["pollsDue"], v["responses"], v["media"], v["mediaBytes"]
                );
                for d in &due {
                    out.push_str(&format!(
                        "\n  expiring {}: {} poll(s), {} response(s), {} media file(s) of {} bytes",
                        d.expires_on, d.polls, d.responses, d.media, d.media_bytes
                    ));
                }
                out
            });
        }
        Command::Sweep { as_of, dry_run: false } => {
            let as_of = as_of.unwrap_or(today);
            let report = store.sweep(as_of)?;
            let v = json!({"asOf": as_of.to_string(), "pollsErased": report.polls_erased,
                "pollsRewrapped": report.polls_rewrapped, "pollsSetAside": report.polls_set_aside,
                "keyDay": report.key_day.to_string()});
            print(cli, &v, || {
                let mut out = format!(
                    "erased {} expired poll(s) as of {as_of}; re-wrapped {} poll key(s); key state at {}",
                    report.polls_erased, report.polls_rewrapped, report.key_day
                );
                for poll in &report.polls_set_aside {
                    out.push_str(&format!("\nset aside (its row cannot be read; see pollctl check): {poll}"));
                }
                out
            });
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
            let v = json!({
                "livePolls": s.live_polls, "expiredPolls": s.expired_polls,
                "responses": s.responses, "databaseBytes": s.database_bytes,
            });
            print(cli, &v, || {
                format!(
                    "polls: {} live, {} expired awaiting sweep\nresponses: {}\ndatabase: {} bytes",
                    s.live_polls, s.expired_polls, s.responses, s.database_bytes
                )
            });
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
            let listed: Vec<Value> = polls.iter().map(|c| json!({"poll": c.poll, "problem": c.problem})).collect();
            let v = json!({"integrity": h.integrity, "schemaVersion": h.schema_version,
                "expectedSchemaVersion": h.binary_schema_version, "keyDay": key_day.to_string(),
                "keyStateBehind": behind, "pollsWithProblems": listed, "ok": ok});
            print(cli, &v, || {
                let mut out = format!(
                    "integrity: {}\nschema version: {} (this pollctl: {})\nkey state: {key_day}{}\npolls checked: {}",
                    h.integrity,
                    h.schema_version,
                    h.binary_schema_version,
                    if behind { " (behind today: the day's key work has not run; run pollctl sweep)" } else { "" },
                    if polls.is_empty() { "every poll opens, and its counts are a recount of its ballots" } else { "" },
                );
                for c in &polls {
                    out.push_str(&format!("\n  poll {}: {}", c.poll, c.problem));
                }
                out
            });
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
                    describe(&poll),
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
            print(cli, &json::results(&poll, &figures), || results_text(&poll, &figures));
        }
        Command::Export { id, format, output, auth } => {
            let bytes = match format {
                ExportFormat::Ballots => {
                    let mut session = session(cli, store)?;
                    let token = token(auth)?;
                    let poll = session.admin(id, &token, today)?;
                    let ballots = session.ballots(&poll, &token)?;
                    ballots_csv(&poll, &ballots)?
                }
                ExportFormat::Json => {
                    let results = results(cli, store, id, auth, today)?;
                    let mut b = serde_json::to_vec_pretty(&results).map_err(anyhow::Error::from)?;
                    b.push(b'\n');
                    b
                }
                ExportFormat::Csv => csv_export(&results(cli, store, id, auth, today)?)?,
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
            print(cli, &v, || {
                let lines: Vec<String> = v["invites"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| format!("{}\t{}", i["code"].as_str().unwrap_or(""), i["url"].as_str().unwrap_or("")))
                    .collect();
                lines.join("\n")
            });
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
    print(cli, &v, || describe(&updated));
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

fn describe(poll: &Poll) -> String {
    let langs: Vec<&str> = poll.translations.keys().map(|l| l.code()).collect();
    let mut out = format!(
        "poll {}: {}\nlanguage: {}{}\nstatus: {}\nresults: {}\ncreated on {}, erased on {}\n",
        poll.id,
        poll.title,
        poll.lang.code(),
        if langs.is_empty() { String::new() } else { format!(" (also {})", langs.join(", ")) },
        json::status(poll),
        poll.visibility.as_str(),
        poll.created_on,
        poll.expires_on,
    );
    if let Some(day) = poll.closes_on {
        let passed = crate::domain::settings::deadline_passed(Some(day), Day::today());
        out.push_str(&format!("voting {} on {day}\n", if passed { "closed" } else { "closes" }));
    }
    if poll.shuffle_options {
        out.push_str("options shuffled on the share page\n");
    }
    out.push_str(&format!("duplicate check: {}\n", poll.duplicate_check.as_str()));
    out.push_str(if poll.vote_changes {
        "vote changes: on (voters get a receipt to change or withdraw their ballot)\n"
    } else {
        "vote changes: off\n"
    });
    for (i, q) in poll.questions.iter().enumerate() {
        let required = if q.required { ", required" } else { "" };
        let rule = match q.kind {
            QuestionKind::Single => "one answer".to_owned(),
            QuestionKind::Multiple => {
                let (min, max) = q.choice_bounds();
                format!("{min} to {max} answers")
            }
            QuestionKind::Ranked => "ranking".to_owned(),
            QuestionKind::Scale => {
                let (lo, hi) = q.scale().unwrap_or_default();
                let end =
                    |l: &Option<crate::domain::EndLabel>| l.as_ref().map(|l| format!(" ({l})")).unwrap_or_default();
                format!("scale {lo}{} to {hi}{}", end(&q.min_label), end(&q.max_label))
            }
        };
        out.push_str(&format!("{}. {} [{rule}{required}]\n", i + 1, q.label));
        for o in &q.options {
            out.push_str(&format!("   - {o}\n"));
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// A poll's results for people: per question, each option's count and
/// percentage of the question's answers (a ranking's first choices, then its
/// places by the Schulze method), or a scale's distribution, mean and median.
fn results_text(poll: &Poll, results: &crate::domain::results::Results) -> String {
    let mut out =
        format!("poll {}: {}\nstatus: {}\nresponses: {}\n", poll.id, poll.title, json::status(poll), results.total);
    if !results.by_day.is_empty() {
        let days: Vec<String> = results.by_day.iter().map(|(day, n)| format!("{day}: {n}")).collect();
        out.push_str(&format!("responses per day: {}\n", days.join(", ")));
    }
    for (i, (q, f)) in poll.questions.iter().zip(&results.questions).enumerate() {
        out.push_str(&format!("{}. {} ({} answered)\n", i + 1, q.label, f.answered));
        if let Some(scale) = &f.scale {
            for (value, count) in &scale.distribution {
                out.push_str(&format!("   {value:>3}  {count:>6}\n"));
            }
            let figure = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
            out.push_str(&format!("   mean {}, median {}\n", figure(scale.mean), figure(scale.median)));
            continue;
        }
        let width = q.options.iter().map(|o| o.to_string().chars().count()).max().unwrap_or(0);
        let heading = if f.ranked.is_some() { "   first choices:\n" } else { "" };
        out.push_str(heading);
        for (o, figures) in q.options.iter().zip(&f.options) {
            let label = o.to_string();
            let pad = " ".repeat(width - label.chars().count());
            out.push_str(&format!("   {label}{pad}  {:>6}  {:>5.1} %\n", figures.count, figures.percent));
        }
        if let Some(ranked) = &f.ranked {
            out.push_str("   ranking (Schulze method):\n");
            for (place, options) in ranked.places() {
                let names: Vec<String> =
                    options.iter().filter_map(|o| q.options.get(*o)).map(|o| o.to_string()).collect();
                out.push_str(&format!("   {place}. {}\n", names.join(", ")));
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// A spreadsheet cell that starts like a formula is prefixed with `'` so a
/// poll's text can never run as a formula when the export is opened.
fn cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{s}") } else { s.to_owned() }
}

/// CSV: one row per option (per value for a scale), with the question, the
/// option, its count (for a ranking: first choices) and percent of the
/// question's answers. The columns are a documented interface
/// (docs/OPERATIONS.md, "Exports").
fn csv_export(results: &Value) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["question_number", "question", "answered", "option", "count", "percent"]).map_err(csv_err)?;
    for (i, q) in results["questions"].as_array().into_iter().flatten().enumerate() {
        let label = cell(q["label"].as_str().unwrap_or(""));
        let answered = q["answered"].to_string();
        let number = |v: &Value| if v.is_null() { String::new() } else { v.to_string() };
        let rows: Vec<(String, String, String)> = match q["distribution"].as_array() {
            Some(values) => values
                .iter()
                .map(|d| {
                    let n = d["count"].as_u64().unwrap_or(0);
                    let of = q["answered"].as_u64().unwrap_or(0);
                    (d["value"].to_string(), n.to_string(), json!(crate::domain::results::percent(n, of)).to_string())
                })
                .collect(),
            None => q["options"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| {
                    let count = if o["firstChoices"].is_null() { &o["count"] } else { &o["firstChoices"] };
                    (cell(o["label"].as_str().unwrap_or("")), number(count), number(&o["percent"]))
                })
                .collect(),
        };
        for (option, count, percent) in rows {
            w.write_record([(i + 1).to_string(), label.clone(), answered.clone(), option, count, percent])
                .map_err(csv_err)?;
        }
    }
    w.into_inner().map_err(|e| Failure::from(anyhow!("CSV export failed: {e}")))
}

fn csv_err(e: csv::Error) -> Failure {
    Failure::from(anyhow::Error::from(e))
}

/// CSV of the ballots: one row per ballot, shuffled, without the day it
/// was cast; one column per option of single,
/// multiple and ranked questions (`q1:option`: 1/0 for a choice, the rank for
/// a ranking, empty when left out) and one per scale (`q2`: the value).
fn ballots_csv(poll: &Poll, ballots: &[Ballot]) -> Result<Vec<u8>, Failure> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = Vec::new();
    for (i, q) in poll.questions.iter().enumerate() {
        if q.kind == QuestionKind::Scale {
            header.push(format!("q{}", i + 1));
        } else {
            // `q1:…` never starts like a formula; the option text follows it.
            header.extend(q.options.iter().map(|o| format!("q{}:{o}", i + 1)));
        }
    }
    w.write_record(&header).map_err(csv_err)?;
    for ballot in ballots {
        let mut row: Vec<String> = Vec::with_capacity(header.len());
        for (q, answer) in poll.questions.iter().zip(ballot.answers()) {
            let n = q.options.len();
            match answer {
                None if q.kind == QuestionKind::Scale => row.push(String::new()),
                None => row.extend((0..n).map(|_| String::new())),
                Some(Answer::Value(v)) => row.push(v.to_string()),
                Some(Answer::Choice(c)) => row.extend((0..n).map(|j| u8::from(j == *c).to_string())),
                Some(Answer::Choices(cs)) => row.extend((0..n).map(|j| u8::from(cs.contains(&j)).to_string())),
                Some(Answer::Ranks(ranks)) => {
                    row.extend(ranks.iter().map(|r| r.map(|r| r.to_string()).unwrap_or_default()))
                }
            }
        }
        w.write_record(&row).map_err(csv_err)?;
    }
    w.into_inner().map_err(|e| Failure::from(anyhow!("CSV export failed: {e}")))
}

fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match path {
        Some(p) => std::fs::write(p, bytes).with_context(|| format!("cannot write {}", p.display()))?,
        None => std::io::stdout().write_all(bytes).context("cannot write to standard output")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tokens_may_start_with_a_hyphen() {
        // Both are base64url, so a leading '-' happens to one in 64.
        let cli = Cli::try_parse_from(["pollctl", "close", "-bcdefghijklmnop", "--token", "-secret"]).unwrap();
        match cli.command {
            Command::Close { id, auth } => {
                assert_eq!(id, "-bcdefghijklmnop");
                assert_eq!(auth.token.as_deref(), Some("-secret"));
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn formula_like_cells_are_defused() {
        assert_eq!(cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(cell("@cmd"), "'@cmd");
        assert_eq!(cell("Pizza"), "Pizza");
    }
}
