-- PostgreSQL 003: format 1's invite rows go, as SQLite's 012.

DROP TABLE sealed_invites;
