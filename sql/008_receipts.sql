-- 008: receipts, with which a voter changes or withdraws their own ballot.
--
-- `polls.vote_changes`: whether voters get receipts (`voteChanges`). New
-- polls have it on unless their creator says otherwise (the application
-- writes it at creation); every poll that exists before this version keeps
-- the rules it was created under: off, until its admin turns it on.
--
-- Nothing else is added. A receipt (120 random bits, shown once to the
-- voter, never stored) finds its ballot through the ballot's key: a ballot
-- cast with a receipt takes its staged and its settled key from the
-- receipt's labelled SHA-256 (under separate labels) instead of from the
-- random source (src/store/writer.rs, `receipt_keys`). Such a key is as random
-- as any other, so it keeps the rows in no order of arrival, and no second
-- index is needed, whose pages would keep that order. The receipt derives
-- from nothing (least of all an invite code), and the ballot is erased
-- with its poll, or when its voter withdraws it.

ALTER TABLE polls ADD COLUMN vote_changes INTEGER NOT NULL DEFAULT 0 CHECK (vote_changes IN (0, 1));
