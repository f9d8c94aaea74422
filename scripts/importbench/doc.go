// Command importbench measures `tradekit import prices --file` side by
// side with a raw bulk load of the same rows into a table of the same
// shape, on SQLite and on PostgreSQL.
//
// It generates N symbols × M daily bars (a seeded random walk), writes
// them as a multi-symbol CSV (or a directory of SYMBOL.csv files, or
// either gzipped), and then, for each database, times:
//
//   - tradekit import prices --file PATH into a freshly migrated database
//     (the binary built from ./cmd/tradekit, stdout not a terminal, the
//     profile rebuild included; it is also timed alone from its log line);
//   - the raw load: `sqlite3 .import` into a fresh file holding only a
//     table shaped like prices (TEXT columns, PRIMARY KEY (asset_id, date),
//     WITHOUT ROWID), and psql `\copy` into a fresh table shaped like
//     prices (UUID, DATE, NUMERIC(38,18), BIGINT, the same primary key),
//     of the same rows with the asset ids in place of the symbols.
//
// Usage (from the repository root):
//
//	go run ./scripts/importbench [-symbols 200] [-bars 2520] [-layout file|dir] [-gz] [-db sqlite,postgres] [-pg DSN] [-runs N] [-baseline BIN]
//
// Each line gives one measurement and the load average when it began. The
// machine may be busy with other work, so absolute times vary; the ratio
// of the two sides of one line is what compares. With -runs N each
// database is measured N times, into fresh databases, the import and the
// raw load taking turns to go first, and the median ratio is printed.
//
// Without -pg, a throwaway PostgreSQL server is started from the
// machine's binaries (as the tests do) with fsync off; the raw load runs
// on the same server. Needs sqlite3 and psql on the PATH.
package main
