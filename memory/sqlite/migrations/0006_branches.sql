-- 0006: a session's events form a tree. parent is the event an event follows (0: a root);
-- regenerating a reply or editing a sent message starts a sibling branch. The session's current
-- branch is the path from a root to its newest on-branch event; the events of the other branches
-- stay stored with off_branch = 1 (History, the L1 window and recall skip them).
-- Existing events follow their session's previous event, as they always did.

ALTER TABLE events ADD COLUMN parent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN off_branch INTEGER NOT NULL DEFAULT 0 CHECK (off_branch IN (0, 1));

UPDATE events SET parent = coalesce(
    (SELECT p.id FROM events p WHERE p.session = events.session AND p.id < events.id ORDER BY p.id DESC LIMIT 1), 0);

CREATE INDEX events_parent ON events (parent) WHERE parent != 0;
