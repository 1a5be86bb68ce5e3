-- 005: counters for multiple-choice, ranked and scale questions.
--
-- The question types live in `polls.questions` (JSON), and each ballot in
-- `responses.choices` per question: an option's index (single), a list of
-- indices (multiple), a rank per option or null (ranked), or the value
-- (scale). Counters are kept in the ballot's transaction as before, so
-- results never scan ballots:
--   * option_tallies: per option for single and multiple; first choices per
--     option for ranked; per value (the `option` column holds the value
--     itself) for scale;
--   * answer_tallies: ballots that answered a multiple-choice question (one
--     ballot counts for several of its options, so their sum does not tell);
--   * pair_tallies: for a ranked question, ballots that rank option `above`
--     over option `below` (the Schulze method needs nothing else).
-- Both new tables belong to a poll like every other: ON DELETE CASCADE.

CREATE TABLE answer_tallies (
    poll_id  TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    question INTEGER NOT NULL,
    ballots  INTEGER NOT NULL,
    PRIMARY KEY (poll_id, question)
) STRICT, WITHOUT ROWID;

CREATE TABLE pair_tallies (
    poll_id  TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    question INTEGER NOT NULL,
    above    INTEGER NOT NULL,
    below    INTEGER NOT NULL,
    ballots  INTEGER NOT NULL,
    PRIMARY KEY (poll_id, question, above, below)
) STRICT, WITHOUT ROWID;
