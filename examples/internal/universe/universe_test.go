package universe

import (
	"slices"
	"testing"

	"github.com/tradekit/tradekit/calendar"
)

// TestDemoAdjustsSplits checks that the demo universe's bars are
// back-adjusted: SHPX splits 3-for-1 with ex-date 2021-06-01 (package
// demo), so as traded its price falls to about a third there, and
// adjusted it moves like any other day.
func TestDemoAdjustsSplits(t *testing.T) {
	u, err := Demo("", "SHPX")
	if err != nil {
		t.Fatal(err)
	}
	bars := u.Assets[0].Bars
	i := slices.Index(bars.Dates, calendar.NewDate(2021, 6, 1))
	if i < 1 {
		t.Fatalf("SHPX has no bar on the ex-date 2021-06-01")
	}
	if r := bars.Close[i] / bars.Close[i-1]; r < 0.8 || r > 1.25 {
		t.Errorf("SHPX closes %v then %v across its split: a ratio of %.3f, as traded rather than adjusted",
			bars.Close[i-1], bars.Close[i], r)
	}
}
