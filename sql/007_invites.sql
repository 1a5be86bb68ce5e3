-- 007: how a poll holds back a second vote, and invite codes.
--
-- `duplicate_check`: 'network' (the in-memory per-network throttle, as
-- before; every existing poll keeps it), 'invite' (one ballot per invite
-- code) or 'none'.
--
-- `invites`: one row per code the admin issued, keyed by the code's SHA-256
-- (the code itself is shown once, to the admin, and never stored). The key
-- is random, so the rows' order says nothing about when or to whom a code
-- was given. `used` turns to 1, in place, in the transaction that stores
-- the code's ballot; nothing in that ballot derives from the code, and the
-- ballot moves to its random key with the writer's mix (sql/003, 006), so
-- neither table tells which code cast which ballot.

ALTER TABLE polls ADD COLUMN duplicate_check TEXT NOT NULL DEFAULT 'network'
    CHECK (duplicate_check IN ('network', 'invite', 'none'));

CREATE TABLE invites (
    poll_id     TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    code_sha256 BLOB    NOT NULL CHECK (length(code_sha256) = 32),
    used        INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1)),
    PRIMARY KEY (poll_id, code_sha256)
) STRICT, WITHOUT ROWID;
