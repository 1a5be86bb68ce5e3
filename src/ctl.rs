//! `pollctl`: operator commands over the SQLite file, for cron and for people.
//!
//! Exit codes: 0 success, 1 runtime failure (I/O, database), 2 usage error
//! (clap), 3 refused (unknown poll, wrong token).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::day::Day;
use crate::store::Store;

#[derive(Debug, Parser)]
#[command(name = "pollctl", version, about = "Operate an anonpoll database: sweeps, checks and admin actions.")]
pub struct Cli {
    /// SQLite database file (the same one polld uses).
    #[arg(long, env = "POLL_DB", default_value = "./data/anonpoll.sqlite3", global = true)]
    pub db: PathBuf,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Erase every poll whose expiry day has come (with its responses and
    /// language versions), then truncate the WAL. Meant for hourly cron.
    Sweep {
        /// Sweep as if today were this day (YYYY-MM-DD).
        #[arg(long, value_parser = parse_day)]
        as_of: Option<Day>,
    },
}

fn parse_day(s: &str) -> Result<Day, String> {
    Day::parse(s).ok_or_else(|| format!("'{s}' is not a day in the form YYYY-MM-DD"))
}

pub fn run(cli: Cli) -> ExitCode {
    match execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pollctl: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn execute(cli: &Cli) -> anyhow::Result<()> {
    if !cli.db.exists() {
        anyhow::bail!("no database at {}", cli.db.display());
    }
    let store = Store::open(&cli.db)?;
    match &cli.command {
        Command::Sweep { as_of } => {
            let as_of = as_of.unwrap_or_else(Day::today);
            let report = store.sweep(as_of).map_err(|e| anyhow::anyhow!("{e}"))?;
            if cli.json {
                println!("{}", serde_json::json!({"asOf": as_of.to_string(), "pollsErased": report.polls_erased}));
            } else {
                println!("erased {} expired poll(s) as of {as_of}", report.polls_erased);
            }
        }
    }
    Ok(())
}
