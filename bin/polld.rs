//! `polld`: the anonpoll HTTP server. See `anonpoll::daemon`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    anonpoll::harden::no_core_dumps_or_say("polld");
    let args = anonpoll::config::PolldArgs::parse();
    match anonpoll::daemon::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("polld: {e:#}");
            ExitCode::FAILURE
        }
    }
}
