package profiles_test

import (
	"math"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// benchUniverse returns m assets of n daily bars each, built from a
// one-factor model (r = beta*market + idiosyncratic) so correlations vary,
// as peers and as series to profile.
func benchUniverse(m, n int) ([]profiles.Asset, []profiles.Asset) {
	dates := tradingDates(day0, n)
	mkt := gbmReturns(newRand(1000), n, 0.0003, 0.01)
	series := make([]profiles.Asset, m)
	peers := make([]profiles.Asset, m)
	for i := range m {
		rng := newRand(uint64(2000 + i))
		beta := 0.3 + 1.4*rng.Float64()
		r := make([]float64, n)
		for t := 1; t < n; t++ {
			r[t] = beta*mkt[t] + 0.012*rng.NormFloat64()
		}
		c := fromReturns(20+float64(i%200), r)
		h, l := make([]float64, n), make([]float64, n)
		for t := range c {
			w := math.Abs(0.01 * rng.NormFloat64())
			h[t], l[t] = c[t]*(1+w), c[t]*(1-w)
		}
		id := string(rune('A'+i%26)) + string(rune('A'+i/26%26)) + string(rune('0'+i/676))
		series[i] = profiles.Asset{ID: id, Bars: ohlcv.Series{Dates: dates, High: h, Low: l, Close: c}}
		peers[i] = profiles.Asset{ID: id, Symbol: id, Bars: ohlcv.Series{Dates: dates, Close: c}}
	}
	return series, peers
}

// BenchmarkCompute profiles one asset of 1, 10 and 40 years of daily bars
// against 500 peers of 10 years, the universe built beforehand (as a batch
// over the universe does).
func BenchmarkCompute(b *testing.B) {
	_, peers := benchUniverse(500, 2520)
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		n    int
	}{{"1y", 253}, {"10y", 2520}, {"40y", 10080}} {
		s, _ := benchUniverse(1, tc.n)
		b.Run(tc.name+"/500peers", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := u.Compute(s[0], profiles.Config{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkComputeStandalone is one call of [profiles.Compute] on 10 years
// of bars with 500 peers of 10 years: the universe is built inside.
func BenchmarkComputeStandalone(b *testing.B) {
	series, peers := benchUniverse(500, 2520)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := profiles.Compute(series[0], peers, profiles.Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewUniverse prepares 500 peers of 10 years.
func BenchmarkNewUniverse(b *testing.B) {
	_, peers := benchUniverse(500, 2520)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := profiles.NewUniverse(peers); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUniverse500x10y builds the profiles of a whole universe of 500
// assets of 10 years, each correlated with the other 499, on all cores: one
// universe, then a pool of GOMAXPROCS workers over the assets. One op is
// the whole universe.
func BenchmarkUniverse500x10y(b *testing.B) {
	series, peers := benchUniverse(500, 2520)
	b.ReportAllocs()
	for b.Loop() {
		u, err := profiles.NewUniverse(peers)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]profiles.Profile, len(series))
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					p, err := u.Compute(series[i], profiles.Config{})
					if err != nil {
						b.Error(err)
						continue
					}
					out[i] = p
				}
			}()
		}
		for i := range series {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
	}
}

// BenchmarkComputeAll profiles a whole universe of 10 years of bars with
// Universe.ComputeAll at 100 and 1,000 assets, each correlated with all
// the others: one op is the whole universe, universe preparation
// included.
func BenchmarkComputeAll(b *testing.B) {
	for _, m := range []int{100, 1000} {
		series, peers := benchUniverse(m, 2520)
		b.Run(strconv.Itoa(m)+"x10y", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				u, err := profiles.NewUniverse(peers)
				if err != nil {
					b.Fatal(err)
				}
				err = u.ComputeAll(series, profiles.Config{}, 0, func(_ int, _ profiles.Profile, err error) bool {
					if err != nil {
						b.Error(err)
					}
					return true
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
