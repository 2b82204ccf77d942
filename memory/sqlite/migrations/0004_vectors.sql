-- 0004: dense vectors of events, one per (event, space).
--
-- space is the fingerprint of the model and settings that produced the vector
-- (embed.Space.Fingerprint, e.g. "bge-small-zh-v1.5:0123456789abcdef01234567"); vectors of two
-- spaces are never compared. vec is the vector as little-endian float32s; an empty vec marks an
-- event with nothing to embed. Vectors are derived: forgetting an event deletes its vectors
-- (ON DELETE CASCADE), backups leave them out, and the kernel re-embeds what has none.

CREATE TABLE vectors (
    event INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    space TEXT    NOT NULL CHECK (space <> ''),
    vec   BLOB    NOT NULL,
    PRIMARY KEY (event, space)
) STRICT, WITHOUT ROWID;

-- A space's vectors in event order (scans, counts, deleting other spaces).
CREATE INDEX vectors_space ON vectors (space, event);
