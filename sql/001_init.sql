-- 001: the first schema of anonpoll.
--
-- Privacy rules this schema is built around:
--   * no column holds a client address, user agent or any other client trait;
--   * every date is a day (TEXT 'YYYY-MM-DD', checked below), never a time of day;
--   * every row that belongs to a poll references it with ON DELETE CASCADE, so
--     deleting the poll row erases everything about it in the same transaction;
--   * the admin token is kept only as its SHA-256.

CREATE TABLE polls (
    id              TEXT    NOT NULL PRIMARY KEY,
    token_sha256    BLOB    NOT NULL CHECK (length(token_sha256) = 32),
    title           TEXT    NOT NULL,
    lang            TEXT    NOT NULL CHECK (lang IN ('en', 'fr', 'de', 'it')),
    results_public  INTEGER NOT NULL CHECK (results_public IN (0, 1)),
    closed          INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
    created_on      TEXT    NOT NULL CHECK (created_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    expires_on      TEXT    NOT NULL CHECK (expires_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    -- The questions never change after creation, so they are kept as one JSON
    -- document: [{"type": "single", "label": "...", "options": ["...", ...]}, ...]
    questions       TEXT    NOT NULL,
    total_responses INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX polls_by_expiry ON polls (expires_on);

-- Language versions: {"title": "...", "questions": [{"label": "...", "options": [...]}]}
CREATE TABLE translations (
    poll_id TEXT NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    lang    TEXT NOT NULL CHECK (lang IN ('en', 'fr', 'de', 'it')),
    body    TEXT NOT NULL,
    PRIMARY KEY (poll_id, lang)
) STRICT, WITHOUT ROWID;

-- One row per ballot: the day it was cast and, per question, the index of the
-- chosen option or null. Nothing else about the voter exists.
CREATE TABLE responses (
    poll_id TEXT NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    cast_on TEXT NOT NULL CHECK (cast_on GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    choices TEXT NOT NULL
) STRICT;

CREATE INDEX responses_by_poll ON responses (poll_id);

-- Counters kept in the same transaction as each ballot, so results never scan
-- the responses.
CREATE TABLE option_tallies (
    poll_id  TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    question INTEGER NOT NULL,
    option   INTEGER NOT NULL,
    votes    INTEGER NOT NULL,
    PRIMARY KEY (poll_id, question, option)
) STRICT, WITHOUT ROWID;

CREATE TABLE daily_tallies (
    poll_id   TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    day       TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    responses INTEGER NOT NULL,
    PRIMARY KEY (poll_id, day)
) STRICT, WITHOUT ROWID;
