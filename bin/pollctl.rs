//! `pollctl`: the operator's tool over the anonpoll database.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    anonpoll::harden::no_core_dumps_or_say("pollctl");
    let cli = anonpoll::ctl::Cli::parse();
    anonpoll::ctl::run(cli)
}
