package profiles

import (
	"fmt"
	"math"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/ohlcv"
)

// MinBars is the fewest daily bars [Compute] accepts: one trading year of
// daily returns (252) plus the first close. Below it the 12-1 month
// momentum rule, the 200-day trend rule and the one-year correlation window
// cannot be formed. A [Config] with longer windows raises the minimum to
// the longest window plus one.
const MinBars = 253

// Regime is the label of one day in [Regimes]: one of [TrendingUp],
// [TrendingDown], [Ranging] or [Volatile].
type Regime string

// The four regimes a day can be in. See the package documentation for the
// rules that assign them.
const (
	TrendingUp   Regime = "trending_up"
	TrendingDown Regime = "trending_down"
	Ranging      Regime = "ranging"
	Volatile     Regime = "volatile"
)

// Asset is an asset to profile, or a peer of the universe to correlate
// with: its identifier, its symbol and its daily bars.
//
// Bars.Dates must be strictly ascending trading days, and Bars.Close as
// long as them. For an asset to profile, Close must hold finite prices
// above zero; High and Low may be nil, in which case Close stands in for
// both; Open and Volume are not read and may be nil. A peer needs only
// Dates and Close, and a close that is not finite and above zero counts
// as a missing day.
//
// ID, when not empty, identifies the asset: a peer with the same ID is
// left out of the asset's correlations. Symbol names a peer in its
// correlation; the profile of an asset does not use its own.
type Asset struct {
	ID, Symbol string
	Bars       ohlcv.Series
}

// Profile is the analytics profile of one asset, computed by [Compute] or
// [Universe.Compute]. Its JSON form has the field names of the API's Asset
// AI profile; assetId, symbol and updatedAt are the caller's to add.
type Profile struct {
	// AsOf is the date of the last bar the profile was computed from.
	// It is not part of the JSON form.
	AsOf calendar.Date `json:"-"`

	Regimes              Regimes                `json:"regimePatterns"`
	StrategyAffinity     Affinity               `json:"strategyAffinity"`
	IndicatorSensitivity map[string]Sensitivity `json:"indicatorSensitivity"`
	Volatility           Volatility             `json:"volatility"`
	Seasonality          Seasonality            `json:"seasonality"`
	Correlations         []Correlation          `json:"correlations"`
}

// Regimes is the regime classification of an asset's history: Current is
// the regime of the last bar, History the contiguous runs of one regime,
// oldest first, the last of them ongoing.
type Regimes struct {
	Current Regime      `json:"current"`
	History []RegimeRun `json:"history"`
}

// RegimeRun is a contiguous run of days in one regime, from From to To
// inclusive. To is nil for the ongoing run (the last one). In JSON the
// dates are written "YYYY-MM-DD" and a nil To as null.
type RegimeRun struct {
	Regime Regime         `json:"regime"`
	From   calendar.Date  `json:"from"`
	To     *calendar.Date `json:"to"`
}

// Affinity holds the scores, from 0 to 1, of four simple daily strategies
// backtested on the asset: the logistic function of each one's annualised
// Sharpe ratio, so 0.5 means no edge, above 0.5 a profitable strategy.
type Affinity struct {
	Momentum       float64 `json:"momentum"`
	MeanReversion  float64 `json:"meanReversion"`
	Breakout       float64 `json:"breakout"`
	TrendFollowing float64 `json:"trendFollowing"`
}

// Sensitivity is how well one indicator's signal ranked the asset's
// forward returns. PredictiveScore is a signed Spearman rank correlation in
// [-1, 1]: positive when the indicator, read the textbook way, pointed the
// right way. OptimalThresholds is set for oscillators only.
type Sensitivity struct {
	PredictiveScore   float64     `json:"predictiveScore"`
	OptimalThresholds *Thresholds `json:"optimalThresholds,omitempty"`
}

// Thresholds are an oscillator's oversold and overbought levels, in the
// oscillator's own scale (0–100 for RSI and Stochastic, -100–0 for
// Williams %R, unbounded around 0 for CCI).
type Thresholds struct {
	Oversold   float64 `json:"oversold"`
	Overbought float64 `json:"overbought"`
}

