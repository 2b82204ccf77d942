-- 0003: L3 graph (entities, triples with provenance and validity), blocks with one holder,
-- scenes, and the distilled mark on events.

ALTER TABLE events ADD COLUMN distilled INTEGER NOT NULL DEFAULT 0 CHECK (distilled IN (0, 1));

-- Cold candidates for distillation: L2 events not yet distilled.
CREATE INDEX events_cold ON events (layer, distilled, id);

CREATE TABLE entities (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL CHECK (name <> ''),
    name_key      TEXT    NOT NULL, -- lower-cased, space-collapsed name: entities are found by it
    kind          TEXT    NOT NULL DEFAULT 'thing',
    block_id      TEXT,             -- the entity's text block (held by this entity); NULL: none
    scope_kind    INTEGER NOT NULL DEFAULT 0,
    scope_group   TEXT    NOT NULL DEFAULT '',
    pinned        INTEGER NOT NULL DEFAULT 0,
    origin        TEXT    NOT NULL DEFAULT 'rules',
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL,
    last_recalled INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE UNIQUE INDEX entities_name_kind ON entities (name_key, kind);

CREATE TABLE triples (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    subject       INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    predicate     TEXT    NOT NULL CHECK (predicate <> ''),
    object        INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    valid_from    INTEGER NOT NULL DEFAULT 0,
    valid_to      INTEGER NOT NULL DEFAULT 0, -- 0: still valid
    scope_kind    INTEGER NOT NULL DEFAULT 0,
    scope_group   TEXT    NOT NULL DEFAULT '',
    pinned        INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER REFERENCES triples (id) ON DELETE SET NULL,
    origin        TEXT    NOT NULL DEFAULT 'rules',
    created       INTEGER NOT NULL
) STRICT;

CREATE INDEX triples_subject ON triples (subject, predicate);
CREATE INDEX triples_object ON triples (object);
-- The later endpoint: a page of entities in id order brings the edges whose later end is on it.
CREATE INDEX triples_span ON triples (max(subject, object));

-- Provenance: the events a triple came from. Forgetting an event deletes its rows here (and the
-- kernel then deletes triples left without a source that had one).
CREATE TABLE triple_sources (
    triple INTEGER NOT NULL REFERENCES triples (id) ON DELETE CASCADE,
    event  INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    PRIMARY KEY (triple, event)
) STRICT, WITHOUT ROWID;

CREATE INDEX triple_sources_event ON triple_sources (event);

-- Full-text index over current triples: rowid = triples.id; text is "subject predicate object"
-- plus the entities' text, tokenized by the store as events are.
CREATE VIRTUAL TABLE triples_fts USING fts5 (
    tokens,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '!""#$%&''()*+,-./:;<=>?@[\]^_`{|}~'"
);

CREATE TRIGGER triples_fts_delete AFTER DELETE ON triples BEGIN
    DELETE FROM triples_fts WHERE rowid = old.id;
END;

-- Blocks: exactly one holder, by construction (one row, one holder, checked).
CREATE TABLE blocks (
    id            TEXT    PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('text', 'image', 'audio')),
    name          TEXT    NOT NULL DEFAULT '',
    mime          TEXT    NOT NULL DEFAULT '',
    text          TEXT    NOT NULL DEFAULT '',
    data          BLOB,
    size          INTEGER NOT NULL DEFAULT 0,
    scope_kind    INTEGER NOT NULL DEFAULT 0,
    scope_group   TEXT    NOT NULL DEFAULT '',
    holder_layer  INTEGER NOT NULL CHECK (holder_layer IN (1, 2, 3)),
    holder_event  INTEGER REFERENCES events (id) ON DELETE CASCADE,
    holder_entity INTEGER REFERENCES entities (id) ON DELETE CASCADE,
    created       INTEGER NOT NULL,
    CHECK ((holder_layer IN (1, 2) AND holder_event IS NOT NULL AND holder_entity IS NULL)
        OR (holder_layer = 3 AND holder_entity IS NOT NULL AND holder_event IS NULL))
) STRICT;

CREATE INDEX blocks_event ON blocks (holder_event);
CREATE INDEX blocks_entity ON blocks (holder_entity);

-- The blocks an event brought, in order; kept when a block moves to L3.
CREATE TABLE event_blocks (
    event INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    block TEXT    NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
    pos   INTEGER NOT NULL,
    PRIMARY KEY (event, block)
) STRICT, WITHOUT ROWID;

CREATE INDEX event_blocks_block ON event_blocks (block);

CREATE TABLE scenes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    key         TEXT    NOT NULL UNIQUE,
    declared    INTEGER NOT NULL DEFAULT 0,
    features    TEXT    NOT NULL, -- JSON object feature -> weight
    strength    REAL    NOT NULL DEFAULT 0,
    occurrences INTEGER NOT NULL DEFAULT 0,
    seen        INTEGER NOT NULL,
    created     INTEGER NOT NULL
) STRICT;

CREATE INDEX events_scene ON events (scene);
