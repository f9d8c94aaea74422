package marketdata_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// The bars and actions of the hand-computed example: a 4-for-1 split
// ex 2024-01-04 and a dividend of 0.51 ex 2024-01-05, whose previous close
// is 25.5, so its factor is 1 - 0.51/25.5 = 0.98.
const (
	actionBarsCSV = "symbol,date,open,high,low,close,volume\n" +
		"SPLT,2024-01-02,100,110,90,100,1000\n" +
		"SPLT,2024-01-03,100,104,96,102,2000\n" +
		"SPLT,2024-01-04,25.5,26,25,25.5,8000\n" +
		"SPLT,2024-01-05,25,25.5,24.5,25,4000\n"
	splitsCSV    = "symbol,date,ratio\nsplt,2024-01-04,4\n"
	dividendsCSV = "Symbol,Ex Date,Amount\nSPLT,2024-01-05,0.51\n"
)

// wantAdjusted is the example back-adjusted by hand: bars before
// 2024-01-04 times 0.25 * 0.98 = 0.245 (volume times 4), the bar of
// 2024-01-04 times 0.98, the last bar as traded.
var wantAdjusted = []string{
	"2024-01-02 24.5 26.95 22.05 24.5 4000",
	"2024-01-03 24.5 25.48 23.52 24.99 8000",
	"2024-01-04 24.99 25.48 24.5 24.99 8000",
	"2024-01-05 25 25.5 24.5 25 4000",
}

// mustImportActionBars imports the bars of actionBarsCSV for SPLT, a new
// asset.
func mustImportActionBars(t *testing.T, st *marketdata.Store) {
	t.Helper()
	bars, err := marketdata.ReadPricesCSV(strings.NewReader(actionBarsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := marketdata.ImportPrices(context.Background(), st, marketdata.PriceImport{Symbol: "SPLT"}, bars); err != nil {
		t.Fatal(err)
	}
}

func priceLines(ps []marketdata.Price) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.Join([]string{p.Date.String(), p.Open.String(), p.High.String(), p.Low.String(),
			p.Close.String()}, " ")+" "+strconv.FormatInt(p.Volume, 10))
	}
	return out
}

func TestAdjustedPrices(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		mustImportActionBars(t, st)
		for _, c := range []struct {
			kind marketdata.ActionKind
			csv  string
		}{{marketdata.Split, splitsCSV}, {marketdata.Dividend, dividendsCSV}} {
			if n, err := marketdata.ImportActions(ctx, st, c.kind, strings.NewReader(c.csv)); err != nil || n != 1 {
				t.Fatalf("import %s: %d, %v", c.kind, n, err)
			}
		}
		a, err := st.AssetBySymbol(ctx, "SPLT")
		if err != nil {
			t.Fatal(err)
		}
		acts, err := st.Actions(ctx, a.ID)
		if err != nil || len(acts) != 2 || acts[0].Kind != marketdata.Split || acts[1].Value.String() != "0.51" {
			t.Fatalf("actions %+v, %v", acts, err)
		}
		got, err := st.AdjustedPrices(ctx, a.ID, calendar.Date{}, calendar.Date{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantAdjusted, priceLines(got)); diff != "" {
			t.Errorf("adjusted mismatch (-want +got):\n%s", diff)
		}
		// A range has the values of the full series.
		got, err = st.AdjustedPrices(ctx, a.ID, calendar.Date{Year: 2024, Month: 1, Day: 3}, calendar.Date{Year: 2024, Month: 1, Day: 3})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantAdjusted[1:2], priceLines(got)); diff != "" {
			t.Errorf("adjusted range mismatch (-want +got):\n%s", diff)
		}
		// A bad row names its line; an unknown symbol too.
		for csv, want := range map[string]string{
			"symbol,date,ratio\nSPLT,2024-02-01,0\n": "line 2: 2024-02-01: ratio 0 must be positive",
			"symbol,date,ratio\nNOPE,2024-02-01,2\n": `line 2: asset "NOPE": unknown (import its prices first)`,
		} {
			if _, err := marketdata.ImportActions(ctx, st, marketdata.Split, strings.NewReader(csv)); err == nil || err.Error() != want {
				t.Errorf("ImportActions(%q) = %v, want %s", csv, err, want)
			}
		}
	})
}

// TestSaveActionsVersion checks that saving actions bumps the asset's
// price version only when they change, and that AdjustedPriceColumns
// follows them.
func TestSaveActionsVersion(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		mustImportActionBars(t, st)
		a, err := st.AssetBySymbol(ctx, "SPLT")
		if err != nil {
			t.Fatal(err)
		}
		version := func() int64 {
			t.Helper()
			v, err := st.PriceVersion(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return v.Version
		}
		closes := func() []float64 {
			t.Helper()
			c, err := st.AdjustedPriceColumns(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return c.Close
		}
		v0 := version()
		// Without actions: the closes as traded.
		if diff := cmp.Diff([]float64{100, 102, 25.5, 25}, closes()); diff != "" {
			t.Errorf("unadjusted closes (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			kind marketdata.ActionKind
			csv  string
		}{{marketdata.Split, splitsCSV}, {marketdata.Dividend, dividendsCSV}} {
			if _, err := marketdata.ImportActions(ctx, st, c.kind, strings.NewReader(c.csv)); err != nil {
				t.Fatal(err)
			}
		}
		v1 := version()
		if v1 != v0+2 {
			t.Errorf("version after two action imports = %d, want %d", v1, v0+2)
		}
		// The closes of wantAdjusted.
		if diff := cmp.Diff([]float64{24.5, 24.99, 24.99, 25}, closes()); diff != "" {
			t.Errorf("adjusted closes (-want +got):\n%s", diff)
		}
		// The same action again changes nothing.
		if _, err := marketdata.ImportActions(ctx, st, marketdata.Split, strings.NewReader(splitsCSV)); err != nil {
			t.Fatal(err)
		}
		if v := version(); v != v1 {
			t.Errorf("version after re-importing the same split = %d, want %d", v, v1)
		}
		// A new ratio does: 2-for-1, so the first close is 100 * 0.5 * 0.98.
		if _, err := marketdata.ImportActions(ctx, st, marketdata.Split, strings.NewReader("symbol,date,ratio\nSPLT,2024-01-04,2\n")); err != nil {
			t.Fatal(err)
		}
		if v := version(); v != v1+1 {
			t.Errorf("version after changing the split = %d, want %d", v, v1+1)
		}
		if got := closes()[0]; got != 49 {
			t.Errorf("first close after the 2-for-1 split = %v, want 49", got)
		}
	})
}
