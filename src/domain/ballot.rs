//! One person's answers, checked against the poll's questions, and the
//! counters a ballot adds to.
//!
//! Why here: the web form, `pollctl`'s tools and the tests all build
//! ballots; the store keeps them and their counters. Checking them in one
//! place means a ballot that breaks a rule (too many choices, a repeated
//! rank, a value off the scale) can never reach the store, whichever way it
//! came; deriving the counters here means the writer and a recount from the
//! stored ballots cannot disagree on what a ballot counts for.
//!
//! Promises: a [`Ballot`] fits its poll's questions exactly (one entry per
//! question, each answer of its question's type and within its rules, every
//! required question answered, at least one answered); its stored form
//! ([`Ballot::to_stored`]) reads back as the same ballot
//! ([`Ballot::from_stored`]).

use serde_json::Value;

use super::schulze;
use super::{Availability, Problem, Question, QuestionKind};

/// The answer to one question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Single choice: the option's index.
    Choice(usize),
    /// Multiple choice: the options' indices, ascending, each once.
    Choices(Vec<usize>),
    /// Ranking: per option (in the question's order) its rank, `1` first,
    /// `None` unranked. The ranks given run 1, 2, … without gap or repeat.
    Ranks(Vec<Option<u8>>),
    /// Scale: the value chosen.
    Value(u8),
    /// Schedule: per slot (in the question's order) whether the voter can
    /// come; a slot left out is `No`.
    Availability(Vec<Availability>),
}

impl Answer {
    /// A ranking from `(option, rank)` pairs as a form gives them: ranks
    /// must run 1, 2, 3… with no repeat and no gap. `n` is the number of
    /// options; indices are checked by [`Ballot::new`].
    pub fn from_ranks(question: usize, n: usize, ranked: &[(usize, usize)]) -> Result<Option<Answer>, Problem> {
        if ranked.is_empty() {
            return Ok(None);
        }
        let mut ranks = vec![None; n];
        let mut seen = vec![false; ranked.len()];
        for &(option, rank) in ranked {
            let Some(slot) = ranks.get_mut(option) else {
                return Err(Problem::NoSuchOption { question, option });
            };
            if slot.is_some() {
                return Err(Problem::RepeatedChoice { question });
            }
            if rank == 0 || rank > ranked.len() {
                return Err(Problem::RankGap { question });
            }
            if std::mem::replace(&mut seen[rank - 1], true) {
                return Err(Problem::RepeatedRank { question });
            }
            *slot = u8::try_from(rank).ok();
        }
        Ok(Some(Answer::Ranks(ranks)))
    }

    fn kind(&self) -> QuestionKind {
        match self {
            Answer::Choice(_) => QuestionKind::Single,
            Answer::Choices(_) => QuestionKind::Multiple,
            Answer::Ranks(_) => QuestionKind::Ranked,
            Answer::Value(_) => QuestionKind::Scale,
            Answer::Availability(_) => QuestionKind::Schedule,
        }
    }

