//! The pieces several pages show, below the pages.
//!
//! Why it exists: the page modules (`admin`, `create`, `own`, `poll`,
//! `results`, `privacy`) once took these pieces from each other, in a
//! circle, so a change to one page could break another. Each piece now
//! lives here, named for what it holds; pages use parts, parts never use a
//! page, and no page imports another (`layering.rs` checks it).
//!
//! Promises: a part renders or reads exactly what the page that held it
//! did (the move changed no behaviour); like every page, parts only build
//! auto-escaped markup (maud).

pub mod facts;
pub mod fields;
pub mod media_field;
pub mod paths;
pub mod qr;
pub mod results_view;
pub mod schedule;
pub mod settings;
pub mod token;
pub mod vote_form;
