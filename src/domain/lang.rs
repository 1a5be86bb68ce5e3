//! The languages of polls and of the interface.

use super::*;

/// The languages of polls and of the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Fr,
    De,
    It,
}

impl Lang {
    pub const ALL: [Lang; 4] = [Lang::En, Lang::Fr, Lang::De, Lang::It];

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Fr => "fr",
            Lang::De => "de",
            Lang::It => "it",
        }
    }

    pub fn from_code(s: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.code() == s)
    }

    pub fn codes() -> Vec<&'static str> {
        Lang::ALL.iter().map(|l| l.code()).collect()
    }

    pub(super) fn parse(v: &Value) -> Result<Lang, Problem> {
        v.as_str().and_then(Lang::from_code).ok_or(Problem::NotOneOf(Choices::Lang))
    }
}
