// Package dbcopy copies a whole Tradekit database into an empty one,
// SQLite to PostgreSQL or back; `tradekit db copy` runs it.
//
//	res, err := dbcopy.Copy(ctx, src, dst, dbcopy.Options{})
//	if errors.Is(err, dbcopy.ErrNotEmpty) { … } // dst held rows: nothing written
//	fmt.Println(len(res.Tables), res.Rows)
//
// The method:
//
//   - Both databases must have exactly this binary's migrations applied
//     (bun_migrations), and their catalogs (sqlite_master and its pragmas;
//     information_schema and pg_constraint) must list the same tables with
//     the same columns, matched by name. Every table is copied but bun's
//     migration bookkeeping, which each database keeps for itself.
//   - Each column has a kind (text, uuid, decimal, integer, float, boolean,
//     timestamp, date, bytes), PostgreSQL's type deciding where SQLite
//     says only TEXT. Values travel in one canonical form per kind and are
//     written as the application writes them: decimals as
//     decimal.Decimal's String (TEXT on SQLite, NUMERIC on PostgreSQL),
//     timestamps in UTC to the microsecond in bun's format, dates as
//     YYYY-MM-DD, booleans as 0 and 1 on SQLite. Sealed secrets are text
//     and are copied byte for byte; [FindSealed] finds one for a caller to
//     check its key.
//   - The source is read in one read-only transaction (REPEATABLE READ on
//     PostgreSQL); the target is written in one transaction, tables in
//     foreign-key order (a table that references itself parents first), in
//     batches of about 1 MiB of SQL: multi-row INSERTs on SQLite, INSERT …
//     SELECT FROM unnest of one array literal per column on PostgreSQL.
//     Plain SQL, so that any driver under bun sends it as it is. On
//     PostgreSQL the foreign keys of the copied tables are dropped before
//     the load and added back after it, within the transaction, which
//     checks every row in one join rather than one query per row.
//   - Before the commit every table is read back in the same transaction,
//     and its row count and checksum must equal the source's. The checksum
//     is the sum modulo 2^256 of the SHA-256 of each row's canonical form:
//     independent of the order rows come in, so that collations do not
//     matter.
//   - A target "empty" may hold the rows its migrations inserted (the
//     plans, the exchanges): they are compared with a freshly migrated
//     database's and replaced by the source's.
//   - PostgreSQL sequences behind copied columns (serial, identity) are
//     moved past the largest value copied. Tradekit's tables have none.
//
// On any error, when the context ends, or when the process is killed,
// the target's transaction does not commit and the target is left as it
// was: empty, with its migrations.
package dbcopy
