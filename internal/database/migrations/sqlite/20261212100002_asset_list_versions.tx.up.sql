-- asset_list_versions holds one row (id 1) whose version goes up with
-- every asset saved (marketdata.Store.SaveAsset): the version under which
-- each server keeps its encoded copy of the full asset list. No row reads
-- as version 0.
CREATE TABLE asset_list_versions (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
