-- PostgreSQL 001: the sealed tables, as SQLite has them since its 009/010.
--
-- The same promise as sql/009_sealed.sql: every byte of a poll is sealed
-- under the poll's own data key, wrapped under one day's key of the key
-- file (docs/PRIVACY.md, section 8). What stays readable is what the engine
-- needs: a poll's id, its creation and expiry days and the day its key is
-- leased until, which rows belong to which poll, whether an invite code has
-- voted, and lengths rounded up to buckets. A new database starts here: there
-- is no cleartext past to migrate.
--
-- Differences from SQLite, and why:
--   * days are text (YYYY-MM-DD) as in SQLite, so both engines compare and
--     store them alike; checked by pattern;
--   * ballots are written by each node's writer in batches, in shuffled
--     order, in one statement and one transaction (src/store/postgres.rs):
--     one transaction id and one commit time per batch, the order within it
--     random (there is no mix rewriting rows afterwards, as SQLite has);
--   * media bytes are stored EXTERNAL (not compressed: they are sealed, so
--     incompressible), so a range of a large file reads only its chunks;
--   * redeemed_forms records the vote forms spent, so that a form fetched
--     from one node and sent to two counts once (issue 23).

CREATE TABLE keyring (
    ring BYTEA NOT NULL CHECK (length(ring) = 16)
);

CREATE TABLE sealed_polls (
    id         TEXT  NOT NULL PRIMARY KEY,
    created_on TEXT  NOT NULL CHECK (created_on ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    expires_on TEXT  NOT NULL CHECK (expires_on ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    key_day    TEXT  NOT NULL CHECK (key_day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    data_key   BYTEA NOT NULL,
    body       BYTEA NOT NULL,
    tallies    BYTEA NOT NULL
);

CREATE INDEX sealed_polls_by_expiry ON sealed_polls (expires_on);

CREATE TABLE sealed_ballots (
    poll_id TEXT  NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    id      BYTEA NOT NULL CHECK (length(id) = 16),
    sealed  BYTEA NOT NULL,
    PRIMARY KEY (poll_id, id)
);

CREATE TABLE sealed_invites (
    poll_id  TEXT    NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    code_mac BYTEA   NOT NULL CHECK (length(code_mac) = 32),
    used     BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (poll_id, code_mac)
);

CREATE TABLE sealed_media (
    id      TEXT  NOT NULL PRIMARY KEY,
    poll_id TEXT  NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    bytes   BYTEA NOT NULL
);
ALTER TABLE sealed_media ALTER COLUMN bytes SET STORAGE EXTERNAL;

CREATE INDEX sealed_media_by_poll ON sealed_media (poll_id);

-- A spent vote form: the day its key belongs to and its nonce (random,
-- linked to nothing). Written in the ballot's own transaction; days
-- before yesterday are swept with the day's key work.
CREATE TABLE redeemed_forms (
    day   TEXT  NOT NULL CHECK (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    nonce BYTEA NOT NULL CHECK (length(nonce) = 16),
    PRIMARY KEY (day, nonce)
);
