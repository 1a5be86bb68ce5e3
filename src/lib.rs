//! anonpoll: a privacy-first anonymous poll service.
//!
//! The library holds everything; `bin/polld.rs` (the HTTP server) and
//! `bin/pollctl.rs` (the operator's CLI) are thin mains over it.
//!
//! The data rules that every module keeps: no cookies, no client address stored
//! or logged, dates kept to the day, and a poll erased for good (with all that
//! belongs to it) when it expires or is deleted.
#![forbid(unsafe_code)]

pub mod api;
pub mod app;
pub mod client;
pub mod config;
pub mod ctl;
pub mod daemon;
pub mod day;
pub mod domain;
pub mod error;
pub mod harden;
pub mod http;
pub mod i18n;
pub mod keyed;
pub mod keyring;
#[cfg(test)]
mod layering;
pub mod media;
pub mod multipart;
pub mod priority;
pub mod ratelimit;
pub mod schema;
pub mod secret;
pub mod server;
pub mod store;
pub mod web;

pub use error::Error;
