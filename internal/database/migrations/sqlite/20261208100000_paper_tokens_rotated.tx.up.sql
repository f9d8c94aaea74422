-- Whether a revoked refresh token was revoked by its rotation (exchanged
-- for new tokens), so that presenting it again is a replay, or revoked
-- by the client (RFC 7009), so that it is only invalid.
ALTER TABLE paper_tokens ADD COLUMN rotated BOOLEAN NOT NULL DEFAULT FALSE;
