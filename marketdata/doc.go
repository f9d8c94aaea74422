// Package marketdata holds Tradekit's market data: exchanges, assets with
// their company profiles and latest fundamentals, the three-level industry
// tree, indexes with point-in-time constituents, and daily OHLCV prices.
//
// A [Store] reads and writes all of it on a *bun.DB or inside a bun.Tx,
// with one SQL text for PostgreSQL and SQLite:
//
//	st := marketdata.NewStore(db)
//	a, err := st.AssetBySymbol(ctx, "acme")         // symbols ignore case
//	ps, err := st.Prices(ctx, a.ID, from, to)        // oldest first, bounds included
//	members, err := st.IndexAssets(ctx, indexID, asOf) // constituents on a date
//
// # Model
//
// Exchanges are the venues of package calendar ([calendar.Exchanges]),
// inserted by the schema migration; their holidays are computed by rule
// ([Holidays]), never stored. Assets belong to one exchange and optionally
// one node of the industry tree (sector > industry group > industry); an
// industry node's asset count counts the assets at the node and anywhere
// below it.
//
// An index's membership is a set of periods [From, To): an asset is a
// constituent on the dates d with From <= d < To (To empty: still a
// member). Asking for the constituents on a past date therefore answers
// with the index as it was then, free of survivorship bias.
//
// Prices are one record per asset and date, with decimal prices
// (PostgreSQL NUMERIC(38,18), SQLite TEXT) that round-trip exactly and an
// integer volume. Price lists are returned oldest first (ascending date),
// the order backtests and indicators consume.
//
// # Import
//
// [ReadPricesCSV] reads daily bars from CSV (columns by name, every bar
// checked with [Price.Validate], errors with line numbers as
// *[ParseError]); [ImportPrices] stores them for a symbol, creating the
// asset when it is unknown; [ImportReference] loads industries, assets,
// indexes, constituents, profiles and fundamentals from CSV or JSON.
// [InConnTx] runs an import in one transaction, with COPY on PostgreSQL.
// IMPORT.md in this directory documents the file formats and the demo
// data set of package demo.
//
// Package marketdata/bulk loads many assets' prices in one run, near the
// speed of a raw bulk load of the same rows, through a [Loader]: the
// Loader writes rows in the database's load format on one connection
// (COPY on PostgreSQL, statements prepared once on SQLite) and owns the
// SQL of that path, while package bulk reads, parses and decides where
// each row goes; its doc describes the method.
//
// # Read replicas
//
// [Reads] runs the read-only queries a server answers market data with
// through a [ReadFunc], which database.Replicas provides: on a PostgreSQL
// streaming replica that is within its bound on lag, or on the primary.
// The price reads that feed caches keyed by price version take the
// version the caller holds (read on the primary, or from [Versions]) and
// run on a replica only once it has replayed that version, so a cache
// never keeps an older replica's prices under a newer version.
//
// # Ids
//
// Ids are name-based UUIDs (version 5) in [Namespace]: an exchange, asset,
// index or industry created from a symbol or name gets the same id in
// every database; a price record's id encodes its asset and date
// ([PriceID]) and is not stored, so re-importing a date keeps its id.
//
// # Errors
//
// Lookups of a missing row return an error wrapping [tradekit.ErrNotFound];
// bad arguments wrap [tradekit.ErrInvalid].
package marketdata