    /// Checks this answer against question `i`.
    fn check(&self, i: usize, q: &Question) -> Result<(), Problem> {
        if self.kind() != q.kind {
            return Err(Problem::WrongAnswerKind { question: i, kind: q.kind });
        }
        let n = q.options.len();
        let in_range = |o: usize| if o < n { Ok(()) } else { Err(Problem::NoSuchOption { question: i, option: o }) };
        match self {
            Answer::Choice(o) => in_range(*o),
            Answer::Choices(os) => {
                os.iter().try_for_each(|&o| in_range(o))?;
                if os.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(Problem::RepeatedChoice { question: i });
                }
                let (min, max) = q.choice_bounds();
                if os.len() < min || os.len() > max {
                    return Err(Problem::ChoiceCount { question: i, min, max });
                }
                Ok(())
            }
            Answer::Ranks(ranks) => {
                if ranks.len() != n {
                    return Err(Problem::NoSuchOption { question: i, option: ranks.len().min(n) });
                }
                let mut given: Vec<u8> = ranks.iter().flatten().copied().collect();
                given.sort_unstable();
                if given.is_empty() || given.iter().enumerate().any(|(k, &r)| usize::from(r) != k + 1) {
                    return Err(if given.windows(2).any(|w| w[0] == w[1]) {
                        Problem::RepeatedRank { question: i }
                    } else {
                        Problem::RankGap { question: i }
                    });
                }
                Ok(())
            }
            Answer::Value(v) => match q.scale() {
                Some((lo, hi)) if (lo..=hi).contains(v) => Ok(()),
                Some((lo, hi)) => Err(Problem::OffScale { question: i, min: lo, max: hi }),
                None => Err(Problem::WrongAnswerKind { question: i, kind: q.kind }),
            },
            Answer::Availability(per_slot) if per_slot.len() != n => {
                Err(Problem::NoSuchOption { question: i, option: per_slot.len().min(n) })
            }
            Answer::Availability(_) => Ok(()),
        }
    }

    /// The stored form: a number (single, scale), a list of indices
    /// (multiple), of ranks per option (ranked) or of availability codes
    /// per slot (schedule: [`Availability::code`]).
    fn to_stored(&self) -> Value {
        match self {
            Answer::Choice(o) => Value::from(*o),
            Answer::Value(v) => Value::from(*v),
            Answer::Choices(os) => Value::from(os.clone()),
            Answer::Ranks(ranks) => Value::Array(ranks.iter().map(|r| r.map_or(Value::Null, Value::from)).collect()),
            Answer::Availability(per_slot) => Value::Array(per_slot.iter().map(|a| Value::from(a.code())).collect()),
        }
    }

    fn from_stored(v: &Value, kind: QuestionKind) -> Option<Answer> {
        let index = |v: &Value| v.as_u64().and_then(|n| usize::try_from(n).ok());
        match kind {
            QuestionKind::Single => index(v).map(Answer::Choice),
            QuestionKind::Scale => v.as_u64().and_then(|n| u8::try_from(n).ok()).map(Answer::Value),
            QuestionKind::Multiple => v.as_array()?.iter().map(index).collect::<Option<_>>().map(Answer::Choices),
            QuestionKind::Ranked => v
                .as_array()?
                .iter()
                .map(|r| if r.is_null() { Some(None) } else { r.as_u64().and_then(|n| u8::try_from(n).ok()).map(Some) })
                .collect::<Option<_>>()
                .map(Answer::Ranks),
            QuestionKind::Schedule => v
                .as_array()?
                .iter()
                .map(|a| a.as_u64().and_then(Availability::from_code))
                .collect::<Option<_>>()
                .map(Answer::Availability),
        }
    }
}

/// One counter a ballot adds one to. `option` is an option's index, or for
/// a scale the value itself; for a ranking it is the first choice; for a
/// schedule, a slot's yes or if-need-be ([`Availability::counter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Counter {
    Option {
        question: usize,
        option: usize,
    },
    /// Ballots that answered a multiple-choice question (the counts of its
    /// options do not tell, as one ballot picks several).
    Answered {
        question: usize,
    },
    /// Ballots that rank option `above` over option `below`.
    Pair {
        question: usize,
        above: usize,
        below: usize,
    },
}

/// One person's answers: per question, an answer or `None` when left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ballot(Vec<Option<Answer>>);

impl Ballot {
    /// Checks `answers` against the poll's questions (see the module's
    /// promises); the first problem found is returned.
    pub fn new(questions: &[Question], answers: Vec<Option<Answer>>) -> Result<Ballot, Problem> {
        if answers.len() != questions.len() {
            return Err(Problem::BallotLength { expected: questions.len() });
        }
        for (i, (a, q)) in answers.iter().zip(questions).enumerate() {
            match a {
                Some(a) => a.check(i, q)?,
                None if q.required => return Err(Problem::Unanswered { question: i }),
                None => {}
            }
        }
        if answers.iter().all(Option::is_none) {
            return Err(Problem::EmptyBallot);
        }
        Ok(Ballot(answers))
    }

    /// A ballot of single choices (tests and tools): the option's index per
    /// question, or `None`.
    pub fn of_choices(questions: &[Question], choices: &[Option<usize>]) -> Result<Ballot, Problem> {
        Ballot::new(questions, choices.iter().map(|c| c.map(Answer::Choice)).collect())
    }

    pub fn answers(&self) -> &[Option<Answer>] {
        &self.0
    }

