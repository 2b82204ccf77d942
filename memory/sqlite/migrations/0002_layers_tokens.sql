-- 0002: event layers, access counts and metadata; session channel, partner and scope; a full-text
-- index over tokens.
--
-- The full-text table is rebuilt as events_fts(tokens, expansion): a regular (not contentless) FTS5 table
-- whose text is the space-joined output of the store's tokenizer (jieba, word tokens…), so a
-- search can return what an event was indexed under. Its own tokenizer only has to split on
-- spaces: unicode61 without diacritic folding, with every printable ASCII punctuation character
-- as a token character, keeps "北京", "c++" or "2024-05-06" whole. It still folds case (tokens
-- are expected in lower case) and drops non-ASCII punctuation. The store fills the table in Go,
-- after this script, in the same transaction.

ALTER TABLE events ADD COLUMN meta TEXT; -- JSON object of strings; NULL when empty
ALTER TABLE events ADD COLUMN layer INTEGER NOT NULL DEFAULT 1 CHECK (layer IN (1, 2));
ALTER TABLE events ADD COLUMN accesses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN last_access INTEGER NOT NULL DEFAULT 0; -- unix nanos; 0 = never

CREATE INDEX events_session_layer_id ON events (session, layer, id);
CREATE INDEX events_partner ON events (partner);

ALTER TABLE sessions ADD COLUMN channel TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN partner TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN scope_kind INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN scope_group TEXT NOT NULL DEFAULT '';

DROP TRIGGER events_fts_delete;
DROP TABLE events_fts;

-- rowid = events.id.
CREATE VIRTUAL TABLE events_fts USING fts5 (
    tokens,
    expansion, -- lexicon terms derived from the event (WordNet hypernyms), weighted lower in ranking
    tokenize = "unicode61 remove_diacritics 0 tokenchars '!""#$%&''()*+,-./:;<=>?@[\]^_`{|}~'"
);

-- Per-term document counts for IDF weighting.
CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab (events_fts, row);

CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.id;
END;
