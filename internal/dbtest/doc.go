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
// With TRADEKIT_TEST_PGBOUNCER=1, the PostgreSQL DSNs the tests get go
// through a PgBouncer in transaction pooling mode, as production's often
// do: dbtest starts one (from PATH or /usr/sbin; the variable may also
// name the binary) on a free loopback port in front of the server, and
// stops it when the test binary ends. Creating and migrating the
// databases go to the server directly, and so does [DirectDSN] of a
// test's DSN, for the connections that need a session of their own
// (LISTEN). PgBouncer 1.21 and later pool protocol-level prepared
// statements too (max_prepared_statements, 200 unless
// TRADEKIT_TEST_PGBOUNCER_PREPARED sets it; 0 turns it off); Debian 12's
// 1.18 does not. Asking for PgBouncer when none can be started fails the
// PostgreSQL tests.
//
//	TRADEKIT_TEST_PGBOUNCER=1 go test -run 'TestOrder' ./server
//
// A package that uses dbtest calls [Main] from its TestMain:
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
//
//	func TestStore(t *testing.T) {
//		dbtest.Each(t, func(t *testing.T, db *bun.DB) { … })
//	}
package dbtest