    /// Calls `f` with each counter this ballot adds one to, each once, and
    /// stops at its first error. A callback rather than a list: the writer
    /// counts every ballot, and a heavy ranked one has over a thousand
    /// counters.
    pub fn try_for_each_counter<E>(&self, mut f: impl FnMut(Counter) -> Result<(), E>) -> Result<(), E> {
        for (question, answer) in self.0.iter().enumerate() {
            match answer {
                None => {}
                Some(Answer::Choice(option)) => f(Counter::Option { question, option: *option })?,
                Some(Answer::Value(v)) => f(Counter::Option { question, option: usize::from(*v) })?,
                Some(Answer::Choices(os)) => {
                    f(Counter::Answered { question })?;
                    for &option in os {
                        f(Counter::Option { question, option })?;
                    }
                }
                Some(Answer::Availability(per_slot)) => {
                    for (slot, a) in per_slot.iter().enumerate() {
                        if let Some(option) = a.counter(slot) {
                            f(Counter::Option { question, option })?;
                        }
                    }
                }
                Some(Answer::Ranks(ranks)) => {
                    if let Some(option) = schulze::first_choice(ranks) {
                        f(Counter::Option { question, option })?;
                    }
                    for (above, below) in schulze::preferred_pairs(ranks) {
                        f(Counter::Pair { question, above, below })?;
                    }
                }
            }
        }
        Ok(())
    }

    /// How many counters this ballot adds one to: the writer's work for it,
    /// which grows with the square of a ranking's options (a ranking of 12
    /// adds 66 pairs and its first choice).
    pub fn weight(&self) -> usize {
        let mut n = 0usize;
        let _ = self.try_for_each_counter(|_| {
            n += 1;
            Ok::<(), std::convert::Infallible>(())
        });
        n
    }

    /// The counters this ballot adds one to, each once, as a list.
    #[cfg(test)]
    pub fn counters(&self) -> Vec<Counter> {
        let mut out = Vec::new();
        let _ = self.try_for_each_counter(|c| {
            out.push(c);
            Ok::<(), std::convert::Infallible>(())
        });
        out
    }

    /// The JSON kept in `responses.choices`: per question `null` or the
    /// answer's stored form. A ballot of single choices is the same array of
    /// indices the first schema stored.
    pub fn to_stored(&self) -> String {
        Value::Array(self.0.iter().map(|a| a.as_ref().map_or(Value::Null, Answer::to_stored)).collect()).to_string()
    }

