package profiles_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

func TestComputeErrors(t *testing.T) {
	good := series(fromReturns(100, gbmReturns(newRand(40), 300, 0, 0.01)))
	mod := func(f func(s *profiles.Asset)) profiles.Asset {
		s := good
		s.Bars.Dates = slices.Clone(good.Bars.Dates)
		s.Bars.Close = slices.Clone(good.Bars.Close)
		s.Bars.High = slices.Clone(good.Bars.High)
		s.Bars.Low = slices.Clone(good.Bars.Low)
		f(&s)
		return s
	}
	tests := []struct {
		name    string
		s       profiles.Asset
		cfg     profiles.Config
		wantMsg string
	}{
		{"too short", mod(func(s *profiles.Asset) {
			s.Bars.Dates, s.Bars.Close, s.Bars.High, s.Bars.Low = s.Bars.Dates[:252], s.Bars.Close[:252], s.Bars.High[:252], s.Bars.Low[:252]
		}), profiles.Config{}, "has 252 daily bars, need at least 253"},
		{"longer window raises the minimum", good, profiles.Config{TrendWindow: 400, TrendEnter: 2, TrendExit: 1}, "need at least 401"},
		{"empty", profiles.Asset{}, profiles.Config{}, "need at least 253"},
		{"close length", mod(func(s *profiles.Asset) { s.Bars.Close = s.Bars.Close[1:] }), profiles.Config{}, "closes"},
		{"high length", mod(func(s *profiles.Asset) { s.Bars.High = s.Bars.High[1:] }), profiles.Config{}, "high values"},
		{"high without low", mod(func(s *profiles.Asset) { s.Bars.Low = nil }), profiles.Config{}, "both"},
		{"dates out of order", mod(func(s *profiles.Asset) { s.Bars.Dates[10], s.Bars.Dates[11] = s.Bars.Dates[11], s.Bars.Dates[10] }), profiles.Config{}, "does not follow"},
		{"same day twice", mod(func(s *profiles.Asset) { s.Bars.Dates[11] = s.Bars.Dates[10] }), profiles.Config{}, "does not follow"},
		{"zero close", mod(func(s *profiles.Asset) { s.Bars.Close[5] = 0 }), profiles.Config{}, "not a positive price"},
		{"NaN close", mod(func(s *profiles.Asset) { s.Bars.Close[5] = math.NaN() }), profiles.Config{}, "not a positive price"},
		{"Inf close", mod(func(s *profiles.Asset) { s.Bars.Close[5] = math.Inf(1) }), profiles.Config{}, "not a positive price"},
		{"high below low", mod(func(s *profiles.Asset) { s.Bars.High[5] = s.Bars.Low[5] / 2 }), profiles.Config{}, "not a valid range"},
		{"trend exit above enter", good, profiles.Config{TrendEnter: 1, TrendExit: 2}, "TrendExit"},
		{"vol exit at 1", good, profiles.Config{VolExit: 1}, "VolExit"},
		{"negative top peers", good, profiles.Config{TopPeers: -1}, "TopPeers"},
		{"overlap above window", good, profiles.Config{CorrWindow: 100}, "MinOverlap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := profiles.Compute(tt.s, nil, tt.cfg)
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), "profiles: ") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to start with \"profiles: \" and contain %q", err, tt.wantMsg)
			}
		})
	}
	if _, err := profiles.Compute(good, nil, profiles.Config{}); err != nil {
		t.Errorf("valid series: %v", err)
	}
}

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not an object", v)
	}
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}

