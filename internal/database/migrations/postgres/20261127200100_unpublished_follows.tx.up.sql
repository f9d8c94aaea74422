-- Package copytrading: the follows of a leader who unpublished their
-- profile stop, whatever their auto-sync, and say why: an older version
-- stopped only those with auto-sync on, and left the others live with no
-- reason (or an earlier one). The text is copytrading.StoppedUnpublished.
UPDATE follows SET auto_sync = FALSE, stopped_reason = 'the leader unpublished the profile'
WHERE unfollowed_at IS NULL
  AND leader_profile_id IN (SELECT id FROM leader_profiles WHERE unpublished_at IS NOT NULL);
