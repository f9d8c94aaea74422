package copytrading_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// The Service's tests share a database per dialect, a group at a time,
// to spare the package a migration per test. Each makes its own users
// with unique names and finishes the copies it starts, so that what one
// leaves does not change what another sees; a group's tests run in turn.

// TestEngine runs the copy engine's tests: the copy stop-losses (first,
// as CheckStops reads every follow), Copy's passes, and the claims and
// their leases. TestRun has those that take time.
func TestEngine(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		t.Run("CheckStops", func(t *testing.T) { testCheckStops(t, db) })
		t.Run("Copy", func(t *testing.T) { testCopy(t, db) })
		t.Run("Lease", func(t *testing.T) { testCopyLease(t, db) })
	})
}

// TestService runs the tests of leader profiles, strategies,
// notifications and follows.
func TestService(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		t.Run("Leaders", func(t *testing.T) { testLeaders(t, db) })
		t.Run("Strategies", func(t *testing.T) { testStrategies(t, db) })
		t.Run("Notifications", func(t *testing.T) { testNotifications(t, db) })
		t.Run("Following", func(t *testing.T) { testFollowing(t, db) })
	})
}
