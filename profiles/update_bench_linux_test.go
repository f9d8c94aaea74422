package profiles_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/tradekit/tradekit/profiles"
)

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkComputeAllFrom profiles 200 assets of 2,521 bars (ten years
// and a day) against each other, in full (no states) and updated from the
// states of their first 2,520 bars, on one goroutine: the per-asset cost
// of a market's daily update, correlations included. It reports the
// elapsed and the CPU time (of the process, user and system) per asset:
// on a machine shared with other work the CPU time is the steadier.
func BenchmarkComputeAllFrom(b *testing.B) {
	const m, n = 200, 2521
	series, peers := benchUniverse(m, n)
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		b.Fatal(err)
	}
	before := make([]profiles.Asset, m)
	for i, s := range series {
		before[i] = head(s, n-1)
	}
	states := make([]*profiles.State, m)
	if err := u.ComputeAllFrom(before, nil, profiles.Config{}, 0, func(i int, _ profiles.Profile, st *profiles.State, _ bool, err error) bool {
		states[i] = st
		return err == nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		states []*profiles.State
	}{{"full", nil}, {"incremental", states}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				inc := 0
				err := u.ComputeAllFrom(series, bc.states, profiles.Config{}, 1, func(_ int, _ profiles.Profile, _ *profiles.State, incremental bool, err error) bool {
					if incremental {
						inc++
					}
					return err == nil
				})
				if err != nil || (bc.states != nil && inc != m) {
					b.Fatalf("err %v, %d of %d updated incrementally", err, inc, m)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*m), "µs/asset")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*m), "cpu-µs/asset")
		})
	}
}
