//! Validated domain types and the rules that define them.
//!
//! Every bound of the API lives here once, as a constant or a rule value. The
//! validators of its modules and the OpenAPI document (`schema.rs`) are both built from
//! these values, so the published schema and what the server accepts cannot
//! drift apart. Request bodies are parsed into these types at the edge; the
//! rest of the code never re-checks them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub mod problem;
pub mod results;
pub mod schulze;
pub mod settings;

pub use problem::{Choices, FieldError, FieldPath, Key, List, Problem, Seg};
pub use settings::{DuplicateCheck, ResultsVisibility};

use crate::day::Day;

#[macro_use]
mod text;
mod lang;
mod media;
mod poll;

pub use lang::*;
pub use media::*;
pub use poll::*;
pub use text::*;

pub mod ballot;
pub mod question;
pub mod schedule;

pub use ballot::{Answer, Ballot, Counter};
pub use question::{EndLabel, Question, QuestionKind, QuestionTexts, VersionQuestion, structure_changes};
use question::{question, version_question};
pub use schedule::{Availability, DateSlot, ScheduleFigures, SlotFigures, TimeZone};

/// The values of each closed list a field may take. Here, above the
/// problems and the types alike, so that `problem.rs` names none of them.
impl Choices {
    pub fn values(self) -> Vec<String> {
        match self {
            Choices::Lang => Lang::codes().into_iter().map(str::to_owned).collect(),
            Choices::ExpiryDays => EXPIRY_DAYS.iter().map(u16::to_string).collect(),
            Choices::QuestionType => QuestionKind::ALL.iter().map(|s| (*s).to_owned()).collect(),
            Choices::ResultsVisibility => ResultsVisibility::codes().into_iter().map(str::to_owned).collect(),
            Choices::DuplicateCheck => DuplicateCheck::codes().into_iter().map(str::to_owned).collect(),
        }
    }
}

#[cfg(test)]
mod tests;