// Volatility is the asset's annualised realised volatility (a fraction:
// 0.2 is 20%): Current over the last 20 trading days, Avg30d and Avg90d the
// means of that figure over the last 30 and 90 trading days, and
// Percentile, from 0 to 100, the share of all days in the asset's history
// whose 20-day volatility was at or below Current.
type Volatility struct {
	Current    float64 `json:"current"`
	Avg30d     float64 `json:"avg30d"`
	Avg90d     float64 `json:"avg90d"`
	Percentile float64 `json:"percentile"`
}

// Seasonality holds the calendar months with the highest and lowest mean
// monthly log return (English month names, best or worst first), and the
// mean daily log return per weekday keyed by the lowercase weekday name
// ("monday", …); only weekdays that occur in the data are present.
type Seasonality struct {
	BestMonths    []string           `json:"bestMonths"`
	WorstMonths   []string           `json:"worstMonths"`
	DayOfWeekBias map[string]float64 `json:"dayOfWeekBias"`
}

// Correlation is one peer's Pearson correlation with the asset's daily log
// returns over the last year.
type Correlation struct {
	AssetID     string  `json:"assetId"`
	Symbol      string  `json:"symbol"`
	Correlation float64 `json:"correlation"`
}

// Compute returns the profile of the asset s, with its correlations to
// peers. It gives the same profile as [NewUniverse] followed by
// [Universe.Compute], but prepares only the part of each peer inside the
// asset's correlation window (and checks only that part's dates); to profile
// many assets against the same peers, build the [Universe] once instead.
//
// Compute returns an error wrapping [tradekit.ErrInvalid] if s or a peer is
// malformed (unequal lengths, dates not strictly ascending, a close that is
// not a finite positive number), if s has fewer bars than [MinBars] (or
// than cfg's longest window plus one), or if cfg is out of range.
func Compute(s Asset, peers []Asset, cfg Config) (Profile, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return Profile{}, err
	}
	a, err := newAsset(s.Bars, cfg)
	if err != nil {
		return Profile{}, err
	}
	u, err := newUniverse(peers, a.days[a.corrStart(cfg)])
	if err != nil {
		return Profile{}, err
	}
	return u.profile(a, s.ID, cfg), nil
}

// Compute returns the profile of the asset s, with its correlations to the
// universe's peers (s's own ID left out). It returns an error wrapping
// [tradekit.ErrInvalid] under the conditions listed for [Compute]. Compute
// may be called from several goroutines at once.
func (u *Universe) Compute(s Asset, cfg Config) (Profile, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return Profile{}, err
	}
	a, err := newAsset(s.Bars, cfg)
	if err != nil {
		return Profile{}, err
	}
	return u.profile(a, s.ID, cfg), nil
}

func (u *Universe) profile(a *asset, id string, cfg Config) Profile {
	p := profileBase(a, cfg)
	p.Correlations = u.correlationsSkipping(a, id, cfg, nil)
	return p
}

// profileBase returns the profile of a without its correlations.
func profileBase(a *asset, cfg Config) Profile {
	vol := rollingVol(a.ret, cfg.VolWindow)
	return Profile{
		AsOf:                 a.dates[a.n-1],
		Regimes:              regimes(a, vol, cfg),
		StrategyAffinity:     affinity(a),
		IndicatorSensitivity: sensitivity(a, cfg),
		Volatility:           volatility(vol),
		Seasonality:          seasonality(a, cfg),
	}
}

// corrStart returns the index of the first close of the correlation window.
func (a *asset) corrStart(cfg Config) int {
	return a.n - 1 - min(cfg.CorrWindow, a.n-1)
}

// asset is a validated series with the derived columns every method uses.
type asset struct {
	n         int
	dates     []calendar.Date
	days      []int32 // civil days since 1970-01-01
	close     []float64
	high, low []float64
	logc      []float64 // ln close
	ret       []float64 // ret[t] = logc[t] - logc[t-1]; ret[0] = NaN
	sc        *scratch  // where the columns above and the profile's buffers come from; nil: the heap
	smas      []sma     // the SMAs of close computed so far
}

