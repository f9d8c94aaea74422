// Package profiledb builds the analytics profiles of the assets of a
// database with the engine of package profiles, and stores them.
//
// [Build] computes the profiles of every asset of a database and stores
// them, incrementally:
//
//	res, err := profiledb.Build(ctx, marketdata.NewStore(db), profiledb.NewStore(db),
//		profiledb.BuildConfig{})                   // All: true to rebuild every asset
//	fmt.Println(res)                              // profiles: 3 built, 64 up to date, …
//
// It reads every asset's price version, then its prices back-adjusted
// for splits and dividends (marketdata.Store.AdjustedPriceColumns; as
// traded with BuildConfig.Unadjusted), on GOMAXPROCS goroutines; every asset
// with prices is a peer, so the profiles.Universe is built once over the whole
// database. The assets to build are those whose stored profile was built
// from another price version (or that have none), in the shard asked for
// ([ShardOf], the FNV-1a hash of the asset id modulo the number of
// shards, so that processes can split the work and an asset keeps its
// shard as others come and go). They are computed on GOMAXPROCS
// goroutines and stored in batches of [SaveBatch], each one statement and
// so one transaction. Assets with fewer than profiles.MinBars bars are listed in
// [BuildResult].Short, those the engine refuses in Failed; neither fails
// the build. The version is read before the prices, so a profile is never
// labelled with a version newer than its data. Saving corporate actions
// bumps the price version too, so a new split or dividend rebuilds the
// asset's profile like new prices do. Correlations are as fresh
// as the build that computed them: an incremental build does not redo an
// unchanged asset whose peers changed (BuildConfig.All does).
//
// Each profile is stored with the profiles.State it leaves (column
// state, a versioned binary form), and [Build] updates the profile of an
// asset whose prices gained one day since from it, with
// profiles.Universe.ComputeAllFrom ([BuildResult].Incremental counts
// them); any other change of its prices (a corporate action that adjusts
// its history, a bar written in the past) and BuildConfig.All compute the
// profile in full.
//
// The table profiles holds one row per asset: the price version the
// profile was built from, the date of its last bar, its JSON form as TEXT
// on both databases (nothing queries inside it, and PostgreSQL's JSONB
// would reorder its keys and reformat its numbers, so the API would no
// longer serve the bytes the engine wrote), and updated_at, the time it
// was computed, which the API shows as updatedAt. [Store.Save] never
// replaces a row with one built from an older price version, so two
// builds racing leave the fresher profile.
package profiledb
