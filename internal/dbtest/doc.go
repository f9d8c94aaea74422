// Package dbtest runs tests on both of Tradekit's databases: an embedded
// SQLite file in the test's temporary directory and a real PostgreSQL
// server.
//
// PostgreSQL comes from TRADEKIT_TEST_POSTGRES when it is set (the DSN of a
// server on which the tests may create databases); otherwise dbtest starts
// a throwaway server from the machine's PostgreSQL binaries (initdb,
// pg_ctl) in a temporary directory (in memory, /dev/shm, when Linux has
// one with room) on a free loopback port, as the
// "postgres" user when the tests run as root, and stops it when the test
// binary ends. Every test gets a fresh, migrated database of its own.
//
// When no PostgreSQL can be had, PostgreSQL tests are skipped, except under
// CI=true, where they fail.
//
// [StartReplicated] starts a primary and a streaming replica of it (a hot
// standby made with pg_basebackup -R), with the means to pause its
// replay and to kill and restart it, for the tests of read replicas.
//
// A package that uses dbtest calls [Main] from its TestMain:
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
//
//	func TestStore(t *testing.T) {
//		dbtest.Each(t, func(t *testing.T, db *bun.DB) { … })
//	}
package dbtest