// sma is the simple moving average of an asset's closes over period bars.
type sma struct {
	period int
	v      []float64
}

// sma returns [indicators.SMA] of a's closes over period bars, computed
// on the first call for that period (the sensitivity's SMA cross and the
// trend-following rule both read SMA 50 and SMA 200). The result must
// not be modified.
func (a *asset) sma(period int) []float64 {
	for _, m := range a.smas {
		if m.period == period {
			return m.v
		}
	}
	v := a.sc.floats(a.n)
	indicators.SMAInto(v, a.close, period)
	a.smas = append(a.smas, sma{period, v})
	return v
}

// newAsset validates s and derives its columns, on the heap.
func newAsset(s ohlcv.Series, cfg Config) (*asset, error) {
	return newAssetIn(s, cfg, nil)
}

// newAssetIn is [newAsset] taking the derived columns, and every buffer
// of the asset's profile after them, from sc.
func newAssetIn(s ohlcv.Series, cfg Config, sc *scratch) (*asset, error) {
	n := len(s.Dates)
	if len(s.Close) != n {
		return nil, fmt.Errorf("profiles: %d dates but %d closes: %w", n, len(s.Close), tradekit.ErrInvalid)
	}
	for _, c := range []struct {
		name string
		x    []float64
	}{{"open", s.Open}, {"high", s.High}, {"low", s.Low}, {"volume", s.Volume}} {
		if c.x != nil && len(c.x) != n {
			return nil, fmt.Errorf("profiles: %d dates but %d %s values: %w", n, len(c.x), c.name, tradekit.ErrInvalid)
		}
	}
	if (s.High == nil) != (s.Low == nil) {
		return nil, fmt.Errorf("profiles: high and low must both be given or both be nil: %w", tradekit.ErrInvalid)
	}
	need := cfg.minBars()
	if n < need {
		return nil, fmt.Errorf("profiles: series has %d daily bars, need at least %d (one trading year of returns): %w", n, need, tradekit.ErrInvalid)
	}
	a := &asset{n: n, dates: s.Dates, close: s.Close, high: s.High, low: s.Low, sc: sc}
	if a.high == nil {
		a.high, a.low = s.Close, s.Close
	}
	a.days = sc.int32s(n)
	a.logc = sc.floats(n)
	a.ret = sc.floats(n)
	for i, d := range s.Dates {
		if prev := s.Dates[max(i-1, 0)]; i > 0 && d.Year == prev.Year && d.Month == prev.Month {
			// Within a month the day number is linear in the day.
			a.days[i] = a.days[i-1] + int32(d.Day-prev.Day)
		} else {
			a.days[i] = dayNumber(d)
		}
		if i > 0 && a.days[i] <= a.days[i-1] {
			return nil, fmt.Errorf("profiles: date %s at index %d does not follow %s: %w",
				d, i, s.Dates[i-1], tradekit.ErrInvalid)
		}
		c := s.Close[i]
		if !(c > 0) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("profiles: close %v on %s is not a positive price: %w", c, d, tradekit.ErrInvalid)
		}
		a.logc[i] = math.Log(c)
		if i == 0 {
			a.ret[i] = math.NaN()
		} else {
			a.ret[i] = a.logc[i] - a.logc[i-1]
		}
	}
	for i := range a.high {
		if math.IsNaN(a.high[i]) || math.IsNaN(a.low[i]) || a.high[i] < a.low[i] {
			return nil, fmt.Errorf("profiles: high %v and low %v on %s are not a valid range: %w",
				a.high[i], a.low[i], s.Dates[i], tradekit.ErrInvalid)
		}
	}
	return a, nil
}

// epoch is day 0 of dayNumber.
var epoch = calendar.NewDate(1970, time.January, 1)

// dayNumber returns d as days since 1970-01-01.
func dayNumber(d calendar.Date) int32 { return int32(d.Sub(epoch)) }
