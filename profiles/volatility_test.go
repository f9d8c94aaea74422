package profiles_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tradekit/tradekit/profiles"
)

var approx = cmpopts.EquateApprox(0, 1e-9)

func TestVolatilityExact(t *testing.T) {
	// Log returns alternating +a, -a: every 20-day window holds ten of each,
	// mean 0, sample variance 20a²/19, so every reading is
	// sqrt(252) * a * sqrt(20/19); all readings equal gives percentile 100.
	const a = 0.01
	r := make([]float64, 400)
	for i := 1; i < len(r); i++ {
		r[i] = a
		if i%2 == 0 {
			r[i] = -a
		}
	}
	p, err := profiles.Compute(series(fromReturns(100, r)), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	v := math.Sqrt(252) * a * math.Sqrt(20.0/19)
	want := profiles.Volatility{Current: v, Avg30d: v, Avg90d: v, Percentile: 100}
	if diff := cmp.Diff(want, p.Volatility, approx); diff != "" {
		t.Errorf("volatility mismatch (-want +got):\n%s", diff)
	}
}

func TestVolatilityGBM(t *testing.T) {
	// 40 GBM paths with annual sigma 0.30. The mean of the 40 current
	// readings has a standard error of about 0.30*0.16/sqrt(40) ≈ 0.008;
	// each avg90d averages ~110 days of returns, standard error ≈ 0.02.
	const sigma = 0.30
	var sumCur float64
	const paths = 40
	for i := range paths {
		r := gbmReturns(newRand(uint64(100+i)), 400, 0.0003, sigma/math.Sqrt(252))
		p, err := profiles.Compute(series(fromReturns(100, r)), nil, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		v := p.Volatility
		sumCur += v.Current
		if math.Abs(v.Avg90d-sigma) > 0.08 {
			t.Errorf("path %d: avg90d %.3f, want %.2f ± 0.08", i, v.Avg90d, sigma)
		}
		if v.Percentile < 0 || v.Percentile > 100 {
			t.Errorf("path %d: percentile %v outside [0,100]", i, v.Percentile)
		}
	}
	if got := sumCur / paths; math.Abs(got-sigma) > 0.03 {
		t.Errorf("mean current vol %.4f, want %.2f ± 0.03", got, sigma)
	}
}

func TestVolatilityPercentile(t *testing.T) {
	// 300 quiet days (0.5%) then 100 loud ones (2%): the current 20-day
	// reading is above every quiet reading and near the middle of the loud
	// ones, so its percentile lies between 300/380 and 100.
	r := gbmReturns(newRand(9), 300, 0, 0.005)
	r = append(r, gbmReturns(newRand(10), 100, 0, 0.02)[1:]...)
	r = append(r, 0)
	p, err := profiles.Compute(series(fromReturns(100, r[:400])), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Volatility.Percentile; got < 100*280.0/380 || got > 100 {
		t.Errorf("percentile %.1f, want in [%.1f, 100]", got, 100*280.0/380)
	}
	// The loud regime's volatility is 0.02*sqrt(252) ≈ 0.317.
	if got := p.Volatility.Current; got < 0.2 || got > 0.45 {
		t.Errorf("current %.3f, want 0.317 within [0.2, 0.45]", got)
	}
}
