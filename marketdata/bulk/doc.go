// Package bulk imports the daily prices of many assets in one run, near
// the speed of a raw bulk load of the same rows (psql \copy, sqlite3
// .import). It is what `tradekit import prices --file` runs without
// --symbol, and what package feed stores a vendor's days with.
//
//	res, err := bulk.Import(ctx, db, "prices/", bulk.Options{
//		NewAssets: marketdata.PriceImport{Type: marketdata.Stock, Currency: "USD", Exchange: "NYSE"},
//	})
//	// res.Rows, res.Created, res.Failed (each with its file and line), res.NonTradingDays …
//
// # Input
//
// [Import] reads a CSV file with a symbol (or ticker) column, a directory
// of such files or of per-symbol SYMBOL.csv files (walked recursively in
// lexical order, hidden entries skipped: see [Files]), any of them
// gzip-compressed (.csv.gz), or Polygon-style day flat files (ticker,
// volume, open, close, high, low, window_start, …), recognised by their
// window_start column, whose bars are dated by the UTC date of that
// instant. Columns are matched by name as every import of package
// marketdata matches them ([marketdata.ColumnKey]); a file separated by
// semicolons or tabs is refused in the same words
// ([marketdata.DelimiterError]). A file without a volume column (FX and
// crypto files often have none) gets volume 0, counted in
// [Result.NoVolumeFiles].
//
// # The method
//
// The run has three stages, which overlap:
//
//  1. Read. A dispatcher starts one reader per file, at most
//     Options.Workers at a time, in file order. A reader decompresses its
//     file if needed and cuts it into chunks of about 1 MiB of whole
//     lines.
//  2. Parse. Options.Workers goroutines turn each chunk into a batch in
//     the database's load format, checking every row as
//     [marketdata.Price.Validate] does. Plain decimals of up to 15
//     significant digits are read and compared without package decimal,
//     and written in decimal's canonical text; anything else takes the
//     exact decimal path. On PostgreSQL a batch is COPY's text format,
//     which the server parses as it does for psql's \copy; on SQLite the
//     text of each row's fields back to back, ready to bind.
//  3. Write. One goroutine takes the files in order and each file's
//     batches in order, and writes them through a [marketdata.Loader] on
//     one connection, in transactions of about Options.CommitRows rows.
//     The Loader owns the SQL; this package decides what goes where.
//
// An asset is fresh in a file when it had no prices before the run and
// the file is the first with rows for it: none of its rows there can
// conflict, since a date repeated within a file is refused first. On
// PostgreSQL a batch whose assets are all fresh is COPYed straight into
// prices, as a raw load would be; other batches are COPYed into a
// temporary table and upserted with one INSERT … ON CONFLICT. Where the
// role may (a superuser, or one granted SET on the parameter), the writes
// to prices run with session_replication_role = replica (SET LOCAL), which
// keeps the foreign-key trigger of prices from checking every row against
// assets, the costliest part of a COPY: the writer creates each new asset
// before its rows (with the triggers on) and locks the stored ones FOR KEY
// SHARE, once per transaction, as those triggers would. On SQLite the rows
// go through a few prepared statements, each compiled once per run and
// then only bound and stepped: a plain INSERT of eight rows (one, under a
// savepoint) for fresh assets, and the same with ON CONFLICT … DO UPDATE
// for the others. A statement never holds two assets' rows, so its count
// of changed rows tells which assets changed.
//
// # All or nothing, per file
//
// Each file is written inside a savepoint (on SQLite, a file that opens
// its transaction goes without one: its failure rolls back a transaction
// that holds nothing else). A bad row, or a date repeated for a symbol
// within a file, rolls its file back whole, assets it created included,
// and the run goes on with the next file; the file and line are in
// [Result.Failed], and Import's error wraps [tradekit.ErrInvalid]. A
// failure of the database ends the run, rolling back the open
// transaction; what earlier transactions committed stays.
//
// # Idempotence
//
// Unknown symbols get a new asset from Options.NewAssets, with the
// name-based id of its symbol ([marketdata.AssetID]), so the same files
// create the same assets in any database. Rows are keyed by asset and
// date: a date already stored is updated, and a row stored as it is is
// not written at all, so importing the same files again changes nothing,
// price versions included. The price version of each asset whose prices
// changed goes up once per transaction, which tells every cache keyed by
// it (computed series, stored profiles, the server's documents) to
// recompute.
//
// # Corporate actions
//
// The import stores prices as traded. Splits and dividends are stored
// apart ([marketdata.ImportActions], or package feed's run), and adjusted
// series are computed from both when read ([marketdata.Store.AdjustedPrices]),
// so importing prices before or after their actions gives the same
// adjusted series: a change of either bumps the asset's price version.
//
// # Dates the exchange does not trade
//
// Rows dated on a day their asset's exchange holds no session by its
// calendar (weekends, holidays) are imported all the same, and counted in
// [Result.NonTradingRows] with the earliest listed: such dates often mean
// a wrong exchange or date column.
package bulk
