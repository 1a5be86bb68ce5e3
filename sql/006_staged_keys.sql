-- 006: keys starting with 0xff now mean "staged".
--
-- From this version a new ballot is stored with a key whose first byte is
-- 0xff until the writer's mix gives it its random key, which never starts
-- with 0xff (src/store/writer.rs). Ballots keyed before this version had
-- fully random keys, so about one in 256 starts with 0xff and would read as
-- staged. They get a key that does not, random like the others: the first
-- byte from 0 to 254, the rest from randomblob. Their new places follow
-- their new keys, which say nothing about when they were cast.

UPDATE responses
   SET id = unhex(printf('%02x', abs(random() % 255)) || hex(randomblob(15)))
 WHERE id >= x'ff';
