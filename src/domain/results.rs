//! A poll's results as numbers: the counters the store keeps, turned into
//! what every front end shows (counts, shares, answered per question).
//!
//! Why here: the JSON API, the results page, the admin page and `pollctl`
//! all show the same figures; computing them once keeps their rounding and
//! their meaning ("share of the question's answers") the same everywhere.

use super::{Poll, QuestionKind, ScheduleFigures, Tallies, schulze};
use crate::day::Day;

/// Percent of `count` in `of`, to one decimal; 0 when nothing was answered.
pub fn percent(count: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { (count as f64 * 1000.0 / of as f64).round() / 10.0 }
}

/// One option's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionFigures {
    /// Ballots that chose it (for a ranking: that ranked it first).
    pub count: u64,
    /// Share of the question's answers, one decimal.
    pub percent: f64,
}

/// A ranked question's figures beyond first choices.
#[derive(Clone, Debug, PartialEq)]
pub struct RankedFigures {
    /// `pairwise[i][j]`: ballots ranking option i above option j.
    pub pairwise: Vec<Vec<u64>>,
    /// Places by the Schulze method, best first: option indices sharing each.
    pub ranking: Vec<Vec<usize>>,
}

impl RankedFigures {
    /// The places numbered as in sport: two options sharing the first
    /// place are followed by the third.
    pub fn places(&self) -> Vec<(usize, &[usize])> {
        let mut next = 1;
        self.ranking
            .iter()
            .map(|place| {
                let at = next;
                next += place.len();
                (at, place.as_slice())
            })
            .collect()
    }
}

/// A scale question's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleFigures {
    /// `(value, count)` for every value from the scale's lower end up.
    pub distribution: Vec<(u8, u64)>,
    /// Two decimals; `None` when nobody answered.
    pub mean: Option<f64>,
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: Option<f64>,
}

/// One question's figures, options in the poll's order.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionFigures {
    /// Ballots that answered this question.
    pub answered: u64,
    /// Per option (none for a scale or a schedule): choices, or first
    /// choices of a ranking.
    pub options: Vec<OptionFigures>,
    pub ranked: Option<RankedFigures>,
    pub scale: Option<ScaleFigures>,
    pub schedule: Option<ScheduleFigures>,
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
            .enumerate()
            .map(|(i, q)| {
                let votes = tallies.votes.get(i).map_or(&[][..], Vec::as_slice);
                let answered = tallies.answered.get(i).copied().unwrap_or(0);
                let figures = |n: &u64| OptionFigures { count: *n, percent: percent(*n, answered) };
                let mut f =
                    QuestionFigures { answered, options: Vec::new(), ranked: None, scale: None, schedule: None };
                match q.scale() {
                    Some((lo, _)) => f.scale = Some(scale(lo, votes)),
                    None if q.kind == QuestionKind::Schedule => f.schedule = Some(ScheduleFigures::of(votes, answered)),
                    None => f.options = votes.iter().map(figures).collect(),
                }
                if q.kind == QuestionKind::Ranked {
                    let pairwise = tallies.pairwise.get(i).cloned().unwrap_or_default();
                    let ranking = schulze::ranking(&pairwise);
                    f.ranked = Some(RankedFigures { pairwise, ranking });
                }
                f
            })
            .collect();
        Results { total: tallies.total, questions, by_day: tallies.by_day.clone() }
    }
}

/// Distribution, mean and median of a scale whose counts start at `lo`.
fn scale(lo: u8, counts: &[u64]) -> ScaleFigures {
    let distribution: Vec<(u8, u64)> =
        counts.iter().enumerate().map(|(k, &n)| (lo.saturating_add(u8::try_from(k).unwrap_or(u8::MAX)), n)).collect();
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return ScaleFigures { distribution, mean: None, median: None };
    }
    let sum: u64 = distribution.iter().map(|&(v, c)| u64::from(v) * c).sum();
    let mean = (sum as f64 / n as f64 * 100.0).round() / 100.0;
    // The k-th value (0-based) in ascending order.
    let nth = |k: u64| {
        let mut seen = 0;
        distribution.iter().find(|&&(_, c)| {
            seen += c;
            seen > k
        })
    };
    let value = |k: u64| nth(k).map_or(0.0, |&(v, _)| f64::from(v));
    let median = if n % 2 == 1 { value(n / 2) } else { (value(n / 2 - 1) + value(n / 2)) / 2.0 };
    ScaleFigures { distribution, mean: Some(mean), median: Some(median) }
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

    #[test]
    fn scale_mean_and_median() {
        let f = scale(1, &[1, 0, 2, 0, 1]);
        assert_eq!(f.distribution, [(1, 1), (2, 0), (3, 2), (4, 0), (5, 1)]);
        assert_eq!((f.mean, f.median), (Some(3.0), Some(3.0)));
        let f = scale(0, &[1, 0, 0, 1]);
        assert_eq!((f.mean, f.median), (Some(1.5), Some(1.5)));
        let f = scale(0, &[2, 1]);
        assert_eq!((f.mean, f.median), (Some(0.33), Some(0.0)));
        assert_eq!(scale(1, &[0, 0]).mean, None);
    }
}
