package profiles_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tradekit/tradekit/profiles"
)

var (
	oscillators = []string{profiles.IndicatorRSI, profiles.IndicatorStoch, profiles.IndicatorWillR, profiles.IndicatorCCI}
	allIndics   = append(slices.Clone(oscillators), profiles.IndicatorMACD, profiles.IndicatorBB, profiles.IndicatorSMACross, profiles.IndicatorROC)
)

func TestSensitivityKeys(t *testing.T) {
	p, err := profiles.Compute(series(fromReturns(100, gbmReturns(newRand(30), 600, 0, 0.01))), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.IndicatorSensitivity) != len(allIndics) {
		t.Errorf("got %d indicators, want %d", len(p.IndicatorSensitivity), len(allIndics))
	}
	for _, k := range allIndics {
		s, ok := p.IndicatorSensitivity[k]
		if !ok {
			t.Errorf("%s missing", k)
			continue
		}
		if isOsc := slices.Contains(oscillators, k); isOsc != (s.OptimalThresholds != nil) {
			t.Errorf("%s: thresholds %v, want present = %v", k, s.OptimalThresholds, isOsc)
		}
		if th := s.OptimalThresholds; th != nil && th.Oversold >= th.Overbought {
			t.Errorf("%s: oversold %v >= overbought %v", k, th.Oversold, th.Overbought)
		}
	}
}

func TestSensitivityScores(t *testing.T) {
	const n = 2520
	// OU log price with a 5-day half-life: a high reading of any oscillator
	// means the price is above its mean, and it reverts, so the contrarian
	// reading ranks the forward returns right (positive score) and the
	// 20-day rate of change, read as momentum, ranks them wrong.
	rng := newRand(31)
	phi := math.Pow(0.5, 1.0/5)
	c := make([]float64, n)
	x := 0.0
	for i := range c {
		x = phi*x + 0.01*rng.NormFloat64()
		c[i] = 100 * math.Exp(x)
	}
	p, err := profiles.Compute(series(c), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range append(oscillators, profiles.IndicatorBB) {
		if got := p.IndicatorSensitivity[k].PredictiveScore; got < 0.2 {
			t.Errorf("mean-reverting: %s score %.3f, want >= 0.2", k, got)
		}
	}
	if got := p.IndicatorSensitivity[profiles.IndicatorROC].PredictiveScore; got > -0.1 {
		t.Errorf("mean-reverting: ROC score %.3f, want <= -0.1", got)
	}

	// A driftless random walk: no signal predicts. With ~2500 overlapping
	// 5-day returns the standard error of rho is about sqrt(5/2500) ≈ 0.045.
	p, err = profiles.Compute(series(fromReturns(100, gbmReturns(newRand(32), n, 0, 0.01))), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range allIndics {
		if got := p.IndicatorSensitivity[k].PredictiveScore; math.Abs(got) > 0.15 {
			t.Errorf("random walk: %s score %.3f, want |score| <= 0.15", k, got)
		}
	}
}
