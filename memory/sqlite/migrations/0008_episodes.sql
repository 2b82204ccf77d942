-- 0008: episodes (memory.EpisodeContinues): one session's stretch of conversation, the events of
-- the session with ids in [first_id, last_id]. Derived from events: the store assigns each new
-- event to its session's last episode or starts one, and writes an episode's text (its events'
-- index tokens) into episodes_fts once it is closed (a later episode of its session began, or it
-- has been quiet for an episode gap); until then it is "pending" (indexed = 0) and recall reads
-- it from its events. Deleting an event takes its episode's text out of episodes_fts at once
-- (the episode is pending again and written anew from the events that remain).

CREATE TABLE episodes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session     TEXT    NOT NULL,
    scope_kind  INTEGER NOT NULL,
    scope_group TEXT    NOT NULL,
    first_id    INTEGER NOT NULL,
    last_id     INTEGER NOT NULL,
    last_time   INTEGER NOT NULL,
    events      INTEGER NOT NULL,
    indexed     INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX episodes_session ON episodes (session, last_id);
CREATE INDEX episodes_pending ON episodes (last_time) WHERE indexed = 0;

-- rowid = episodes.id; the same tokenizer as events_fts.
CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    tokens,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '!""#$%&''()*+,-./:;<=>?@[\]^_`{|}~'"
);

CREATE VIRTUAL TABLE episodes_fts_vocab USING fts5vocab (episodes_fts, row);

-- An event's episode is the first of its session (in last_id order) that ends at or after it:
-- one index step, however many episodes the session has.
CREATE TRIGGER episodes_event_delete AFTER DELETE ON events BEGIN
    DELETE FROM episodes_fts WHERE rowid =
        (SELECT id FROM episodes WHERE session = old.session AND last_id >= old.id ORDER BY last_id LIMIT 1);
    UPDATE episodes SET indexed = 0 WHERE id =
        (SELECT id FROM episodes WHERE session = old.session AND last_id >= old.id ORDER BY last_id LIMIT 1);
END;
