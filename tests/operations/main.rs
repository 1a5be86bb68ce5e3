//! anonpoll as it is run: behind the shipped Caddyfiles (`caddy`,
//! `caddy_nodes`), as several nodes on one PostgreSQL database
//! (`several_nodes`), under hostile or busy connections (`connections`),
//! under load (`ops_under_load`, `soak`), a newcomer's first run from the
//! README (`first_run`) and outside OpenAPI tools against `GET /api`
//! (`openapi_tools`).
//!
//! What belongs here: a test of deployment, load or the tools around
//! polld. Every test takes the machine lock first
//! (tests/common/machine.rs): a test that times answers or loads both cores
//! runs alone, the others side by side.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod caddy;
mod caddy_nodes;
mod connections;
mod first_run;
mod openapi_tools;
mod ops_under_load;
mod several_nodes;
mod soak;
