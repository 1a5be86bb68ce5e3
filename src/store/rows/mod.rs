//! What each sealed value holds, in plaintext: the poll document
//! ([`doc`]), a ballot ([`ballot`]), the counts ([`counts`]).
//! Engine-neutral: any store seals and opens these bytes.
//!
//! Why together: the layouts decide what a ciphertext's length can tell,
//! so they are kept side by side and padded here: the document to a
//! bucket, every ballot of a poll to one width, the counts to a layout the
//! questions decide.

mod ballot;
mod counts;
mod doc;
mod groups;

pub use ballot::{Layout, Stored, Tag, ballot_bytes, ballot_from, ballot_from_v1, ballot_width};
pub use counts::{State, empty_tallies, state_bytes, state_from, tallies_bytes, tallies_from, tally};
pub use doc::{Doc, DocMedia};
pub use groups::{Group, Groups};

use super::vocab::corrupt;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::day::Day;
    use crate::domain::{Answer, Availability, NewPoll};
    use crate::domain::{Ballot, Lang, Question};
    use crate::secret::{PollId, TokenHash};
    use crate::store::seal::bucket;
    use serde_json::json;

    fn questions() -> Vec<Question> {
        NewPoll::from_json(&json!({
            "title": "t", "lang": "en", "expiryDays": 7,
            "questions": [
                {"label": "Q1", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]},
                {"type": "multiple", "label": "Q2", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"], "minChoices": 1, "maxChoices": 12},
                {"type": "ranked", "label": "Q3", "options": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]},
                {"type": "scale", "label": "Q4", "scaleMin": 0, "scaleMax": 10},
                {"label": "Q5", "options": ["a", "b"], "required": false},
                {"type": "schedule", "label": "Q6", "options": (1..=12).map(|d| format!("2027-01-{d:02}T18:30")).collect::<Vec<_>>()}
            ]
        }))
        .unwrap()
        .questions
    }

    #[test]
    fn every_ballot_of_a_poll_has_one_width() {
        let qs = questions();
        let width = ballot_width(&qs);
        let widest = Ballot::new(
            &qs,
            vec![
                Some(Answer::Choice(11)),
                Some(Answer::Choices((0..12).collect())),
                Some(Answer::Ranks((1..=12).rev().map(Some).collect())),
                Some(Answer::Value(10)),
                None,
                Some(Answer::Availability(vec![Availability::Yes; 12])),
            ],
        )
        .unwrap();
        let narrow =
            Ballot::new(&qs, vec![Some(Answer::Choice(0)), None, None, Some(Answer::Value(0)), None, None]).unwrap();
        let day = Day::parse("2026-11-27").unwrap();
        let layout = Layout::of(&qs);
        for b in [&widest, &narrow] {
            for tag in [None, Some(Tag::Receipt([0xab; 16])), Some(Tag::FormatOne([0xcd; 16]))] {
                let bytes = ballot_bytes(&layout, day, b, tag.as_ref()).unwrap();
                assert_eq!(bytes.len(), layout.width, "with or without a tag");
                assert_eq!(ballot_from(&qs, &bytes).unwrap(), Stored { day, ballot: b.clone(), tag });
            }
        }
        // The bound is tight enough to matter: the widest ballot uses most of it.
        assert!(10 + widest.to_stored().len() + 40 >= width, "{width}");
    }

    #[test]
    fn counts_round_trip_and_follow_ballots_exactly() {
        let qs = questions();
        let l = Layout::of(&qs);
        let mut t = empty_tallies(&l);
        let b = Ballot::new(
            &qs,
            vec![
                Some(Answer::Choice(3)),
                Some(Answer::Choices(vec![1, 4])),
                Some(Answer::Ranks({
                    let mut r = vec![None; 12];
                    r[2] = Some(1);
                    r[0] = Some(2);
                    r
                })),
                Some(Answer::Value(7)),
                None,
                Some(Answer::Availability(
                    [Availability::Yes, Availability::IfNeedBe].into_iter().chain([Availability::No; 10]).collect(),
                )),
            ],
        )
        .unwrap();
        let d1 = Day::parse("2026-11-27").unwrap();
        let d0 = Day::parse("2026-11-20").unwrap();
        tally(&mut t, &l, &b, Some(d1), 1).unwrap();
        tally(&mut t, &l, &b, Some(d0), 1).unwrap();
        assert_eq!(t.total, 2);
        assert_eq!(t.votes[0][3], 2);
        assert_eq!(t.votes[3][7], 2);
        assert_eq!(t.answered, vec![2, 2, 2, 2, 0, 2]);
        // A slot's yes and if need be, two counters a slot; no is not counted.
        assert_eq!(&t.votes[5][..4], &[2, 0, 0, 2]);
        assert_eq!(t.votes[5].iter().sum::<u64>(), 4);
        assert_eq!(t.pairwise[2][2][0], 2);
        assert_eq!(t.by_day, vec![(d0, 1), (d1, 1)]);
        let bytes = tallies_bytes(&t).unwrap();
        assert_eq!(tallies_from(&l, &bytes).unwrap(), t);
        tally(&mut t, &l, &b, Some(d0), -1).unwrap();
        assert_eq!(t.by_day, vec![(d1, 1)], "a day that falls to zero goes");
        let same_len = tallies_bytes(&t).unwrap();
        assert_eq!(same_len.len(), bytes.len(), "days are padded");
        tally(&mut t, &l, &b, Some(d1), -1).unwrap();
        assert_eq!(t, empty_tallies(&l));
        assert!(tally(&mut t, &l, &b, Some(d1), -1).is_err(), "never below zero");
    }

    #[test]
    fn the_document_pads_to_a_bucket_and_reads_back() {
        let poll = NewPoll::from_json(&json!({"title": "Lunch", "lang": "fr", "expiryDays": 7,
            "questions": [{"label": "Q", "options": ["a", "b"]}]}))
        .unwrap();
        let token = TokenHash([7; 32]);
        let doc = Doc::new(&token, &poll, Vec::new()).unwrap();
        let bytes = doc.to_bytes().unwrap();
        assert_eq!(bytes.len(), bucket(bytes.len()));
        let back = Doc::from_bytes(&bytes).unwrap();
        let d = Day::parse("2026-11-27").unwrap();
        let p = back.clone().into_poll(&PollId::parse("AAAAAAAAAAAAAAAA").unwrap(), d, d.plus_days(7), d).unwrap();
        assert_eq!(p.title.as_str(), "Lunch");
        assert_eq!(p.lang, Lang::Fr);
        assert_eq!(p.token_hash.0, [7; 32]);
        // The invite key comes back with it, and hashes codes alike.
        let code = crate::secret::InviteHash([3; 32]);
        assert_eq!(back.invite_mac(&code).unwrap(), doc.invite_mac(&code).unwrap());
    }

    #[test]
    fn the_state_round_trips_and_its_bitmap_holds_the_codes_issued() {
        let qs = questions();
        let l = Layout::of(&qs);
        let mut s = State::new(&l);
        s.hold_codes(20);
        assert_eq!(s.spent.len(), 3);
        assert!(!s.is_spent(19));
        s.set_spent(19, true).unwrap();
        s.set_spent(0, true).unwrap();
        assert!(s.set_spent(24, true).is_err(), "beyond the codes issued");
        assert_eq!(s.spent_count(), 2);
        s.version = 41;
        s.digest.count(b"k", b"some sealed bytes", true);
        let bytes = state_bytes(&s).unwrap();
        assert_eq!(state_from(&l, &bytes).unwrap(), s);
        s.set_spent(19, false).unwrap();
        assert_eq!(state_bytes(&s).unwrap().len(), bytes.len(), "spending a code never changes the length");
        assert!(state_from(&l, &bytes[1..]).is_err());
    }
}
