//! pollctl's arguments: the global options, the verbs and what each takes,
//! as clap reads them from the command line and the environment.
//!
//! Why a module of its own: the arguments are a documented interface (the
//! help text is made from the comments here, and scripts call pollctl with
//! them), and they say nothing of what a verb does (`commands.rs`) or how
//! its result is printed (`output.rs`). Promises: an admin token never has
//! to be on the command line (`--token-file`, `POLL_ADMIN_TOKEN`); ids and
//! tokens may start with `-`, as one in 64 does.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::day::Day;

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

impl Command {
    /// The poll a command is about, if any.
    pub(super) fn poll_id(&self) -> Option<&str> {
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
}
