-- 004: who reads results and when, a voting deadline, shuffled options.
--
-- `results_public` keeps its meaning (1: anyone, always). `results_after`
-- narrows a poll whose results are not public: NULL means only the admin,
-- 'vote' means each voter on the page right after voting, 'close' means
-- anyone once the poll is closed. A public poll has no `results_after`.
-- `closes_on` is a day, like every date here: from that day the poll takes
-- no votes. Every existing poll keeps what it had: no deadline, no shuffle.

ALTER TABLE polls ADD COLUMN results_after TEXT
    CHECK (results_after IS NULL OR results_after IN ('vote', 'close'));
ALTER TABLE polls ADD COLUMN closes_on TEXT
    CHECK (closes_on IS NULL OR closes_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]');
ALTER TABLE polls ADD COLUMN shuffle_options INTEGER NOT NULL DEFAULT 0
    CHECK (shuffle_options IN (0, 1));
