package profiles

import (
	"fmt"

	"github.com/tradekit/tradekit"
)

// Config holds the parameters of the methods. The zero value of a field
// means its default (shown in brackets); [DefaultConfig] returns every
// default filled in.
type Config struct {
	// TrendWindow is W, the number of daily returns behind the trend
	// statistic [50].
	TrendWindow int
	// TrendEnter and TrendExit are the trend statistic's entry and exit
	// levels: a trend starts at |T| >= TrendEnter and lasts while its
	// signed T stays >= TrendExit [1.5, 0.75]. TrendExit <= TrendEnter.
	TrendEnter, TrendExit float64
	// VolWindow is the number of daily returns behind the realised
	// volatility [20].
	VolWindow int
	// VolEnter and VolExit are the ratios of realised volatility to its
	// long-run median at which a volatile regime starts and ends
	// [1.75, 1.4]. 1 < VolExit <= VolEnter.
	VolEnter, VolExit float64
	// VolMinHistory is the number of volatility readings needed before the
	// long-run median is trusted and a day may be volatile [60].
	VolMinHistory int
	// MinRun is the shortest run of days a new regime must last to be
	// kept; shorter runs are merged into the regime before them [10].
	MinRun int
	// Horizon is the forward-return horizon, in trading days, of the
	// indicator predictive scores [5].
	Horizon int
	// Months is how many months bestMonths and worstMonths each list [3].
	Months int
	// CorrWindow is the number of the asset's most recent daily returns
	// the correlations are measured over [252].
	CorrWindow int
	// MinOverlap is the fewest common-date returns a peer needs to be
	// ranked [126].
	MinOverlap int
	// TopPeers is how many peers the correlations list at most [10].
	TopPeers int
}

// DefaultConfig returns the configuration used for a zero [Config].
func DefaultConfig() Config {
	return Config{
		TrendWindow: 50, TrendEnter: 1.5, TrendExit: 0.75,
		VolWindow: 20, VolEnter: 1.75, VolExit: 1.4, VolMinHistory: 60,
		MinRun: 10, Horizon: 5, Months: 3,
		CorrWindow: 252, MinOverlap: 126, TopPeers: 10,
	}
}

// resolve fills zero fields with defaults and checks the ranges.
func (c Config) resolve() (Config, error) {
	d := DefaultConfig()
	ints := []struct {
		name string
		v    *int
		def  int
		min  int
	}{
		{"TrendWindow", &c.TrendWindow, d.TrendWindow, 2},
		{"VolWindow", &c.VolWindow, d.VolWindow, 2},
		{"VolMinHistory", &c.VolMinHistory, d.VolMinHistory, 1},
		{"MinRun", &c.MinRun, d.MinRun, 1},
		{"Horizon", &c.Horizon, d.Horizon, 1},
		{"Months", &c.Months, d.Months, 1},
		{"CorrWindow", &c.CorrWindow, d.CorrWindow, 2},
		{"MinOverlap", &c.MinOverlap, d.MinOverlap, 2},
		{"TopPeers", &c.TopPeers, d.TopPeers, 1},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < f.min {
			return c, fmt.Errorf("profiles: config %s is %d, must be at least %d: %w", f.name, *f.v, f.min, tradekit.ErrInvalid)
		}
	}
	floats := []struct {
		name string
		v    *float64
		def  float64
	}{
		{"TrendEnter", &c.TrendEnter, d.TrendEnter},
		{"TrendExit", &c.TrendExit, d.TrendExit},
		{"VolEnter", &c.VolEnter, d.VolEnter},
		{"VolExit", &c.VolExit, d.VolExit},
	}
	for _, f := range floats {
		if *f.v == 0 {
			*f.v = f.def
		}
		if !(*f.v > 0) || *f.v > 1e6 {
			return c, fmt.Errorf("profiles: config %s is %v, must be a positive number: %w", f.name, *f.v, tradekit.ErrInvalid)
		}
	}
	if c.TrendExit > c.TrendEnter {
		return c, fmt.Errorf("profiles: config TrendExit %v exceeds TrendEnter %v: %w", c.TrendExit, c.TrendEnter, tradekit.ErrInvalid)
	}
	if c.VolExit > c.VolEnter || c.VolExit <= 1 {
		return c, fmt.Errorf("profiles: config needs 1 < VolExit <= VolEnter, got VolExit %v, VolEnter %v: %w", c.VolExit, c.VolEnter, tradekit.ErrInvalid)
	}
	if c.MinOverlap > c.CorrWindow {
		return c, fmt.Errorf("profiles: config MinOverlap %d exceeds CorrWindow %d: %w", c.MinOverlap, c.CorrWindow, tradekit.ErrInvalid)
	}
	return c, nil
}

// minBars is the fewest bars a series needs under c.
// MinBars returns the fewest daily bars [Compute] accepts with c: the
// package's [MinBars], or c's longest window plus one. The error wraps
// [tradekit.ErrInvalid] when c is out of range.
func (c Config) MinBars() (int, error) {
	r, err := c.resolve()
	if err != nil {
		return 0, err
	}
	return r.minBars(), nil
}

func (c Config) minBars() int {
	return max(MinBars, c.TrendWindow+1, c.VolWindow+1)
}
