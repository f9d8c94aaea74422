// Package demo generates and loads Tradekit's demo data set: a fictional,
// deterministic market universe for trying the API and the library without
// a data licence. Its prices are SYNTHETIC: they describe no real security.
//
//	set, err := demo.Generate(demo.Config{}) // the standard set, bit for bit
//	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
//		return demo.Load(ctx, st, set) // all or nothing
//	})
//
// # Contents
//
// 67 assets on the exchanges of package calendar: 46 stocks of fictional
// companies (NYSE, NASDAQ, LSE, XETRA, TSX, ASX, JPX, HKEX), 6 fictional
// ETFs, 6 FX pairs (real currency names, synthetic rates; listed on LSE and
// quoted every weekday except 1 January and 25 December), 5 fictional
// crypto coins (on CRYPTO, every day) and 4 commodity spot series (on NYSE
// days). Daily bars run from 2016-01-01 to 2026-10-30 on each exchange's
// trading days, with prices rounded to the asset's tick (2 decimals;
// whole yen on JPX; 4 for the two cheapest coins; 5 decimals for FX, 3
// for yen pairs). FX rates revert slowly towards their first value.
//
// Every stock has a company profile and fundamentals derived from its
// last simulated close; the industry tree has 11 sectors, 20 industry
// groups and 46 industries with our own names. Four indexes (US 15,
// Europe 6, Asia-Pacific 8, Global 25) hold the largest stocks by
// simulated market capitalisation, rebalanced on the first NYSE session
// of every year, so their membership changes over time and is stored
// with effective dates.
//
// A few corporate actions show how adjusted series work: SHPX splits
// 3-for-1 (ex 2021-06-01) and WSFT 2-for-1 (ex 2023-03-15), so their
// traded prices drop by the ratio at the ex-date and their back-adjusted
// prices follow the simulated path; NRGD and the ETF TKUS pay quarterly
// dividends (declared only: their traded prices are the simulated ones).
// [Set].Actions lists them, and [Load] stores them.
//
// # Method
//
// Prices follow a regime-switching geometric Brownian motion with
// GARCH(1,1) volatility clustering (see [Generate] for the formulas). A
// Markov chain of market regimes (bull, bear, range) shared by all assets
// moves drifts and volatility together; each asset loads on a common
// market shock with its own correlation, and has its own slowly switching
// trend. Everything is drawn from one injected random source
// (math/rand/v2 PCG, seeded with [Seed1] and [Seed2] by default) in a
// fixed order, so the same seed gives the same data set on every machine.
//
// Loading is idempotent: every row is upserted on its natural key with
// name-based ids, and unchanged price rows are not rewritten. [IsLoaded]
// tells whether a database holds the set, by its indexes.
package demo
