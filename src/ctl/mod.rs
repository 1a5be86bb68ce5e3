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
//!
//! Three files along pollctl's seams: the arguments as clap reads them
//! (`args.rs`), what each verb does (`commands.rs`) and how its result is
//! printed (`output.rs`). Here: [`run`], and the failure that carries its
//! exit code and message, which every part may answer.

mod args;
mod commands;
mod output;

use std::process::ExitCode;

pub use args::{Cli, Command, ExportFormat, InvitesAction, TokenArgs, TranslationAction};

use crate::error::{AuthFailure, Error};

/// A failure with its exit code (the list above) and the message pollctl
/// prints on stderr.
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

/// Runs the command `cli` holds; on failure says why on stderr and exits
/// with the failure's code.
pub fn run(cli: Cli) -> ExitCode {
    match commands::execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("pollctl: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
