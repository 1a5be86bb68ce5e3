-- PostgreSQL 002: format 2, as SQLite's 011 (sql/011_format_two.sql).
--
-- On PostgreSQL a code's `used` flag was set by an UPDATE in the ballot's
-- transaction: the code row's new version took a transaction id beside
-- the ballot's (`xmin`), and the WAL's commit record listed both. From
-- format 2 no code's row changes when it votes: a code's row is its hash
-- and its slot in the poll's bitmap of spent codes, sealed in the poll's
-- counts. The upgrade's pass mixes every poll under a new data key, so
-- that what the files kept of format 1 opens only until that key's lease
-- has passed.
--
-- `redeemed_forms.nonce` holds, from format 2, a keyed hash of a spent
-- form's nonce under the day's form key (`mark`), not the nonce: once the
-- key state has moved past that day, no one can tell which form it was.

CREATE TABLE poll_codes (
    poll_id TEXT    NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    mac     BYTEA   NOT NULL CHECK (length(mac) = 32),
    slot    INTEGER NOT NULL CHECK (slot >= 0),
    PRIMARY KEY (poll_id, mac)
);

ALTER TABLE sealed_polls ADD COLUMN format INTEGER NOT NULL DEFAULT 1 CHECK (format IN (1, 2));
ALTER TABLE sealed_polls ADD COLUMN old_tags BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE sealed_polls ADD COLUMN ballot_groups BYTEA;

ALTER TABLE keyring ADD COLUMN day TEXT CHECK (day IS NULL OR day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$');
ALTER TABLE keyring ADD COLUMN lease_days INTEGER CHECK (lease_days IS NULL OR lease_days BETWEEN 1 AND 365);

ALTER TABLE redeemed_forms RENAME COLUMN nonce TO mark;
