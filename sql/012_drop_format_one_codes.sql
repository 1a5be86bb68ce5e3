-- 012: format 1's invite rows go.
--
-- The upgrade's pass (src/store/writer/upgrade.rs) has moved every poll it
-- could read to format 2 (this migration runs only after it); a poll it
-- could not read (its key does not open) keeps nothing that could be read
-- anyway, and is erased by the day's key work once its key day is gone.
-- secure_delete (on for every connection) zeroes the dropped pages.

DROP TABLE sealed_invites;
