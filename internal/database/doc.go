// Package database opens Tradekit's database from a DSN and applies its
// schema migrations.
//
// A DSN starting with postgres:// or postgresql:// selects PostgreSQL
// (uptrace/bun's pgdialect over pgdriver); anything else is the path of an
// embedded SQLite file (an optional "sqlite:" prefix is stripped). SQLite
// needs nothing installed: it runs in process through
// modernc.org/sqlite, chosen by bun's sqliteshim.
//
// SQLite is opened in WAL mode with a busy timeout, foreign keys on, and
// every transaction begun IMMEDIATE, so that concurrent writers queue for the
// write lock instead of failing with "database is locked" when a read
// transaction tries to upgrade itself. Within the process the writers of
// a file queue at a gate in Go (a transaction that may write holds it
// from BEGIN to its end), so the next starts the moment the one before
// commits instead of in SQLite's busy handler, which sleeps 1, 2, 5 ms
// and more between tries; the busy timeout still covers other processes.
//
// [RunInTx] runs the short transactions of the order path with fewer
// round trips on PostgreSQL: pgdriver sends each statement as a simple
// query, which may hold several statements, so BEGIN goes with the
// transaction's first statement, [LockUser]'s lock with the next one, and
// the last writes, whose results the transaction does not read
// ([ExecWithNext]), with the COMMIT. In READ COMMITTED each statement of
// such a message reads the database as it is when that statement starts,
// so a read sent after the lock sees what the lock's previous holder
// committed.
//
// [Prepared] queries run in those transactions as statements prepared
// once per connection: PostgreSQL parses and plans a query sent as text
// each time, which for a query joining a few tables costs more than
// running it. The PREPARE goes in the same message as the first EXECUTE,
// so the round trips stay saved; outside a transaction, Prepared.Scan and
// Prepared.Exec take a connection of the pool for the statement. On
// SQLite, a Prepared runs as text.
//
// The schema is one ordered list of SQL files per dialect, embedded in the
// binary (migrations/postgres and migrations/sqlite, same file names).
// [Migrate] applies the pending ones, each in its own transaction. On
// PostgreSQL it first takes an advisory lock, so several instances starting
// at once apply each migration exactly once.
//
// [Replicas] sends read-only queries to PostgreSQL streaming replicas
// (serve --db-replica) while they are within a bound on lag
// (--replica-max-lag), and to the primary otherwise. Lag is measured by
// WAL position, not by the time of the last replayed transaction, which
// says nothing when the primary is idle: every second the primary's
// pg_current_wal_lsn() is sampled and kept with its time for a little
// longer than the bound, and each replica's pg_last_wal_replay_lsn() is
// read. A replica that has replayed up to the latest sample is current
// (lag 0, however idle); one behind has replayed at least what the
// primary had at the newest sample it has reached, so its lag is the time
// since that sample. A replica that is unreachable, not in recovery, or
// lagging past the bound is skipped until it catches up; a read that
// fails on one with a connection error is run again on the primary
// ([Replicas.Read]).
//
//	db, err := database.Open(ctx, "tradekit.db", database.Options{})
//	if err != nil { … }
//	defer db.Close()
//	if _, err := database.Migrate(ctx, db); err != nil { … }
//
// [Options] tunes the PostgreSQL connections: its zero value sets no
// socket timeout, for batch work whose statements may run for long; a
// server bounds each statement's wait with Options.Timeout.
package database
