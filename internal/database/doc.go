// Package database opens Tradekit's database from a DSN and applies its
// schema migrations.
//
// A DSN starting with postgres:// or postgresql:// selects PostgreSQL
// (uptrace/bun's pgdialect over jackc/pgx: one pgxpool.Pool per database,
// under database/sql through pgx's stdlib); anything else is the path of
// an embedded SQLite file (an optional "sqlite:" prefix is stripped).
// SQLite needs nothing installed: it runs in process through
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
// # PostgreSQL, directly or through a transaction pooler
//
// Nothing relies on a server session outliving its transaction, so a
// transaction pooler (PgBouncer in transaction mode, RDS Proxy, the
// Supabase and Neon poolers) may stand between Tradekit and its server:
//
//   - bun formats every value into its statements, which run unnamed,
//     parsed and planned each time (pgx's exec mode; behind a pooler
//     that keeps no prepared statement, its simple protocol, as psql
//     sends them);
//   - [Prepared] statements take parameters, and are prepared once per
//     connection, by a name of their own (the DSN's
//     default_query_exec_mode: cache_statement by default), so that
//     PostgreSQL only binds and executes them, alone or in a batch:
//     the hot statements of an order and its fill are Prepared
//     ([UpdateColumns], [ColumnsUpdate], [InsertRows], [Prepared.With]);
//     UUIDs and decimals among their parameters are encoded directly,
//     in binary (see params.go). A pooler that
//     keeps no prepared statement across transactions (PgBouncer before
//     1.21, or later without max_prepared_statements) needs
//     cache_describe, which [Open]'s pool also switches to by itself the
//     first time a server has lost one (a batch that began a transaction
//     and met that is sent again, unnamed); then each Prepared statement
//     runs as the call of a PL/pgSQL function made for it, which keeps
//     its plan in the server's session, as a named prepared statement
//     would (see functions.go), but for [InsertRows]', which run as text;
//   - locks are transaction-level advisory locks ([Lock]), and
//     [Migrate]'s is held by an open transaction;
//   - LISTEN runs on a connection of its own outside the pool
//     ([NewListener], [Listen]), to the server of [Options.ListenDSN]
//     when the DSN leads to a pooler, and checks that notifications
//     arrive; where they cannot, the callers poll and the log says so
//     once.
//
// [RunInTx] runs the short transactions of the order path with fewer
// round trips: BEGIN goes with the transaction's first statement,
// [LockUser]'s lock with the next one, a read included (its rows are the
// batch's last result), and the last writes, whose results the
// transaction does not read ([ExecWithNext]), with the COMMIT, each group
// as one pgx batch. [CopyFrom] streams rows to COPY … FROM STDIN.
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
