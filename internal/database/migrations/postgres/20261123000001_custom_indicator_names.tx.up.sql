-- Package studies: a user's custom indicators have distinct names. Names
-- that an older version let repeat keep the oldest as it is; the others
-- get the first 8 characters of their id appended, so nothing is lost.
UPDATE custom_indicators SET name = name || ' (' || substr(CAST(id AS TEXT), 1, 8) || ')'
WHERE deleted_at IS NULL AND EXISTS (
    SELECT 1 FROM custom_indicators o
    WHERE o.user_id = custom_indicators.user_id AND o.name = custom_indicators.name AND o.deleted_at IS NULL
      AND (o.created_at < custom_indicators.created_at OR (o.created_at = custom_indicators.created_at AND o.id < custom_indicators.id))
);

--bun:split

CREATE UNIQUE INDEX custom_indicators_name_idx ON custom_indicators (user_id, name) WHERE deleted_at IS NULL;
