-- 011: format 2 of a poll's sealed values; the key state checked, not
-- trusted.
--
-- Nothing at rest may tie an invite code to the ballot it cast, on any
-- engine: so no code's row changes when it votes any more. A code's row is
-- its hash and its slot in the poll's bitmap of spent codes, which the
-- poll's sealed counts hold (src/store/rows/counts.rs). `poll_codes`
-- replaces `sealed_invites`, whose `used` flag changed in the ballot's
-- transaction; the upgrade's pass (src/store/writer/upgrade.rs) moves each
-- poll's codes here, one poll per transaction, and marks the poll
-- `format = 2`; 012 then drops `sealed_invites`.
--
-- `keyring.day`: the furthest day the key state has moved to, noted by
-- each day's key work, so that an old copy of the key file (from a backup)
-- is noticed (src/store/binding.rs). `keyring.lease_days`: the lease, kept
-- once for every process of the database.

CREATE TABLE poll_codes (
    poll_id TEXT    NOT NULL REFERENCES sealed_polls (id) ON DELETE CASCADE,
    mac     BLOB    NOT NULL CHECK (length(mac) = 32),
    slot    INTEGER NOT NULL CHECK (slot >= 0),
    PRIMARY KEY (poll_id, mac)
) STRICT, WITHOUT ROWID;

ALTER TABLE sealed_polls ADD COLUMN format INTEGER NOT NULL DEFAULT 1 CHECK (format IN (1, 2));
-- Whether a ballot of the poll still carries, sealed, the key its row had
-- in format 1 (for a receipt of then to find it): the day's key work then
-- looks whether the poll still takes receipts, and mixes it without those
-- keys once it does not (src/store/rows/ballot.rs, `Tag`).
ALTER TABLE sealed_polls ADD COLUMN old_tags INTEGER NOT NULL DEFAULT 0 CHECK (old_tags IN (0, 1));
-- The poll's ballot groups, sealed under its data key: each group's key,
-- digest and count (src/store/rows/groups.rs). A poll's settled ballots
-- lie in groups so that a mix rewrites the groups its new ballots go to,
-- not the whole poll. NULL until the poll's first mix.
ALTER TABLE sealed_polls ADD COLUMN ballot_groups BLOB;

ALTER TABLE keyring ADD COLUMN day TEXT
    CHECK (day IS NULL OR day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]');
ALTER TABLE keyring ADD COLUMN lease_days INTEGER CHECK (lease_days IS NULL OR lease_days BETWEEN 1 AND 365);
