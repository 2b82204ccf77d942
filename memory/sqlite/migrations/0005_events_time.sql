-- 0005: events by time, for recall's questions that name a day or a span ("what happened on
-- 8 May 2023?", "last week").

CREATE INDEX events_time ON events (time);
