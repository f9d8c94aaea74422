package paper_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// d is decimal.RequireFromString.
func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// dp is a pointer to d(s).
func dp(s string) *decimal.Decimal {
	v := d(s)
	return &v
}

// mustFill fills an order and fails the test on error.
func mustFill(t *testing.T, e *env, accountID, symbol string, side brokers.Side, qty, price string, at time.Time) alpaca.OrderJSON {
	t.Helper()
	o, err := e.b.Fill(context.Background(), accountID, symbol, side, d(qty), d(price), at)
	if err != nil {
		t.Fatalf("Fill(%s %s %s @ %s): %v", side, qty, symbol, price, err)
	}
	return o
}

// mustPrices stores an asset on NYSE and its closes (open, high and low
// equal to the close), by date.
func mustPrices(t *testing.T, db bun.IDB, symbol string, closes map[string]string) marketdata.Asset {
	t.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: symbol, Name: symbol + " Inc.", Type: marketdata.Stock,
		ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		t.Fatal(err)
	}
	var ps []marketdata.Price
	for date, c := range closes {
		day, err := calendar.ParseDate(date)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, marketdata.Price{AssetID: a.ID, Date: day, Open: d(c), High: d(c), Low: d(c), Close: d(c), Volume: 1000})
	}
	if err := st.SavePrices(ctx, ps); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestFill checks that fills update the cash and the position exactly,
// with decimals of many digits, through the database and the API: the
// average entry price on buys, an unchanged average on sells, and a
// position removed when it reaches zero.
func TestFill(t *testing.T) {
	t.Parallel()
	// Expected values computed with Python's decimal module at 60 digits;
	// the average rounded half up to 18 places.
	steps := []struct {
		side              brokers.Side
		qty, price        string
		wantCash          string
		wantQty, wantAvg  string // "" when the position is closed
		wantCost, wantVal string
	}{
		{brokers.Buy, "12.345678901", "187.123456789", "97689.833887637857491111",
			"12.345678901", "187.123456789", "2310.166112362142508889", "2310.166112362142508889"},
		{brokers.Buy, "0.654321099", "190.5", "97565.185718278357491111",
			"13", "187.293406286280192991", "2434.814281721642508883", "2434.814281721642508883"},
		{brokers.Sell, "5.5", "200.123456789", "98665.864730617857491111",
			"7.5", "187.293406286280192991", "1404.7005471471014474325", "1404.7005471471014474325"},
		{brokers.Sell, "7.5", "199.999999999", "100165.864730610357491111", "", "", "", ""},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		tok, accountID := e.connect(t)
		for i, st := range steps {
			at := t0.Add(time.Duration(i+1)*time.Minute + 123456789) // nanoseconds: stored to the microsecond
			o := mustFill(t, e, accountID, "megacorp", st.side, st.qty, st.price, at)
			wantAt := at.Truncate(time.Microsecond)
			want := alpaca.OrderJSON{
				ID: o.ID, ClientOrderID: o.ClientOrderID,
				CreatedAt: wantAt, UpdatedAt: wantAt, SubmittedAt: wantAt, FilledAt: &wantAt,
				Symbol: "MEGACORP", AssetClass: "us_equity", OrderClass: "simple", Type: "market", OrderType: "market", Side: string(st.side),
				TimeInForce: "day", Status: "filled", Qty: dp(st.qty), FilledQty: d(st.qty), FilledAvgPrice: dp(st.price),
			}
			if diff := cmp.Diff(want, o); diff != "" {
				t.Errorf("step %d: Fill() mismatch (-want +got):\n%s", i, diff)
			}

			var a alpaca.AccountJSON
			e.get(t, tok.AccessToken, "/v2/account", &a)
			if !a.Cash.Equal(d(st.wantCash)) || !a.BuyingPower.Equal(d(st.wantCash)) {
				t.Errorf("step %d: cash %s, buying power %s, want %s", i, a.Cash, a.BuyingPower, st.wantCash)
			}
			var ps []alpaca.PositionJSON
			e.get(t, tok.AccessToken, "/v2/positions", &ps)
			if st.wantQty == "" {
				if len(ps) != 0 {
					t.Errorf("step %d: positions %+v, want none", i, ps)
				}
				if !a.Equity.Equal(d(st.wantCash)) {
					t.Errorf("step %d: equity %s, want the cash %s", i, a.Equity, st.wantCash)
				}
				continue
			}
			// No stored price: the position counts at its average entry price.
			wantPos := []alpaca.PositionJSON{{
				Symbol: "MEGACORP", AssetClass: "us_equity", Side: "long",
				Qty: d(st.wantQty), QtyAvailable: d(st.wantQty), AvgEntryPrice: d(st.wantAvg), CostBasis: d(st.wantCost),
				MarketValue: dp(st.wantVal), CurrentPrice: dp(st.wantAvg), UnrealizedPL: dp("0"), UnrealizedPLPC: dp("0"),
				// No previous close: the day's change is measured from the average entry price.
				UnrealizedIntradayPL: dp("0"), UnrealizedIntradayPLPC: dp("0"), ChangeToday: dp("0"),
			}}
			if diff := cmp.Diff(wantPos, ps); diff != "" {
				t.Errorf("step %d: positions mismatch (-want +got):\n%s", i, diff)
			}
			if want := d(st.wantCash).Add(d(st.wantVal)); !a.Equity.Equal(want) || !a.LongMarketValue.Equal(d(st.wantVal)) {
				t.Errorf("step %d: equity %s, long market value %s, want %s and %s", i, a.Equity, a.LongMarketValue, want, st.wantVal)
			}
		}
		// The decimals are stored exactly: the orders read back are those
		// Fill returned, digit for digit.
		var os []alpaca.OrderJSON
		e.get(t, tok.AccessToken, "/v2/orders?status=closed&direction=asc", &os)
		for i, o := range os {
			if !o.FilledAvgPrice.Equal(d(steps[i].price)) || o.FilledAvgPrice.String() != steps[i].price {
				t.Errorf("order %d: filled_avg_price %s, want %s", i, o.FilledAvgPrice, steps[i].price)
			}
		}
	})
}