// TestProfileJSON checks the field names against the API's Asset AI
// profile (the AssetAIProfile schema of api/openapi.yaml).
func TestProfileJSON(t *testing.T) {
	s := series(fromReturns(100, gbmReturns(newRand(41), 800, 0.0005, 0.015)))
	s.ID = "me"
	peers := []profiles.Asset{{ID: "p1", Symbol: "P1", Bars: ohlcv.Series{Dates: s.Bars.Dates, Close: fromReturns(50, gbmReturns(newRand(42), 800, 0, 0.01))}}}
	p, err := profiles.Compute(s, peers, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		path string
		v    any
		want []string
	}{
		{"profile", m, []string{"correlations", "indicatorSensitivity", "regimePatterns", "seasonality", "strategyAffinity", "volatility"}},
		{"regimePatterns", m["regimePatterns"], []string{"current", "history"}},
		{"strategyAffinity", m["strategyAffinity"], []string{"breakout", "meanReversion", "momentum", "trendFollowing"}},
		{"volatility", m["volatility"], []string{"avg30d", "avg90d", "current", "percentile"}},
		{"seasonality", m["seasonality"], []string{"bestMonths", "dayOfWeekBias", "worstMonths"}},
		{"dayOfWeekBias", m["seasonality"].(map[string]any)["dayOfWeekBias"], []string{"friday", "monday", "thursday", "tuesday", "wednesday"}},
		{"RSI", m["indicatorSensitivity"].(map[string]any)["RSI"], []string{"optimalThresholds", "predictiveScore"}},
		{"RSI thresholds", m["indicatorSensitivity"].(map[string]any)["RSI"].(map[string]any)["optimalThresholds"], []string{"overbought", "oversold"}},
		{"MACD", m["indicatorSensitivity"].(map[string]any)["MACD"], []string{"predictiveScore"}},
		{"correlation", m["correlations"].([]any)[0], []string{"assetId", "correlation", "symbol"}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, keys(t, c.v)); diff != "" {
			t.Errorf("%s keys mismatch (-want +got):\n%s", c.path, diff)
		}
	}
	hist := m["regimePatterns"].(map[string]any)["history"].([]any)
	first := hist[0].(map[string]any)
	if diff := cmp.Diff([]string{"from", "regime", "to"}, keys(t, first)); diff != "" {
		t.Errorf("history item keys mismatch (-want +got):\n%s", diff)
	}
	if got, want := first["from"], s.Bars.Dates[50].String(); got != want {
		t.Errorf("first from = %v, want %v", got, want)
	}
	if last := hist[len(hist)-1].(map[string]any); last["to"] != nil {
		t.Errorf("last to = %v, want null", last["to"])
	}

	var back profiles.Profile
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	p.AsOf = calendar.Date{}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("JSON round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestRegimeRunJSON(t *testing.T) {
	to := calendar.NewDate(2024, 3, 1)
	tests := []struct {
		run  profiles.RegimeRun
		json string
	}{
		{profiles.RegimeRun{Regime: profiles.Ranging, From: calendar.NewDate(2024, 1, 2), To: &to},
			`{"regime":"ranging","from":"2024-01-02","to":"2024-03-01"}`},
		{profiles.RegimeRun{Regime: profiles.TrendingUp, From: to},
			`{"regime":"trending_up","from":"2024-03-01","to":null}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.run)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal = %s, %v; want %s", b, err, tt.json)
		}
		var back profiles.RegimeRun
		if err := json.Unmarshal([]byte(tt.json), &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.run, back); diff != "" {
			t.Errorf("round trip mismatch (-want +got):\n%s", diff)
		}
	}
	var r profiles.RegimeRun
	if err := json.Unmarshal([]byte(`{"regime":"ranging","from":"2024/01/02","to":null}`), &r); !errors.Is(err, tradekit.ErrInvalid) {
		t.Errorf("bad date: err = %v, want ErrInvalid", err)
	}
}

// TestDegenerateSeries checks that flat and noise-free prices give a
// profile with no NaN (which JSON cannot carry).
func TestDegenerateSeries(t *testing.T) {
	flat := make([]float64, 300)
	for i := range flat {
		flat[i] = 42
	}
	for name, c := range map[string][]float64{
		"flat":       flat,
		"exp growth": fromReturns(10, constant(300, 0.001)),
	} {
		t.Run(name, func(t *testing.T) {
			s := profiles.Asset{Bars: ohlcv.Series{Dates: tradingDates(day0, len(c)), Close: c}}
			p, err := profiles.Compute(s, []profiles.Asset{{ID: "f", Bars: ohlcv.Series{Dates: s.Bars.Dates, Close: c}}}, profiles.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(p); err != nil {
				t.Errorf("Marshal: %v", err)
			}
			if len(p.Correlations) != 0 {
				t.Errorf("correlations %+v, want none (no dispersion)", p.Correlations)
			}
		})
	}
}
