package profiles_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// head returns the first n bars of s.
func head(s profiles.Asset, n int) profiles.Asset {
	b := s.Bars
	return profiles.Asset{ID: s.ID, Symbol: s.Symbol, Bars: ohlcv.Series{Dates: b.Dates[:n], High: b.High[:n], Low: b.Low[:n], Close: b.Close[:n]}}
}

// computeFrom runs ComputeAllFrom on one series and state, against peers.
func computeFrom(t *testing.T, u *profiles.Universe, s profiles.Asset, prev *profiles.State) (profiles.Profile, *profiles.State, bool) {
	t.Helper()
	var p profiles.Profile
	var next *profiles.State
	var inc bool
	err := u.ComputeAllFrom([]profiles.Asset{s}, []*profiles.State{prev}, profiles.Config{}, 1,
		func(_ int, q profiles.Profile, st *profiles.State, incremental bool, err error) bool {
			if err != nil {
				t.Fatal(err)
			}
			p, next, inc = q, st, incremental
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	return p, next, inc
}

// full returns ComputeAll's profile of s.
func full(t *testing.T, u *profiles.Universe, s profiles.Asset) profiles.Profile {
	t.Helper()
	var p profiles.Profile
	if err := u.ComputeAll([]profiles.Asset{s}, profiles.Config{}, 1, func(_ int, q profiles.Profile, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		p = q
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// roundTrip encodes and decodes st, as the database does between days.
func roundTrip(t *testing.T, st *profiles.State) *profiles.State {
	t.Helper()
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out profiles.State
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary of MarshalBinary: %v", err)
	}
	return &out
}

// TestComputeAllFromMatchesFull appends one bar a day for 160 days (month
// ends, regime changes and the whole warm-up of the 252-day rules among
// them) to a series with volatile and trending stretches, updates its
// profile from the state of the day before each time (through the
// state's binary form), and compares it field by field with the full
// computation, within 1e-9.
func TestComputeAllFromMatchesFull(t *testing.T) {
	rng := newRand(43)
	ret := gbmReturns(rng, 600, 0.0004, 0.012)
	for i := 200; i < 260; i++ {
		ret[i] = 0.004 + 0.05*rng.NormFloat64() // a volatile stretch
	}
	for i := 300; i < 380; i++ {
		ret[i] = 0.006 + 0.008*rng.NormFloat64() // a trend
	}
	s := series(fromReturns(50, ret))
	s.ID = "self"
	peerA, peerB := series(fromReturns(20, gbmReturns(newRand(1), 600, 0, 0.01))), series(fromReturns(30, ret))
	peerA.ID, peerB.ID = "a", "b"
	u, err := profiles.NewUniverse([]profiles.Asset{peerA, peerB, s})
	if err != nil {
		t.Fatal(err)
	}
	approx := cmpopts.EquateApprox(0, 1e-9)
	_, st, inc := computeFrom(t, u, head(s, 440), nil)
	if inc {
		t.Fatal("the first profile, with no state, says it was updated incrementally")
	}
	for n := 441; n <= 600; n++ {
		got, next, inc := computeFrom(t, u, head(s, n), roundTrip(t, st))
		if !inc {
			t.Fatalf("%d bars: the state of %d bars was not used", n, n-1)
		}
		if diff := cmp.Diff(full(t, u, head(s, n)), got, approx); diff != "" {
			t.Fatalf("%d bars: incremental profile differs from the full one (-full +incremental):\n%s", n, diff)
		}
		st = next
	}
}

// TestComputeAllFromFallsBack checks that a state that does not match
// the series is not used: a close changed in the past (as the adjustment
// for a split changes every earlier close), two new bars, a bar inserted
// in the past, and another Config; the profile is then the full one.
func TestComputeAllFromFallsBack(t *testing.T) {
	s := series(fromReturns(40, gbmReturns(newRand(7), 420, 0.0003, 0.015)))
	u, err := profiles.NewUniverse(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, st, _ := computeFrom(t, u, head(s, 400), nil)

	split := head(s, 401)
	split.Bars.Close = append([]float64(nil), split.Bars.Close...)
	for i := range 300 {
		split.Bars.Close[i] /= 2 // a 2:1 split on day 300, back-adjusted
	}
	inserted := head(s, 401)
	inserted.Bars.Dates = append(inserted.Bars.Dates[:0:0], inserted.Bars.Dates...)
	copy(inserted.Bars.Dates[100:], s.Bars.Dates[101:402]) // day 100 dropped: later bars move one index down
	cases := []struct {
		name string
		s    profiles.Asset
	}{
		{"split adjusts history", split},
		{"two new bars", head(s, 402)},
		{"bar missing in the past", inserted},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, _, inc := computeFrom(t, u, tt.s, st)
			if inc {
				t.Fatal("a state that does not match was used")
			}
			if diff := cmp.Diff(full(t, u, tt.s), got); diff != "" {
				t.Errorf("fallback profile differs from the full one:\n%s", diff)
			}
		})
	}
	t.Run("another config", func(t *testing.T) {
		var inc bool
		err := u.ComputeAllFrom([]profiles.Asset{head(s, 401)}, []*profiles.State{st}, profiles.Config{Horizon: 10}, 1,
			func(_ int, _ profiles.Profile, _ *profiles.State, incremental bool, err error) bool {
				inc = incremental
				return err == nil
			})
		if err != nil || inc {
			t.Errorf("ComputeAllFrom with another Config: err %v, incremental %v; want nil, false", err, inc)
		}
	})
}

// TestStateUnmarshalRejects checks that data that is not a whole state of
// this format does not decode.
func TestStateUnmarshalRejects(t *testing.T) {
	s := series(fromReturns(40, gbmReturns(newRand(9), 300, 0, 0.01)))
	u, _ := profiles.NewUniverse(nil)
	_, st, _ := computeFrom(t, u, s, nil)
	b, _ := st.MarshalBinary()
	bad := [][]byte{nil, {}, {2}, b[:len(b)-1], append(append([]byte(nil), b...), 0)}
	wrongFormat := append([]byte(nil), b...)
	wrongFormat[0] = 9
	bad = append(bad, wrongFormat)
	for i, data := range bad {
		var got profiles.State
		if err := got.UnmarshalBinary(data); err == nil {
			t.Errorf("case %d: UnmarshalBinary of %d bytes succeeded, want an error", i, len(data))
		}
	}
}