// TestFillRefused checks Fill's refusals, and that a refused fill changes
// nothing.
func TestFillRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{StartingCash: d("1000")})
		tok, id := e.connect(t)
		mustFill(t, e, id, "ACME", brokers.Buy, "10", "50", t0.Add(time.Hour))
		later := t0.Add(2 * time.Hour)
		tests := []struct {
			name       string
			account    string
			symbol     string
			side       brokers.Side
			qty, price string
			at         time.Time
			wantErr    error
		}{
			{"buy beyond the cash", id, "ACME", brokers.Buy, "10.000000001", "50", later, tradekit.ErrRejected},
			{"buy far beyond the cash", id, "OTHER", brokers.Buy, "1", "1000000", later, tradekit.ErrRejected},
			{"price too large to store", id, "OTHER", brokers.Buy, "1", "1e30", later, tradekit.ErrInvalid},
			{"sell beyond the position", id, "ACME", brokers.Sell, "10.000000001", "50", later, tradekit.ErrRejected},
			{"sell without a position", id, "OTHER", brokers.Sell, "1", "50", later, tradekit.ErrRejected},
			{"zero quantity", id, "ACME", brokers.Buy, "0", "50", later, tradekit.ErrInvalid},
			{"negative quantity", id, "ACME", brokers.Sell, "-1", "50", later, tradekit.ErrInvalid},
			{"negative price", id, "ACME", brokers.Buy, "1", "-50", later, tradekit.ErrInvalid},
			{"ten decimal places", id, "ACME", brokers.Buy, "0.0000000001", "50", later, tradekit.ErrInvalid},
			{"price of ten decimal places", id, "ACME", brokers.Buy, "1", "50.0000000001", later, tradekit.ErrInvalid},
			{"short side", id, "ACME", "short", "1", "50", later, tradekit.ErrInvalid},
			{"empty symbol", id, "  ", brokers.Buy, "1", "50", later, tradekit.ErrInvalid},
			{"symbol with a space", id, "AC ME", brokers.Buy, "1", "50", later, tradekit.ErrInvalid},
			{"before the account", id, "ACME", brokers.Buy, "1", "50", t0.Add(-time.Second), tradekit.ErrInvalid},
			{"before the last fill", id, "ACME", brokers.Buy, "1", "50", t0.Add(30 * time.Minute), tradekit.ErrInvalid},
			{"unknown account", uuid.NewString(), "ACME", brokers.Buy, "1", "50", later, tradekit.ErrNotFound},
			{"malformed account", "nope", "ACME", brokers.Buy, "1", "50", later, tradekit.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := e.b.Fill(context.Background(), tt.account, tt.symbol, tt.side, d(tt.qty), d(tt.price), tt.at)
				if !errors.Is(err, tt.wantErr) || !strings.HasPrefix(fmt.Sprint(err), "paper: ") {
					t.Errorf("Fill() = %v, want an error prefixed paper: wrapping %v", err, tt.wantErr)
				}
			})
		}
		var a alpaca.AccountJSON
		e.get(t, tok.AccessToken, "/v2/account", &a)
		if !a.Cash.Equal(d("500")) {
			t.Errorf("cash %s after the refusals, want 500", a.Cash)
		}
		var ps []alpaca.PositionJSON
		e.get(t, tok.AccessToken, "/v2/positions", &ps)
		if len(ps) != 1 || !ps[0].Qty.Equal(d("10")) {
			t.Errorf("positions %+v after the refusals, want 10 ACME", ps)
		}
		if n := count(t, db, "paper_orders"); n != 1 {
			t.Errorf("%d orders after the refusals, want 1", n)
		}
		// Spending the cash to the cent is allowed.
		mustFill(t, e, id, "ACME", brokers.Buy, "10", "50", later)
		e.get(t, tok.AccessToken, "/v2/account", &a)
		if !a.Cash.IsZero() {
			t.Errorf("cash %s, want 0", a.Cash)
		}
	})
}

