-- 008: receipts, with which a voter changes or withdraws their own ballot.
--
-- `polls.vote_changes`: whether voters get receipts (`voteChanges`; every
-- existing poll gets the default, true).
--
-- `responses.receipt_sha256`: the labelled SHA-256 of the ballot's receipt
-- (src/secret.rs), or NULL for a ballot cast without one (every ballot from
-- before this version, and every ballot of a poll with vote_changes off).
-- The receipt is 120 random bits, shown once to the voter and never
-- stored; it derives from nothing (least of all an invite code), so the
-- hash says nothing about who voted. The index that finds a ballot by its
-- receipt is ordered by the hash, which is random: it keeps no order of
-- arrival either. The row is erased with its poll (ON DELETE CASCADE of
-- the table) or when its voter withdraws it.

ALTER TABLE polls ADD COLUMN vote_changes INTEGER NOT NULL DEFAULT 1 CHECK (vote_changes IN (0, 1));

ALTER TABLE responses ADD COLUMN receipt_sha256 BLOB CHECK (receipt_sha256 IS NULL OR length(receipt_sha256) = 32);

CREATE UNIQUE INDEX responses_by_receipt ON responses (poll_id, receipt_sha256) WHERE receipt_sha256 IS NOT NULL;
