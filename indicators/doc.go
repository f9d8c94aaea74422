// Package indicators computes technical indicators over float64 price
// series with the values of TA-Lib's C library, in batch and streaming
// form, and resamples daily bars into weeks and months.
//
//	close := []float64{ /* oldest first */ }
//	sma := indicators.SMA(close, 20)           // NaN for the first 19 values
//	macd, signal, hist := indicators.MACD(close, 12, 26, 9)
//
//	s := indicators.NewRSIStream(14)           // one bar at a time
//	v := s.Next(price)                         // commit a closed bar
//	w := s.Peek(lastTrade)                     // value for a forming bar, state unchanged
//
// # Conventions
//
// Every batch function returns slices as long as its input, oldest first,
// holding math.NaN() at the indices where the indicator is not yet defined
// (its warm-up, or "lookback": the number of leading NaNs). A series
// shorter than lookback+1 gives only NaN. A period below the minimum, or
// inputs of unequal length, are programmer errors and panic with a message
// starting "indicators: "; callers that take periods from users validate
// them first. Inputs are read, never modified. Inputs are expected to be
// finite: as in TA-Lib, a NaN input is not skipped, and where it lands in a
// comparison (Highest, Stochastic, …) the stream and batch forms may differ.
//
// Values follow TA-Lib 0.6.0 (default compatibility mode, unstable periods
// 0) to the arithmetic: the same running sums, the same order of
// operations and the same special cases. The tests compare every function
// with a TA-Lib counterpart against reference data made by TA-Lib C itself
// (testdata/talib/gen.js), requiring agreement within 1e-9 relative; on
// that data every value is in fact bit-identical. Special cases kept from TA-Lib: RSI is 0 when
// average gain + loss is below 1e-14; standard deviations are 0 when the
// variance is below 1e-14; Stochastic and WilliamsR are 0 when the range is
// 0; CCI is 0 when the deviation or the mean deviation is 0; MFI is 0 when
// the money flows sum below 1; ROC is 0 when the old value is 0.
//
// Two departures: TA-Lib's MACD with signal period 1 shifts its outputs
// by one bar (its EMA lookback for period 1 is -1); here the signal then
// equals the MACD line. TA-Lib's PLUS_DI/MINUS_DI with period 1 return a
// fraction rather than a percentage; here the DMI family requires period 2
// or more. Where TA-Lib refuses period 1 (SMA, EMA, WMA, SUM, MAX, …) it is
// accepted here with its natural meaning (the input itself, or 0 for a
// standard deviation).
//
// # Indicators and lookbacks (p = period)
//
//	SMA(p)              p-1     mean of the last p values (running sum)
//	EMA(p)              p-1     seed = SMA of the first p; e = (x-e)*k + e, k = 2/(p+1)
//	WMA(p)              p-1     weights 1..p over the last p values, / p(p+1)/2
//	DEMA(p)             2(p-1)  2*e1 - e2, e2 = EMA(e1)
//	TEMA(p)             3(p-1)  e3 + 3*e1 - 3*e2
//	RSI(p)              p       100*g/(g+l), Wilder-smoothed gains and losses, p >= 2
//	ATR(p)              p       TR from bar 1; seed = mean of TR[1..p]; a = (a*(p-1)+TR)/p
//	MACD(f,s,g)         s-1+g-1 EMA(f)-EMA(s), both starting at index s-1; signal = EMA(g) of it
//	BollingerBands(p,k) p-1     SMA ± k*population stddev
//	StdDev(p,n)         p-1     n*sqrt(mean(x²)-mean(x)²)
//	Highest/Lowest(p)   p-1     max/min of the last p values (TA-Lib MAX/MIN)
//	Sum(p)              p-1     sum of the last p values
//	ROC(p), Momentum(p) p       100*(x/x[-p]-1), x - x[-p]
//	Stochastic(k,sk,sd) k-1+sk-1+sd-1  %K = SMA(fast %K, sk), %D = SMA(%K, sd)
//	WilliamsR(p)        p-1     -100*(HH-close)/(HH-LL)
//	CCI(p)              p-1     (tp-SMA(tp))/(0.015*mean |tp-SMA(tp)|), tp = (h+l+c)/3
//	PlusDI/MinusDI(p)   p       100 * Wilder-smoothed ±DM / smoothed TR, p >= 2
//	ADX(p)              2p-1    Wilder average of DX = 100*|+DI - -DI|/(+DI + -DI)
//	OBV                 0       running ± volume by the sign of the close change
//	MFI(p)              p       100*pos/(pos+neg) money flow over p bars
//	ParabolicSAR(a,m)   1       Wilder's SAR (TA-Lib SAR), defaults 0.02 and 0.2
//	Donchian(p)         p-1     highest high, lowest low and their midpoint
//	Keltner(p,m)        p       EMA(close,p) ± m*ATR(p)
//	VWAP                0       cumulative Σ tp*v / Σ v from the first bar (NaN while Σ v = 0)
//	RollingVWAP(p)      p-1     the same over the last p bars
//
// Donchian, Keltner and VWAP have no TA-Lib counterpart; their conventions
// are those above.
//
// # Batch, Into and streams
//
// For the hot paths an XxxInto(dst, …) variant writes into caller-provided
// slices and allocates nothing; Xxx allocates only its outputs and calls
// it. For each indicator a stream type (NewSMAStream, NewMACDStream,
// NewDMIStream, …) takes one bar at a time: Next(bar) commits the bar and
// returns the indicator's value at it, equal to the batch function's value
// at the same index (NaN during the warm-up); Peek(bar) returns what Next
// would return without changing the stream, for a bar that is still
// forming. Streams are not safe for concurrent use.
//
// # Bars and timeframes
//
// The functions take bare columns. Bars with their dates travel as
// ohlcv.Series (github.com/tradekit/tradekit/ohlcv), whose Resample turns
// daily bars into weekly and monthly ones: pass a series' Close (or High,
// Low, …) to any function here.
package indicators