// The valuation scenario of TestValuation and TestPortfolioHistory: an
// account opened on Monday 2 March 2026 at 15:00 UTC; closes stored for
// ACME and OLD (one close long before, to exercise the look-up beyond the
// lookback), none for ZZZZ; a sale on Friday morning; "today" is Friday
// 6 March at 10:00.
//
//	Mar 3 12:00  buy 100 ACME @ 10.25   cash 98975
//	Mar 3 13:00  buy 10 ZZZZ @ 5.5      cash 98920
//	Mar 3 14:00  buy 1 OLD @ 40         cash 98880
//	Mar 6 09:00  sell 40 ACME @ 11      cash 99320
//
// Equity at each day's end (ACME's close on or before the day; OLD at 42;
// ZZZZ at its average entry price, 5.5):
//
//	Mar 2  100000                         (no holdings)
//	Mar 3  98880 + 100×10.75 + 55 + 42  = 100052
//	Mar 4  (no close; Mar 3's)          = 100052
//	Mar 5  98880 + 100×11.125 + 55 + 42 = 100089.5
//	Mar 6  99320 + 60×11.125 + 55 + 42  = 100084.5  (Mar 9's close is after today)
func valuationScenario(t *testing.T, db *bun.DB) (*env, string, marketdata.Asset) {
	t.Helper()
	acme := mustPrices(t, db, "ACME", map[string]string{
		"2026-02-27": "9.75", "2026-03-02": "10.5", "2026-03-03": "10.75", "2026-03-05": "11.125", "2026-03-09": "99",
	})
	mustPrices(t, db, "OLD", map[string]string{"2026-01-15": "42"})
	e := mustEnv(t, db, paper.Config{})
	tok, id := e.connect(t)
	mustFill(t, e, id, "ACME", brokers.Buy, "100", "10.25", time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC))
	mustFill(t, e, id, "ZZZZ", brokers.Buy, "10", "5.5", time.Date(2026, 3, 3, 13, 0, 0, 0, time.UTC))
	mustFill(t, e, id, "old", brokers.Buy, "1", "40", time.Date(2026, 3, 3, 14, 0, 0, 0, time.UTC))
	mustFill(t, e, id, "ACME", brokers.Sell, "40", "11", time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC))
	e.clock.Set(time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC))
	// The access token has expired by now: refresh it.
	tok2, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	return e, tok2.AccessToken, acme
}