    /// Reads a stored ballot back against its poll's questions; `None` if
    /// it does not fit them.
    pub fn from_stored(questions: &[Question], stored: &str) -> Option<Ballot> {
        let v: Value = serde_json::from_str(stored).ok()?;
        let items = v.as_array()?;
        let answers = items
            .iter()
            .zip(questions)
            .map(|(v, q)| if v.is_null() { Some(None) } else { Answer::from_stored(v, q.kind).map(Some) })
            .collect::<Option<Vec<_>>>()?;
        Ballot::new(questions, answers).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::NewPoll;
    use serde_json::json;

    fn questions() -> Vec<Question> {
        NewPoll::from_json(&json!({
            "title": "t", "lang": "en", "expiryDays": 7,
            "questions": [
                {"label": "Q1", "options": ["a", "b", "c"]},
                {"type": "multiple", "label": "Q2", "options": ["x", "y", "z"], "minChoices": 1, "maxChoices": 2},
                {"type": "ranked", "label": "Q3", "options": ["r", "s", "t"]},
                {"type": "scale", "label": "Q4", "scaleMin": 1, "scaleMax": 5, "required": true}
            ]
        }))
        .unwrap()
        .questions
    }

    fn ranks(r: &[Option<u8>]) -> Option<Answer> {
        Some(Answer::Ranks(r.to_vec()))
    }

    #[test]
    fn each_rule_of_each_type_is_checked() {
        let q = questions();
        let with = |i: usize, a: Option<Answer>| {
            let mut answers = vec![None, None, None, Some(Answer::Value(3))];
            answers[i] = a;
            Ballot::new(&q, answers)
        };
        assert_eq!(with(0, Some(Answer::Choice(3))), Err(Problem::NoSuchOption { question: 0, option: 3 }));
        assert_eq!(
            with(0, Some(Answer::Value(1))),
            Err(Problem::WrongAnswerKind { question: 0, kind: QuestionKind::Single })
        );
        assert_eq!(
            with(1, Some(Answer::Choices(vec![0, 1, 2]))),
            Err(Problem::ChoiceCount { question: 1, min: 1, max: 2 })
        );
        assert_eq!(with(1, Some(Answer::Choices(vec![]))), Err(Problem::ChoiceCount { question: 1, min: 1, max: 2 }));
        assert_eq!(with(1, Some(Answer::Choices(vec![1, 1]))), Err(Problem::RepeatedChoice { question: 1 }));
        assert_eq!(with(1, Some(Answer::Choices(vec![0, 3]))), Err(Problem::NoSuchOption { question: 1, option: 3 }));
        assert_eq!(with(2, ranks(&[Some(1), Some(1), None])), Err(Problem::RepeatedRank { question: 2 }));
        assert_eq!(with(2, ranks(&[Some(1), Some(3), None])), Err(Problem::RankGap { question: 2 }));
        assert_eq!(with(2, ranks(&[None, None, None])), Err(Problem::RankGap { question: 2 }));
        assert_eq!(with(3, Some(Answer::Value(6))), Err(Problem::OffScale { question: 3, min: 1, max: 5 }));
        assert_eq!(with(3, None), Err(Problem::Unanswered { question: 3 }));
        assert!(with(2, ranks(&[Some(2), None, Some(1)])).is_ok());
        assert!(with(1, Some(Answer::Choices(vec![0, 2]))).is_ok());
        assert_eq!(Ballot::new(&q, vec![None]), Err(Problem::BallotLength { expected: 4 }));
        let optional = &q[..3];
        assert_eq!(Ballot::new(optional, vec![None, None, None]), Err(Problem::EmptyBallot));
    }

    #[test]
    fn form_ranks_must_run_from_one_without_gaps_or_repeats() {
        assert_eq!(Answer::from_ranks(0, 3, &[]), Ok(None));
        assert_eq!(Answer::from_ranks(0, 3, &[(2, 1), (0, 2)]), Ok(ranks(&[Some(2), None, Some(1)])));
        assert_eq!(Answer::from_ranks(0, 3, &[(2, 1), (0, 1)]), Err(Problem::RepeatedRank { question: 0 }));
        assert_eq!(Answer::from_ranks(0, 3, &[(2, 1), (0, 3)]), Err(Problem::RankGap { question: 0 }));
        assert_eq!(Answer::from_ranks(0, 3, &[(1, 0)]), Err(Problem::RankGap { question: 0 }));
        assert_eq!(Answer::from_ranks(1, 3, &[(5, 1)]), Err(Problem::NoSuchOption { question: 1, option: 5 }));
        assert_eq!(Answer::from_ranks(0, 3, &[(1, 1), (1, 2)]), Err(Problem::RepeatedChoice { question: 0 }));
    }

    /// A ballot with an answer of every kind, to `questions()`.
    fn every_kind(q: &[Question]) -> Ballot {
        Ballot::new(
            q,
            vec![
                Some(Answer::Choice(1)),
                Some(Answer::Choices(vec![0, 2])),
                ranks(&[Some(2), None, Some(1)]),
                Some(Answer::Value(5)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn the_walk_over_counters_stops_at_the_first_error() {
        let q = questions();
        let b = every_kind(&q);
        let mut seen = Vec::new();
        let r = b.try_for_each_counter(|c| {
            seen.push(c);
            if seen.len() == 3 { Err(c) } else { Ok(()) }
        });
        // The tally's error (a counter that does not fit) ends the walk there.
        assert_eq!(r, Err(Counter::Option { question: 1, option: 0 }));
        assert_eq!(seen.len(), 3);
        assert_eq!(b.try_for_each_counter(|_| Ok::<(), ()>(())), Ok(()));
    }

    #[test]
    fn counters_follow_the_answers_and_stored_ballots_read_back() {
        let q = questions();
        let b = every_kind(&q);
        let mut c = b.counters();
        c.sort();
        assert_eq!(
            c,
            [
                Counter::Option { question: 0, option: 1 },
                Counter::Option { question: 1, option: 0 },
                Counter::Option { question: 1, option: 2 },
                Counter::Option { question: 2, option: 2 },
                Counter::Option { question: 3, option: 5 },
                Counter::Answered { question: 1 },
                Counter::Pair { question: 2, above: 0, below: 1 },
                Counter::Pair { question: 2, above: 2, below: 0 },
                Counter::Pair { question: 2, above: 2, below: 1 },
            ]
        );
        assert_eq!(b.weight(), c.len(), "the weight is the count of counters");
        let stored = b.to_stored();
        assert_eq!(stored, "[1,[0,2],[2,null,1],5]");
        assert_eq!(Ballot::from_stored(&q, &stored), Some(b));
        // The first schema's ballots (single choices only) read as before.
        let single = &q[..1];
        assert_eq!(Ballot::from_stored(single, "[2]"), Ballot::of_choices(single, &[Some(2)]).ok());
        assert_eq!(Ballot::from_stored(&q, "[1,[0,2],[2,null,1],9]"), None);
    }
}
