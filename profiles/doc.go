// Package profiles computes the analytics profile of an asset from its daily
// prices: market regimes, strategy affinity, indicator sensitivity,
// volatility, seasonality and correlations with other assets. It is a pure
// engine on gonum: values in, values out, no context, database or clock.
//
//	u, err := profiles.NewUniverse(peers)        // once per batch: peers' dates and log closes
//	p, err := u.Compute(profiles.Asset{
//		ID: id, Bars: bars,                       // an ohlcv.Series: Dates, High, Low, Close
//	}, profiles.Config{})                         // zero Config = documented defaults
//	b, _ := json.Marshal(p)                       // the API's Asset AI profile fields
//
// [Compute] does both steps for one asset. A [Universe] is immutable and may
// be shared by goroutines profiling many assets at once. Input errors (too
// few bars, unequal lengths, dates out of order, non-positive closes, a
// Config out of range) wrap [github.com/tradekit/tradekit.ErrInvalid]; at least [MinBars] bars
// are needed.
//
// Package profiles/profiledb computes and keeps the profiles of a whole
// database's assets with this engine (see "Building and storage" below).
//
// # Notation
//
// C[t] is the close of bar t (oldest first), r[t] = ln C[t] - ln C[t-1] the
// daily log return, n the number of bars. Every rule decides at the close
// of day t from data up to t only, and a position taken at t earns r[t+1]
// (no look-ahead). Defaults of [Config] are shown in brackets.
//
// # Volatility
//
// The realised volatility over the last w = VolWindow [20] returns, annualised
// with 252 trading days:
//
//	σ[t] = sqrt(252) * s(r[t-w+1..t]),  s = sample standard deviation (n-1)
//
// volatility.current is σ at the last bar; avg30d and avg90d are the means of
// σ over the last 30 and 90 bars (trading days); percentile is
//
//	100 * #{τ : σ[τ] <= σ[n-1]} / #{τ : σ[τ] defined}
//
// the empirical CDF ([gonum.org/v1/gonum/stat.CDF], [gonum.org/v1/gonum/stat.Empirical]) of today's reading among
// every reading of the asset's history, from 0 to 100; readings within a
// relative 1e-9 of today's count as equal. Volatilities are fractions: 0.2
// is 20% a year.
//
// # Regimes
//
// Each day from t = max(W, w) on is labelled from two statistics.
//
// Trend: the t-statistic of the mean daily log return over the last
// W = TrendWindow [50] returns,
//
//	T[t] = mean(r[t-W+1..t]) / (s(r[t-W+1..t]) / sqrt(W))
//	     = (ln C[t] - ln C[t-W]) / (s * sqrt(W))
//
// Under the null of independent returns with no drift T follows Student's t
// with W-1 degrees of freedom, so |T| measures how far the window's drift
// stands out of its own noise. This is used rather than the t-statistic of a
// regression of log price on time, which is spurious on a random walk (its
// residuals are autocorrelated and the statistic grows with W). A window
// with no dispersion gives T = ±Inf by the sign of its drift.
//
// Volatility: the ratio of today's σ[t] to the median of all readings
// σ[w..t] so far (an expanding, point-in-time median, kept in a Fenwick
// tree), trusted once VolMinHistory [60] readings exist. A ratio rather than
// a raw percentile: the top decile of a constant-volatility series is
// sampling noise, while 1.75 times the median is more than four standard errors
// of a 20-day estimate (s/σ has a standard error of about 1/sqrt(2(w-1)) ≈
// 0.16) and marks a real expansion.
//
// Rules with hysteresis (a Schmitt trigger on each statistic), in order:
//
//	volatile       if ratio >= VolEnter [1.75], or already volatile and ratio >= VolExit [1.4]
//	trending_up    if already up and T >= TrendExit [0.75], or T >= TrendEnter [1.5]
//	trending_down  if already down and T <= -TrendExit, or T <= -TrendEnter
//	ranging        otherwise
//
// At the entry level a driftless random walk shows |T| >= 1.5 on about 14%
// of days, while a drift with an annualised Sharpe ratio of
// 1.5*sqrt(252/W) ≈ 3.4 is called a trend half of the time or more.
// Finally a run of one label shorter than MinRun [10] days is merged into the
// run before it (the first run is kept whatever its length): a change of
// regime counts once it has lasted MinRun days, and is then dated from its
// first day. regimePatterns.history lists the runs, oldest first, with from
// and to the first and last day of each (to is null for the ongoing last
// run); current is the last run's regime.
//
// # Strategy affinity
//
// Four daily long/short rules, each position p[t] in {-1, 0, +1} decided at
// the close of t and earning p[t]*r[t+1], from the first day the rule is
// defined to the end of the data; flat days earn 0. No costs are charged.
//
//	momentum        p[t] = sign(ln C[t-21] - ln C[t-252])       12-1 month time-series momentum
//	meanReversion   z = (C[t] - SMA20[t]) / sd20[t]             Bollinger z-score, population sd
//	                enter long at z <= -1, short at z >= +1; exit a long at z >= 0, a short at z <= 0
//	breakout        long when C[t] > max(H[t-20..t-1]), short when C[t] < min(L[t-20..t-1]),
//	                else hold (a 20-day Donchian stop-and-reverse)
//	trendFollowing  p[t] = sign(SMA50[t] - SMA200[t])
//
// Each rule's annualised Sharpe ratio S = sqrt(252) * mean(p[t]*r[t+1]) /
// s(p[t]*r[t+1]) (0 when there is no dispersion: no position, no evidence)
// is mapped to a score by the logistic function
//
//	score = 1 / (1 + exp(-S))
//
// so 0.5 is no edge, S = 1 gives 0.73, S = 2 gives 0.88, S = -1 gives 0.27.
// The backtests are in-sample and gross of costs: they describe how the
// asset's past prices rewarded each style, not a forecast.
//
// # Indicator sensitivity
//
// For each indicator a signal x[t] is built from data up to t, oriented the
// way the indicator is conventionally read (higher = more bullish), and its
// predictive score is Spearman's rank correlation (the Pearson correlation
// of average ranks, [gonum.org/v1/gonum/stat.Correlation]) between x[t] and the forward log
// return
//
//	f[t] = ln C[t+h] - ln C[t],  h = Horizon [5]
//
// over every t where both are defined (overlapping windows; 0 when fewer
// than 30 pairs). The score is signed, in [-1, 1]: positive when the
// indicator read the textbook way ranked the forward returns right, negative
// when it worked the other way round, near 0 when it carried no information.
//
//	RSI        -RSI(14)                          oscillator, contrarian
//	STOCH      -slow %K(14, 3, 3)                oscillator, contrarian
//	WILLR      -Williams %R(14)                  oscillator, contrarian
//	CCI        -CCI(20)                          oscillator, contrarian
//	BB         -%b = -(C - lower)/(upper - lower), Bollinger(20, 2), contrarian
//	MACD       histogram(12, 26, 9) / C          momentum
//	SMA_CROSS  SMA50 / SMA200 - 1                trend
//	ROC        ROC(20)                           momentum
//
// The indicators are those of package indicators (TA-Lib's values); High and
// Low default to Close when not given.
//
// For the oscillators (RSI, STOCH, WILLR, CCI), optimalThresholds is the
// pair (oversold, overbought) that maximises the annualised Sharpe ratio of
// the daily rule "long the next day when the oscillator is <= oversold,
// short when >= overbought, flat otherwise", over every day where the
// oscillator is defined (flat days count as 0, so rarely triggered levels
// are not favoured by a few lucky days). The grid, in each oscillator's own
// scale, with the conventional pair kept on ties and when nothing beats it:
//
//	RSI, STOCH  oversold 10, 15, …, 45   overbought 55, 60, …, 90       conventional 30/70 (RSI), 20/80 (STOCH)
//	WILLR       oversold -90, …, -55     overbought -45, …, -10        conventional -80/-20
//	CCI         oversold -250, …, -50    overbought 50, …, 250 (by 25) conventional -100/100
//
// Like the affinity, this search is in-sample.
//
// # Seasonality
//
// A month's return is the log return between the last closes of that
// calendar month and of the month before (the first month of the data,
// which has no earlier close, is left out; the last may be partial). For
// each calendar month the mean over the years is taken; bestMonths lists
// the Months [3] highest, best first, and worstMonths the Months lowest,
// worst first (fewer when under 2*Months calendar months have data, so no
// month is in both lists). dayOfWeekBias is the mean daily log return r[t]
// over the days t falling on each weekday, keyed "monday" … (a Monday's
// return spans the weekend); only weekdays present in the data appear.
//
// # Correlations
//
// Over the asset's last CorrWindow [252] daily returns (one trading year),
// each peer is aligned on the dates both have a close: for consecutive
// common dates d1 < d2 the returns are ln C(d2) - ln C(d1) for both, so a
// day one of them did not trade folds into the next common return for both
// and the pairs stay synchronous. The Pearson correlation of the pairs
// ([gonum.org/v1/gonum/stat.Correlation]) is kept when there are at least MinOverlap [126]
// pairs and both sides move; the TopPeers [10] highest correlations are
// listed, highest first (ties by asset id). A peer whose ID equals the
// series' ID is skipped. [NewUniverse] turns the peers' dates into day
// numbers and their closes into logs once, so a batch over the universe
// pays only a merge of two sorted date lists per pair.
//
// [Universe.ComputeAll] profiles a whole batch at market scale. The
// universe's calendar window is the last CorrWindow+1 dates that most
// peers end with. For a series and a peer that both have a close on every
// one of those dates and none after, the merge above pairs the same
// CorrWindow returns, so their correlation is the dot product
//
//	ρ = z_a · z_p,  z = (r - mean(r)) / ||r - mean(r)||
//
// of standardised return windows: one matrix product Z_series Z_peers^T
// ([gonum.org/v1/gonum/blas/blas64.Gemm]) in blocks of 256 series, which
// bounds its memory to 256 × peers values. A series that is itself a peer
// (same ID, same window: a market profiled against its own assets) shares
// its row with that peer, and the product of two such series is taken
// once for both, which halves the product when all of them are. Every
// other pair (a gap in the
// window, a history ending earlier or later) is merged as above; the two
// rankings are joined, and the result equals [Universe.Compute]'s within
// rounding (1e-9 is tested). The rest of each profile is computed once
// per series, on GOMAXPROCS goroutines.
//
// # Incremental updates
//
// A profile computed by [Universe.ComputeAllFrom] comes with a [State]:
// what the next day's update needs besides the prices. When the series
// is the state's series plus one bar (same bars before it, bit for bit,
// checked by a hash of their dates, closes, highs and lows; the same
// resolved Config), the profile is updated from it; otherwise (no state, a
// bar inserted or changed in the past, as the back-adjustment for a new
// split changes every earlier close, several new bars, another Config)
// it is computed in full. Either way it equals the full computation within
// 1e-9, and the parts that recompute do so by the very same code.
//
// Updated from the new bar (the state keeps what the rest of the history
// contributed):
//
//	regimes           the hysteresis state machine continues from the last
//	                  day's state: one trend statistic T[n-1] (W returns) and
//	                  one volatility ratio; the merged runs before the last
//	                  raw run are kept, and the last raw run extended or
//	                  closed (the minimum-run rule only ever looks at the run
//	                  just closed and the one before it)
//	strategy affinity running sums s, Σx², k of each rule's daily returns,
//	                  plus the one return of the position held over the last
//	                  day; the Sharpe ratio from sums equals the two-pass one
//	                  within rounding (about 1e-14)
//	optimalThresholds running sums of each grid level (long and short parts),
//	                  plus the last day's term: the same sums in the same order
//	seasonality       sums of the completed months and of each weekday, plus
//	                  the new day; the last, partial month is added on output
//
// Recomputed over the series, because the new bar changes them beyond
// one term:
//
//	volatility        σ is a rolling window (the last 20 returns), but its
//	                  percentile and the regime's median are over every reading
//	                  so far: the σ series is recomputed (O(n·w), the same
//	                  code as the full computation) and sorted once for both,
//	                  rather than kept in the state (2,520 values an asset)
//	predictiveScore   Spearman's rho: one new pair shifts the rank of every
//	                  pair above it, so the ranks are taken again (by a bucket
//	                  sort on the values' range, a few values a bucket); the
//	                  oscillators themselves (RSI's Wilder smoothing, MACD's
//	                  EMAs) depend on the whole history and are recomputed
//	                  with it, O(n) each, into buffers that a worker reuses
//	                  from one asset to the next
//	correlations      the last CorrWindow returns of every peer change with
//	                  the day: one matrix product over the new windows, as
//	                  [Universe.ComputeAll] does
//	strategy positions the mean-reversion and trend rules' indicators
//	                  (Bollinger, SMA 50/200) are recomputed, O(n) each, to
//	                  get the last day's position (their running sums start
//	                  from the first bar, so a tail alone would not give the
//	                  same bits); the momentum position is two closes, and
//	                  the breakout's that of the last breakout, found walking
//	                  back from the last day (a channel's highs and lows are
//	                  maxima and minima: the same bits from any start)
//
// # Building and storage
//
// This package is the engine alone: no database, no clock, no logging.
// Package profiles/profiledb builds the profiles of every asset of a
// database and stores them (profiledb.Build, profiledb.Store).
package profiles