// TestValuation checks positions and the account valued at stored closes:
// the latest close up to today, or the average entry price without one.
func TestValuation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e, at, acme := valuationScenario(t, db)
		old, err := marketdata.NewStore(db).AssetBySymbol(context.Background(), "OLD")
		if err != nil {
			t.Fatal(err)
		}
		var ps []alpaca.PositionJSON
		if status := e.get(t, at, "/v2/positions", &ps); status != http.StatusOK {
			t.Fatalf("GET /v2/positions: %d", status)
		}
		want := []alpaca.PositionJSON{
			{AssetID: acme.ID.String(), Symbol: "ACME", Exchange: "NYSE", AssetClass: "us_equity",
				Qty: d("60"), QtyAvailable: d("60"), AvgEntryPrice: d("10.25"), Side: "long", MarketValue: dp("667.5"), CostBasis: d("615"),
				UnrealizedPL: dp("52.5"), UnrealizedPLPC: dp("0.08536585"), // 52.5 / 615 to 8 places
				UnrealizedIntradayPL: dp("0"), UnrealizedIntradayPLPC: dp("0"), ChangeToday: dp("0"),
				CurrentPrice: dp("11.125"), LastdayPrice: dp("11.125")},
			{AssetID: old.ID.String(), Symbol: "OLD", Exchange: "NYSE", AssetClass: "us_equity",
				Qty: d("1"), QtyAvailable: d("1"), AvgEntryPrice: d("40"), Side: "long", MarketValue: dp("42"), CostBasis: d("40"),
				UnrealizedPL: dp("2"), UnrealizedPLPC: dp("0.05"),
				UnrealizedIntradayPL: dp("0"), UnrealizedIntradayPLPC: dp("0"), ChangeToday: dp("0"),
				CurrentPrice: dp("42"), LastdayPrice: dp("42")},
			{Symbol: "ZZZZ", AssetClass: "us_equity",
				Qty: d("10"), QtyAvailable: d("10"), AvgEntryPrice: d("5.5"), Side: "long", MarketValue: dp("55"), CostBasis: d("55"),
				UnrealizedPL: dp("0"), UnrealizedPLPC: dp("0"),
				UnrealizedIntradayPL: dp("0"), UnrealizedIntradayPLPC: dp("0"), ChangeToday: dp("0"),
				CurrentPrice: dp("5.5")},
		}
		if diff := cmp.Diff(want, ps); diff != "" {
			t.Errorf("GET /v2/positions mismatch (-want +got):\n%s", diff)
		}
		var a alpaca.AccountJSON
		e.get(t, at, "/v2/account", &a)
		wantAcct := alpaca.AccountJSON{
			ID: a.ID, AccountNumber: a.AccountNumber, Status: "ACTIVE", CryptoStatus: "ACTIVE", Currency: "USD",
			Cash: d("99320"), BuyingPower: d("99320"), PortfolioValue: d("100084.5"), Equity: d("100084.5"),
			// A cash account: every buying power is the cash, nothing is borrowed.
			RegTBuyingPower: d("99320"), EffectiveBuyingPower: d("99320"), NonMarginableBuyingPower: d("99320"),
			DaytradingBuyingPower: d("0"), OptionsBuyingPower: d("0"), BodDtbp: d("0"), AccruedFees: d("0"), PendingTransferIn: d("0"),
			Multiplier: d("1"), InitialMargin: d("0"), MaintenanceMargin: d("0"), LastMaintenanceMargin: d("0"), SMA: d("0"),
			LastEquity: d("100089.5"), LongMarketValue: d("764.5"), ShortMarketValue: d("0"), PositionMarketValue: d("764.5"),
			CreatedAt: t0, BalanceAsOf: "2026-03-05",
		}
		if diff := cmp.Diff(wantAcct, a); diff != "" {
			t.Errorf("GET /v2/account mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestPortfolioHistory checks the daily equity over the scenario's days,
// with fills in the middle.
func TestPortfolioHistory(t *testing.T) {
	t.Parallel()
	day := func(dd int) int64 { return time.Date(2026, 3, dd, 0, 0, 0, 0, time.UTC).Unix() }
	ds := func(ss ...string) []*decimal.Decimal {
		out := make([]*decimal.Decimal, len(ss))
		for i, s := range ss {
			out[i] = dp(s)
		}
		return out
	}
	tests := []struct {
		query string
		want  alpaca.PortfolioHistoryJSON
	}{
		{"period=1A&timeframe=1D", alpaca.PortfolioHistoryJSON{
			Timestamp:     []int64{day(2), day(3), day(4), day(5), day(6)},
			Equity:        ds("100000", "100052", "100052", "100089.5", "100084.5"),
			ProfitLoss:    ds("0", "52", "52", "89.5", "84.5"),
			ProfitLossPct: ds("0", "0.00052", "0.00052", "0.000895", "0.000845"),
			BaseValue:     d("100000"), Timeframe: "1D",
		}},
		{"", alpaca.PortfolioHistoryJSON{ // the default, 1M, from the account's opening
			Timestamp:     []int64{day(2), day(3), day(4), day(5), day(6)},
			Equity:        ds("100000", "100052", "100052", "100089.5", "100084.5"),
			ProfitLoss:    ds("0", "52", "52", "89.5", "84.5"),
			ProfitLossPct: ds("0", "0.00052", "0.00052", "0.000895", "0.000845"),
			BaseValue:     d("100000"), Timeframe: "1D",
		}},
		// 2 days: the base is the equity at the end of Mar 4; the
		// percentages are 37.5/100052 and 32.5/100052 rounded to 8 places.
		{"period=2D", alpaca.PortfolioHistoryJSON{
			Timestamp:     []int64{day(5), day(6)},
			Equity:        ds("100089.5", "100084.5"),
			ProfitLoss:    ds("37.5", "32.5"),
			ProfitLossPct: ds("0.00037481", "0.00032483"),
			BaseValue:     d("100052"), Timeframe: "1D",
		}},
		{"period=1W&date_end=2026-03-04", alpaca.PortfolioHistoryJSON{
			Timestamp:     []int64{day(2), day(3), day(4)},
			Equity:        ds("100000", "100052", "100052"),
			ProfitLoss:    ds("0", "52", "52"),
			ProfitLossPct: ds("0", "0.00052", "0.00052"),
			BaseValue:     d("100000"), Timeframe: "1D",
		}},
		{"period=1D&date_end=2026-03-01", alpaca.PortfolioHistoryJSON{ // before the account
			Timestamp: []int64{}, Equity: ds(), ProfitLoss: ds(), ProfitLossPct: ds(),
			BaseValue: d("100000"), Timeframe: "1D",
		}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e, at, _ := valuationScenario(t, db)
		for _, tt := range tests {
			var got alpaca.PortfolioHistoryJSON
			if status := e.get(t, at, "/v2/account/portfolio/history?"+tt.query, &got); status != http.StatusOK {
				t.Errorf("GET history?%s: %d", tt.query, status)
				continue
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET history?%s mismatch (-want +got):\n%s", tt.query, diff)
			}
		}
		for _, q := range []string{"timeframe=1H", "period=1Y", "period=0D", "period=D", "date_end=yesterday"} {
			var ej alpaca.ErrorJSON
			if status := e.get(t, at, "/v2/account/portfolio/history?"+q, &ej); status != http.StatusUnprocessableEntity || ej.Code != 42210000 {
				t.Errorf("GET history?%s: %d %+v, want 422 and code 42210000", q, status, ej)
			}
		}
	})
}

// TestOrders checks the listing of GET /v2/orders: Alpaca's default
// status (open), the status, time, side and symbol filters, the direction
// and the limit.
func TestOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		tok, id := e.connect(t)
		_, otherID := e.connect(t) // another account's orders never show
		other := mustFill(t, e, otherID, "ACME", brokers.Buy, "1", "1", t0.Add(time.Minute))
		var ej alpaca.ErrorJSON
		if status := e.get(t, tok.AccessToken, "/v2/orders/"+other.ID, &ej); status != http.StatusNotFound {
			t.Errorf("GET /v2/orders/{id} of another account's order: %d %+v, want 404", status, ej)
		}
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		fills := []alpaca.OrderJSON{
			mustFill(t, e, id, "ACME", brokers.Buy, "10", "10", at(1)),
			mustFill(t, e, id, "BETA", brokers.Buy, "5", "20", at(2)),
			mustFill(t, e, id, "ACME", brokers.Sell, "4", "11", at(3)),
			mustFill(t, e, id, "BETA", brokers.Sell, "5", "21", at(3)), // same time: recorded order breaks the tie
		}
		ids := func(is ...int) []string {
			out := []string{}
			for _, i := range is {
				out = append(out, fills[i].ID)
			}
			return out
		}
		tests := []struct {
			query string
			want  []string
		}{
			{"", ids()}, // open, by default: every order here is filled
			{"status=open", ids()},
			{"status=closed", ids(3, 2, 1, 0)},
			{"status=all&direction=asc", ids(0, 1, 2, 3)},
			{"status=all&limit=2", ids(3, 2)},
			{"status=all&direction=asc&limit=1", ids(0)},
			{"status=all&after=" + at(1).Format(time.RFC3339), ids(3, 2, 1)}, // exclusive
			{"status=all&until=" + at(3).Format(time.RFC3339), ids(1, 0)},    // exclusive
			{"status=all&after=" + at(1).Format(time.RFC3339) + "&until=" + at(3).Format(time.RFC3339), ids(1)},
			{"status=all&until=2026-03-03", ids(3, 2, 1, 0)},
			{"status=all&after=2026-03-03", ids()},
			{"status=closed&side=sell", ids(3, 2)},
			{"status=closed&symbols=acme", ids(2, 0)},
			{"status=closed&symbols=ACME,BETA&side=buy", ids(1, 0)},
			{"status=closed&limit=1000", ids(3, 2, 1, 0)}, // capped at 500
		}
		for _, tt := range tests {
			var got []alpaca.OrderJSON
			if status := e.get(t, tok.AccessToken, "/v2/orders?"+tt.query, &got); status != http.StatusOK {
				t.Errorf("GET /v2/orders?%s: %d", tt.query, status)
				continue
			}
			gotIDs := []string{}
			for _, o := range got {
				gotIDs = append(gotIDs, o.ID)
			}
			if diff := cmp.Diff(tt.want, gotIDs); diff != "" {
				t.Errorf("GET /v2/orders?%s ids mismatch (-want +got):\n%s", tt.query, diff)
			}
		}
		// An order lists as Fill returned it.
		var got []alpaca.OrderJSON
		e.get(t, tok.AccessToken, "/v2/orders?status=all&direction=asc", &got)
		if diff := cmp.Diff(fills, got); diff != "" {
			t.Errorf("listed orders mismatch (-want +got):\n%s", diff)
		}
		bad := []struct{ query, msg string }{
			{"status=pending", "status: must be open, closed or all"},
			{"direction=up", "direction: must be asc or desc"},
			{"limit=0", "limit: must be a positive integer"},
			{"limit=x", "limit: must be a positive integer"},
			{"after=yesterday", "after: must be an RFC 3339 time or a YYYY-MM-DD date"},
			{"until=1", "until: must be an RFC 3339 time or a YYYY-MM-DD date"},
			{"side=short", "side: must be buy or sell"},
		}
		for _, tt := range bad {
			var ej alpaca.ErrorJSON
			status := e.get(t, tok.AccessToken, "/v2/orders?"+tt.query, &ej)
			if want := (alpaca.ErrorJSON{Code: 42210000, Message: tt.msg}); status != http.StatusUnprocessableEntity || ej != want {
				t.Errorf("GET /v2/orders?%s: %d %+v, want 422 %+v", tt.query, status, ej, want)
			}
		}
	})
}

