-- 003: ballots keep no order.
--
-- `responses` had SQLite's rowid, which counts up as ballots come in, so the
-- file told in which order a poll's ballots were cast. It is rebuilt here
-- without a rowid, keyed by a random 16-byte id within the poll: a ballot's
-- place in the table follows that random key. The id means nothing else and
-- nothing refers to it. The writer keeps it so (see src/store/writer.rs):
-- it rewrites the rows around new ballots in key order and then truncates
-- the WAL, so neither a page nor the WAL keeps the order of arrival.

CREATE TABLE responses_unordered (
    poll_id TEXT NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    id      BLOB NOT NULL CHECK (length(id) = 16),
    cast_on TEXT NOT NULL CHECK (cast_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    choices TEXT NOT NULL,
    PRIMARY KEY (poll_id, id)
) STRICT, WITHOUT ROWID;

-- Two steps: the first copy gets its random keys in the old order, and so
-- is laid out in it; the second is written in key order, so its layout
-- follows the random keys only. secure_delete (on for every connection)
-- zeroes the pages of the dropped tables.
CREATE TABLE responses_keyed (
    poll_id TEXT NOT NULL,
    id      BLOB NOT NULL,
    cast_on TEXT NOT NULL,
    choices TEXT NOT NULL,
    PRIMARY KEY (poll_id, id)
) STRICT, WITHOUT ROWID;

INSERT INTO responses_keyed (poll_id, id, cast_on, choices)
    SELECT poll_id, randomblob(16), cast_on, choices FROM responses;

INSERT INTO responses_unordered (poll_id, id, cast_on, choices)
    SELECT poll_id, id, cast_on, choices FROM responses_keyed ORDER BY poll_id, id;

DROP TABLE responses_keyed;
DROP TABLE responses;
ALTER TABLE responses_unordered RENAME TO responses;
