package backtestdb

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

func TestSample(t *testing.T) {
	tests := []struct {
		name   string
		n, max int
		want   []int
	}{
		{name: "none", n: 0, max: 3, want: []int{}},
		{name: "fewer than max", n: 3, max: 5, want: []int{0, 1, 2}},
		{name: "as many as max", n: 4, max: 4, want: []int{0, 1, 2, 3}},
		// k * 9 / 3 for k = 0…3
		{name: "evenly", n: 10, max: 4, want: []int{0, 3, 6, 9}},
		// k * 10 / 3 = 0, 3.33, 6.67, 10, rounded
		{name: "rounded", n: 11, max: 4, want: []int{0, 3, 7, 10}},
		{name: "ends only", n: 1000, max: 2, want: []int{0, 999}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sample(tt.n, tt.max)); diff != "" {
				t.Errorf("sample(%d, %d) mismatch (-want +got):\n%s", tt.n, tt.max, diff)
			}
		})
	}
}

// mustLoaded returns a universe of n assets with days daily bars each,
// open and close alternating so that every bar's close is above 0.
func mustLoaded(tb testing.TB, n, days int) *Loaded {
	tb.Helper()
	l := &Loaded{Adjusted: true}
	d := calendar.NewDate(1990, 1, 1)
	for range days {
		l.Days = append(l.Days, d)
		d = d.AddDays(1)
	}
	for i := range n {
		bars := ohlcv.Series{Dates: l.Days}
		for j := range days {
			p := 100 + float64((i+j)%7)
			bars.Open, bars.High, bars.Low = append(bars.Open, p), append(bars.High, p+1), append(bars.Low, p-1)
			bars.Close, bars.Volume = append(bars.Close, p+0.5), append(bars.Volume, 1000)
		}
		l.Assets = append(l.Assets, backtest.Asset{Symbol: string(rune('A' + i)), Bars: bars})
	}
	return l
}

// TestRunBounded checks that a result's document is bounded whatever the
// run: a strategy that enters and leaves every asset every other day over
// 6,000 days makes about 3,000 trades an asset, and lists the last
// MaxTrades of them and MaxEquityPoints days, the first and last days
// included, while its stats count every trade.
func TestRunBounded(t *testing.T) {
	c, err := backtest.Strategy{Entry: "close > 0", Exit: "close > 0", MaxPositions: 1000}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	l := mustLoaded(t, 4, 6000)
	rec, err := Run(context.Background(), c, Universe{Symbols: []string{"A", "B", "C", "D"}}, l, backtest.Config{}, uuid.New(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	type day struct {
		Date calendar.Date `json:"date"`
	}
	var doc struct {
		Equity          []day            `json:"equity"`
		EquityDays      int              `json:"equityDays"`
		Trades          []map[string]any `json:"trades"`
		TradesTruncated int              `json:"tradesTruncated"`
		Stats           struct {
			Trades int `json:"trades"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(rec.Document), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Equity) != MaxEquityPoints || doc.EquityDays != 6000 || doc.Equity[0].Date != l.Days[0] ||
		doc.Equity[len(doc.Equity)-1].Date != l.Days[len(l.Days)-1] {
		t.Errorf("equity: %d days listed of %d, from %v to %v; want %d of 6000, from %v to %v", len(doc.Equity), doc.EquityDays,
			doc.Equity[0].Date, doc.Equity[len(doc.Equity)-1].Date, MaxEquityPoints, l.Days[0], l.Days[len(l.Days)-1])
	}
	if doc.Stats.Trades < 4*2900 || len(doc.Trades) != MaxTrades || doc.TradesTruncated != doc.Stats.Trades-MaxTrades {
		t.Errorf("trades: %d listed, %d truncated, %d in the stats; want %d listed and the rest truncated", len(doc.Trades),
			doc.TradesTruncated, doc.Stats.Trades, MaxTrades)
	}
	// The listed trades are the last ones: the last exits on the last day.
	if last := doc.Trades[len(doc.Trades)-1]["exitDate"]; last != l.Days[len(l.Days)-1].String() {
		t.Errorf("the last trade listed exits on %v, want the last day %v", last, l.Days[len(l.Days)-1])
	}
	if n := len(rec.Document); n > 2<<20 {
		t.Errorf("the document is %d bytes, more than 2 MiB", n)
	}

	// A short run lists everything.
	short := mustLoaded(t, 1, 50)
	rec, err = Run(context.Background(), c, Universe{Symbols: []string{"A"}}, short, backtest.Config{}, uuid.New(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	doc.Equity, doc.Trades = nil, nil
	if err := json.Unmarshal([]byte(rec.Document), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Equity) != 50 || doc.EquityDays != 50 || doc.TradesTruncated != 0 || len(doc.Trades) != doc.Stats.Trades ||
		!slices.Contains(doc.Equity, day{short.Days[1]}) {
		t.Errorf("a short run: %d of %d days, %d trades listed of %d, %d truncated", len(doc.Equity), doc.EquityDays, len(doc.Trades),
			doc.Stats.Trades, doc.TradesTruncated)
	}
}
