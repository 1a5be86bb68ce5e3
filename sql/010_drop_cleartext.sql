-- 010: the cleartext tables go.
--
-- The upgrade's encryption pass (src/store/legacy.rs) has moved every poll
-- into the sealed tables of 009 (this migration refuses to run before it
-- has). secure_delete (on for every connection) zeroes the dropped pages.

DROP TABLE pair_tallies;
DROP TABLE answer_tallies;
DROP TABLE daily_tallies;
DROP TABLE option_tallies;
DROP TABLE invites;
DROP TABLE media;
DROP TABLE translations;
DROP TABLE responses;
DROP TABLE polls;
