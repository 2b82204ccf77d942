-- 0001: sessions, events (with full-text index) and settings.
-- Times are UTC unix nanoseconds.

CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY,
    title         TEXT    NOT NULL DEFAULT '',
    system_prompt TEXT    NOT NULL DEFAULT '',
    model         TEXT    NOT NULL DEFAULT '',
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_updated ON sessions (updated DESC, id);

CREATE TABLE events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session      TEXT    NOT NULL REFERENCES sessions (id),
    turn_id      TEXT    NOT NULL DEFAULT '',
    time         INTEGER NOT NULL,
    role         TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content      TEXT    NOT NULL DEFAULT '',
    reasoning    TEXT    NOT NULL DEFAULT '',
    tool_calls   TEXT,   -- JSON array of {id, name, arguments}; NULL when none
    tool_call_id TEXT    NOT NULL DEFAULT '',
    tool_name    TEXT    NOT NULL DEFAULT '',
    tool_status  TEXT    NOT NULL DEFAULT '',
    channel      TEXT    NOT NULL DEFAULT '',
    partner      TEXT    NOT NULL DEFAULT '',
    scene        TEXT    NOT NULL DEFAULT '',
    scope_kind   INTEGER NOT NULL DEFAULT 0,
    scope_group  TEXT    NOT NULL DEFAULT '',
    tokens       INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX events_session_id ON events (session, id);

-- Full-text index over events; rowid = events.id. The store writes it in the same transaction
-- as the event (it decides what text to index); deleting an event deletes its row here.
CREATE VIRTUAL TABLE events_fts USING fts5 (content, tokenize = 'unicode61');

CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.id;
END;

CREATE TABLE settings (
    key     TEXT    PRIMARY KEY,
    value   TEXT    NOT NULL,
    updated INTEGER NOT NULL
) STRICT;
