//! A poll's results as numbers: the counters the store keeps, turned into
//! what every front end shows (counts, shares, answered per question).
//!
//! Why here: the JSON API, the results page, the admin page and `pollctl`
//! all show the same figures; computing them once keeps their rounding and
//! their meaning ("share of the question's answers") the same everywhere.

use super::{Poll, Tallies};
use crate::day::Day;

/// Percent of `count` in `of`, to one decimal; 0 when nothing was answered.
pub fn percent(count: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { (count as f64 * 1000.0 / of as f64).round() / 10.0 }
}

/// One option's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionFigures {
    pub count: u64,
    /// Share of the question's answers, one decimal.
    pub percent: f64,
}

/// One question's figures, options in the poll's order.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionFigures {
    /// Ballots that answered this question.
    pub answered: u64,
    pub options: Vec<OptionFigures>,
}

/// A poll's results. Texts are not here: each front end takes them from the
/// poll in the language it shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    pub total: u64,
    pub questions: Vec<QuestionFigures>,
    /// Responses per day, oldest first.
    pub by_day: Vec<(Day, u64)>,
}

impl Results {
    pub fn of(poll: &Poll, tallies: &Tallies) -> Results {
        let questions = poll
            .questions
            .iter()
            .zip(&tallies.votes)
            .map(|(_, votes)| {
                let answered: u64 = votes.iter().sum();
                QuestionFigures {
                    answered,
                    options: votes.iter().map(|&n| OptionFigures { count: n, percent: percent(n, answered) }).collect(),
                }
            })
            .collect();
        Results { total: tallies.total, questions, by_day: tallies.by_day.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rounds_to_one_decimal() {
        assert_eq!(percent(1, 3), 33.3);
        assert_eq!(percent(2, 3), 66.7);
        assert_eq!(percent(0, 0), 0.0);
        assert_eq!(percent(5, 5), 100.0);
    }
}
