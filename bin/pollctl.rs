//! `pollctl`: the operator's tool over the anonpoll database.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = anonpoll::ctl::Cli::parse();
    anonpoll::ctl::run(cli)
}
