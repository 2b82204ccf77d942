-- 0007: dense vectors of image blocks, one per (block, space), in the spaces of models that
-- embed images as well as text (CLIP-like models). As for events (0004): space is the
-- fingerprint of the model (embed.Space.Fingerprint), vec little-endian float32s, an empty vec
-- marks an image that could not be embedded. Keyed by block id, so a block keeps its vectors
-- when it moves between holders; deleting the block (Forget of its holder event, or of the
-- entity that holds it) deletes them (ON DELETE CASCADE). Backups leave them out.

CREATE TABLE block_vectors (
    block TEXT NOT NULL REFERENCES blocks (id) ON DELETE CASCADE,
    space TEXT NOT NULL CHECK (space <> ''),
    vec   BLOB NOT NULL,
    PRIMARY KEY (block, space)
) STRICT, WITHOUT ROWID;

CREATE INDEX block_vectors_space ON block_vectors (space, block);