// TestConsentMoney checks the starting cash and currency of the
// configuration on the consent page and in a new account.
func TestConsentMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cash, currency string
		wantText       string
	}{
		{"1234567.5", "eur", "1,234,567.50 EUR"},
		{"999", "", "999.00 USD"},
		{"0.125", "GBP", "0.125 GBP"},
		{"100000000000", "JPY", "100,000,000,000.00 JPY"},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		for _, tt := range tests {
			t.Run(tt.wantText, func(t *testing.T) {
				e := mustEnv(t, db, paper.Config{StartingCash: d(tt.cash), Currency: tt.currency})
				_, page := e.browser(t).get(e.authURL("s"))
				if !strings.Contains(page, "with "+tt.wantText+" of play money") {
					t.Errorf("the consent page does not say %q:\n%s", tt.wantText, page)
				}
				tok, _ := e.connect(t)
				var a alpaca.AccountJSON
				e.get(t, tok.AccessToken, "/v2/account", &a)
				if !a.Cash.Equal(d(tt.cash)) || a.Currency != strings.Fields(tt.wantText)[1] {
					t.Errorf("account cash %s %s, want %s", a.Cash, a.Currency, tt.wantText)
				}
			})
		}
	})
}

// TestNewPanics checks that New refuses configurations that are
// programming errors.
func TestNewPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  paper.Config
	}{
		{"negative cash", paper.Config{StartingCash: d("-1")}},
		{"cash of 19 decimal places", paper.Config{StartingCash: d("0.0000000000000000001")}},
		{"cash of 21 digits", paper.Config{StartingCash: d("100000000000000000000")}},
		{"currency", paper.Config{Currency: "dollars"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !panics(func() { paper.New(nil, tt.cfg) }) {
				t.Errorf("New(%+v) did not panic", tt.cfg)
			}
		})
	}
	if panics(func() { paper.New(nil, paper.Config{}) }) {
		t.Error("New panicked on a good configuration")
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	f()
	return false
}

// TestFillConcurrent checks that concurrent fills in one account are
// serialised: of eight buys of 300 with 1000 of cash, exactly three fill.
func TestFillConcurrent(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{StartingCash: d("1000")})
		tok, id := e.connect(t)
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				_, err := e.b.Fill(context.Background(), id, "ACME", brokers.Buy, d("1"), d("300"), time.Time{})
				errs <- err
			}()
		}
		filled := 0
		for range 8 {
			switch err := <-errs; {
			case err == nil:
				filled++
			case !errors.Is(err, tradekit.ErrRejected):
				t.Errorf("Fill() = %v, want nil or a rejection", err)
			}
		}
		var a alpaca.AccountJSON
		e.get(t, tok.AccessToken, "/v2/account", &a)
		if filled != 3 || !a.Cash.Equal(d("100")) {
			t.Errorf("%d fills, cash %s; want 3 and 100", filled, a.Cash)
		}
	})
}
