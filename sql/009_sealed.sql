-- 009: every byte of a poll sealed under a key that ceases to exist.
--
-- Deleting rows erases a poll from the files polld writes, but not from a
-- backup, a replica or a recycled log. So from this version every byte of a
-- poll is stored sealed (XChaCha20-Poly1305) under the poll's own random
-- data key, and that key only wrapped under the key of one day of a
-- forward-secure chain whose state lives in the key file (`--keys`,
-- src/keyring.rs). Once the key state has moved past that day, every copy of
-- the poll is noise (docs/PRIVACY.md, section 8).
--
-- What stays readable, because the engine needs it: a poll's id (public in
-- its links), its creation and expiry days (the sweep), the day its key is
-- leased until (the daily re-wrap), which rows belong to it (erasure in one
-- statement), row counts, whether an invite code has voted, and lengths
-- rounded up to buckets. Everything else is in the sealed columns:
--   * sealed_polls.body: the poll document (title, language, settings,
--     questions, language versions, the media listing, the admin token's
--     hash), padded;
--   * sealed_polls.tallies: every count of the poll, one value written whole
--     once per group commit, so no copy of the log shows which options a
--     commit counted (there is no counter row per option any more);
--   * sealed_ballots.sealed: the day a ballot was cast and its answers,
--     padded to one length per poll;
--   * sealed_invites.code_mac: an invite code's hash keyed under the poll's
--     data key;
--   * sealed_media.bytes: the cleaned file, padded and sealed in pieces.
-- Each sealed value is bound to its place (poll, table, row key, column).
--
-- The cleartext tables stay until the upgrade's encryption pass
-- (src/store/legacy.rs) has moved every poll here, one poll per
-- transaction (resumable), then 010 drops them.

-- The id binding the key file to this database (one row).
CREATE TABLE keyring (
    ring BLOB NOT NULL CHECK (length(ring) = 16)
) STRICT;

CREATE TABLE sealed_polls (
    id         TEXT NOT NULL PRIMARY KEY,
    created_on TEXT NOT NULL CHECK (created_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    expires_on TEXT NOT NULL CHECK (expires_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    -- The day under whose key `data_key` is wrapped: the poll's last live
    -- day or its lease, whichever comes first.
    key_day    TEXT NOT NULL CHECK (key_day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    data_key   BLOB NOT NULL,
    body       BLOB NOT NULL,
    tallies    BLOB NOT NULL
) STRICT;

CREATE INDEX sealed_polls_by_expiry ON sealed_polls (expires_on);

-- Keyed by a random 16-byte key within the poll (sql/003), staged under keys
-- starting with 0xff until the writer's mix (sql/006).
CREATE TABLE sealed_ballots (
    poll_id TEXT NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    id      BLOB NOT NULL CHECK (length(id) = 16),
    sealed  BLOB NOT NULL,
    PRIMARY KEY (poll_id, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE sealed_invites (
    poll_id  TEXT    NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    code_mac BLOB    NOT NULL CHECK (length(code_mac) = 32),
    used     INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1)),
    PRIMARY KEY (poll_id, code_mac)
) STRICT, WITHOUT ROWID;

-- A rowid table: a range of a large file is read from its BLOB in place.
CREATE TABLE sealed_media (
    id      TEXT NOT NULL UNIQUE,
    poll_id TEXT NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    bytes   BLOB NOT NULL
) STRICT;

CREATE INDEX sealed_media_by_poll ON sealed_media (poll_id);
