-- 002: media attached to a poll through the web form (images, audio, video).
--
-- The bytes are kept in the database, not in files beside it, so that they
-- share the poll's fate in one transaction: deleting the poll row cascades
-- here, `secure_delete` overwrites the freed pages, and the WAL is truncated
-- after every erasure, exactly as for the poll's text. Only cleaned bytes are
-- stored (metadata stripped, type decided by content); no file name, no
-- client-sent type, no upload time.

CREATE TABLE media (
    id       TEXT    NOT NULL UNIQUE,
    poll_id  TEXT    NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    -- NULL: the poll's own; otherwise the index of the question it illustrates.
    question INTEGER CHECK (question IS NULL OR question BETWEEN 0 AND 19),
    kind     TEXT    NOT NULL CHECK (kind IN ('image', 'audio', 'video')),
    mime     TEXT    NOT NULL,
    size     INTEGER NOT NULL CHECK (size > 0),
    sha256   BLOB    NOT NULL CHECK (length(sha256) = 32),
    -- Alt text of an image, caption of audio or video ('' for none).
    alt      TEXT    NOT NULL,
    width    INTEGER,
    height   INTEGER,
    -- Last, so that listing a poll's media never reads the bytes.
    bytes    BLOB    NOT NULL
) STRICT;

-- One item per slot (the writer replaces, this makes sure), and the index
-- for listing a poll's media.
CREATE UNIQUE INDEX media_one_per_slot ON media (poll_id, ifnull(question, -1));
