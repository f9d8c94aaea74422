package paper

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// handleAccount answers GET /v2/account. The account is a cash account:
// every buying power is the cash, the multiplier 1, the margin fields
// zero, shorting disabled; see the package doc.
func (b *Broker) handleAccount(w http.ResponseWriter, r *http.Request, a account) error {
	vs, long, err := b.valuePositions(r.Context(), a)
	if err != nil {
		return err
	}
	last, err := b.lastEquity(r.Context(), a, vs)
	if err != nil {
		return err
	}
	equity := a.Cash.Add(long)
	return writeJSON(w, http.StatusOK, alpaca.AccountJSON{
		ID:                       a.ID.String(),
		AccountNumber:            a.Number,
		Status:                   "ACTIVE",
		CryptoStatus:             "ACTIVE",
		Currency:                 a.Currency,
		Cash:                     a.Cash,
		BuyingPower:              a.Cash,
		RegTBuyingPower:          a.Cash,
		DaytradingBuyingPower:    decimal.Zero,
		EffectiveBuyingPower:     a.Cash,
		NonMarginableBuyingPower: a.Cash,
		OptionsBuyingPower:       decimal.Zero,
		BodDtbp:                  decimal.Zero,
		AccruedFees:              decimal.Zero,
		PendingTransferIn:        decimal.Zero,
		PortfolioValue:           equity,
		Equity:                   equity,
		LastEquity:               last,
		LongMarketValue:          long,
		ShortMarketValue:         decimal.Zero,
		PositionMarketValue:      long,
		Multiplier:               decimal.New(1, 0),
		InitialMargin:            decimal.Zero,
		MaintenanceMargin:        decimal.Zero,
		LastMaintenanceMargin:    decimal.Zero,
		SMA:                      decimal.Zero,
		CreatedAt:                a.CreatedAt.UTC(),
		BalanceAsOf:              b.today().AddDays(-1).String(),
	})
}

// handlePositions answers GET /v2/positions, by symbol.
func (b *Broker) handlePositions(w http.ResponseWriter, r *http.Request, a account) error {
	out, err := b.positionsJSON(r.Context(), a, "")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// errNoPosition is Alpaca's 404 for a symbol the account does not hold.
var errNoPosition = &apiError{http.StatusNotFound, codeNotFound, "position does not exist"}

// handlePosition answers GET /v2/positions/{symbol}, where symbol is a
// symbol or the asset's id.
func (b *Broker) handlePosition(w http.ResponseWriter, r *http.Request, a account) error {
	symbol, err := b.positionSymbol(r.Context(), r.PathValue("symbol"))
	if err != nil {
		return err
	}
	out, err := b.positionsJSON(r.Context(), a, symbol)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return errNoPosition
	}
	return writeJSON(w, http.StatusOK, out[0])
}

// positionSymbol returns the symbol of a path's symbol_or_asset_id.
func (b *Broker) positionSymbol(ctx context.Context, s string) (string, error) {
	if id, err := uuid.Parse(s); err == nil {
		as, err := b.md.Asset(ctx, id)
		if errors.Is(err, tradekit.ErrNotFound) {
			return "", errNoPosition
		}
		if err != nil {
			return "", fmt.Errorf("paper: %w", err)
		}
		return as.Symbol, nil
	}
	return marketdata.NormalizeSymbol(s), nil
}

// positionsJSON returns the account's positions as Alpaca sends them, or
// only the one in symbol when it is not "". qty_available is the
// quantity less that of the open sells; the intraday figures compare
// with the previous close (lastday_price), or with the average entry
// price when there is none.
func (b *Broker) positionsJSON(ctx context.Context, a account, symbol string) ([]alpaca.PositionJSON, error) {
	vs, _, err := b.valuePositions(ctx, a)
	if err != nil {
		return nil, err
	}
	if symbol != "" {
		vs = slices.DeleteFunc(vs, func(v valued) bool { return v.Symbol != symbol })
		if len(vs) == 0 {
			return nil, nil
		}
	}
	open, err := openOrders(ctx, b.db, a.ID)
	if err != nil {
		return nil, err
	}
	exchanges := map[uuid.UUID]string{}
	out := make([]alpaca.PositionJSON, 0, len(vs))
	for _, v := range vs {
		p := alpaca.PositionJSON{
			Symbol:        v.Symbol,
			AssetClass:    "us_equity",
			Qty:           v.Qty,
			QtyAvailable:  v.Qty,
			AvgEntryPrice: v.AvgEntryPrice,
			Side:          "long",
			CostBasis:     v.Qty.Mul(v.AvgEntryPrice),
			LastdayPrice:  v.lastday,
		}
		seen := map[uuid.UUID]bool{}
		for _, o := range open {
			if o.Symbol == v.Symbol && o.Side == string(brokers.Sell) && !seen[exitGroup(&o)] {
				seen[exitGroup(&o)] = true
				p.QtyAvailable = p.QtyAvailable.Sub(o.Qty)
			}
		}
		p.QtyAvailable = decimal.Max(p.QtyAvailable, decimal.Zero)
		mv, price := v.value, v.price
		upl := mv.Sub(p.CostBasis)
		p.MarketValue, p.CurrentPrice, p.UnrealizedPL = &mv, &price, &upl
		p.UnrealizedPLPC = ratio(upl, p.CostBasis)
		ref := v.AvgEntryPrice
		if v.lastday != nil {
			ref = *v.lastday
		}
		ipl := price.Sub(ref).Mul(v.Qty)
		p.UnrealizedIntradayPL = &ipl
		p.UnrealizedIntradayPLPC = ratio(ipl, ref.Mul(v.Qty))
		p.ChangeToday = ratio(price.Sub(ref), ref)
		if v.asset != nil {
			p.AssetID, p.AssetClass = v.asset.ID.String(), assetClass(v.asset.Type)
			ex, ok := exchanges[v.asset.ExchangeID]
			if !ok {
				e, err := b.md.Exchange(ctx, v.asset.ExchangeID)
				if err != nil {
					return nil, fmt.Errorf("paper: %w", err)
				}
				ex = e.Symbol
				exchanges[v.asset.ExchangeID] = ex
			}
			p.Exchange = ex
		}
		out = append(out, p)
	}
	return out, nil
}

// ratio returns num / den rounded to pctScale places, and zero when den
// is zero.
func ratio(num, den decimal.Decimal) *decimal.Decimal {
	r := decimal.Zero
	if !den.IsZero() {
		r = num.DivRound(den, pctScale)
	}
	return &r
}

// The limits of GET /v2/orders, Alpaca's.
const (
	defaultOrderLimit = 50
	maxOrderLimit     = 500
)

// handleOrders answers GET /v2/orders with Alpaca's parameters and
// defaults: status open (or closed, all), direction desc (or asc), limit
// 50 (at most 500), after and until (submission times, exclusive;
// RFC 3339 or a date, meaning its midnight UTC), side, and symbols (a
// comma-separated list).
func (b *Broker) handleOrders(w http.ResponseWriter, r *http.Request, a account) error {
	q := r.URL.Query()
	f := orderFilter{Status: "open", Limit: defaultOrderLimit}
	switch s := q.Get("status"); s {
	case "":
	case "open", "closed", "all":
		f.Status = s
	default:
		return &tradekit.ParamError{Param: "status", Msg: "must be open, closed or all"}
	}
	switch d := q.Get("direction"); d {
	case "", "desc":
	case "asc":
		f.Asc = true
	default:
		return &tradekit.ParamError{Param: "direction", Msg: "must be asc or desc"}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return &tradekit.ParamError{Param: "limit", Msg: "must be a positive integer"}
		}
		f.Limit = min(n, maxOrderLimit)
	}
	var err error
	if f.After, err = parseTime("after", q.Get("after")); err != nil {
		return err
	}
	if f.Until, err = parseTime("until", q.Get("until")); err != nil {
		return err
	}
	switch s := q.Get("side"); s {
	case "", "buy", "sell":
		f.Side = s
	default:
		return &tradekit.ParamError{Param: "side", Msg: "must be buy or sell"}
	}
	if s := q.Get("symbols"); s != "" {
		for _, sym := range strings.Split(s, ",") {
			if sym = marketdata.NormalizeSymbol(sym); sym != "" {
				f.Symbols = append(f.Symbols, sym)
			}
		}
	}
	switch s := q.Get("nested"); s {
	case "", "false":
	case "true":
		f.Nested = true
	default:
		return &tradekit.ParamError{Param: "nested", Msg: "must be true or false"}
	}
	list, err := listOrders(r.Context(), b.db, a.ID, f)
	if err != nil {
		return err
	}
	out, err := ordersJSON(r.Context(), b.db, list, f.Nested)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// parseTime parses a time parameter: RFC 3339, or a date meaning its
// midnight UTC; "" is the zero time.
func parseTime(param, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, &tradekit.ParamError{Param: param, Msg: "must be an RFC 3339 time or a YYYY-MM-DD date"}
}

// periodPattern matches Alpaca's history periods: a count and a unit, day,
// week, month or year ("A").
var periodPattern = regexp.MustCompile(`^([1-9][0-9]{0,3})([DWMA])$`)

// handleHistory answers GET /v2/account/portfolio/history: one point per
// calendar day (UTC) from the start of the period, or the day the account
// was opened if later, to date_end (default today; never after today).
// A period of n units covers the n days, weeks, months or years that end
// on date_end; the default is 1M. Only the timeframe 1D is served.
// Timestamps are the days' midnights UTC in Unix seconds, equity the
// equity at each day's end (see [Broker.Handler] and the package doc),
// profit_loss equity − base_value, and profit_loss_pct
// (equity − base_value) / base_value rounded to 8 places.
func (b *Broker) handleHistory(w http.ResponseWriter, r *http.Request, a account) error {
	q := r.URL.Query()
	if tf := q.Get("timeframe"); tf != "" && tf != "1D" {
		return &tradekit.ParamError{Param: "timeframe", Msg: "only 1D is served"}
	}
	end := b.today()
	if s := q.Get("date_end"); s != "" {
		d, err := calendar.ParseDate(s)
		if err != nil {
			return &tradekit.ParamError{Param: "date_end", Msg: "must be a YYYY-MM-DD date"}
		}
		if d.Before(end) {
			end = d
		}
	}
	period := q.Get("period")
	if period == "" {
		period = "1M"
	}
	m := periodPattern.FindStringSubmatch(period)
	if m == nil {
		return &tradekit.ParamError{Param: "period", Msg: "must be a count and a unit, D, W, M or A, such as 1A"}
	}
	n, _ := strconv.Atoi(m[1])
	e := end.Time(time.UTC)
	var before time.Time // the last day before the period
	switch m[2] {
	case "D":
		before = e.AddDate(0, 0, -n)
	case "W":
		before = e.AddDate(0, 0, -7*n)
	case "M":
		before = e.AddDate(0, -n, 0)
	case "A":
		before = e.AddDate(-n, 0, 0)
	}
	base, pts, err := b.history(r.Context(), a, calendar.DateOf(before).AddDays(1), end)
	if err != nil {
		return err
	}
	out := alpaca.PortfolioHistoryJSON{
		Timestamp:     make([]int64, len(pts)),
		Equity:        make([]*decimal.Decimal, len(pts)),
		ProfitLoss:    make([]*decimal.Decimal, len(pts)),
		ProfitLossPct: make([]*decimal.Decimal, len(pts)),
		BaseValue:     base,
		Timeframe:     "1D",
	}
	for i, p := range pts {
		eq, pl := p.Equity, p.Equity.Sub(base)
		pct := decimal.Zero
		if !base.IsZero() {
			pct = pl.DivRound(base, pctScale)
		}
		out.Timestamp[i] = p.Date.Time(time.UTC).Unix()
		out.Equity[i], out.ProfitLoss[i], out.ProfitLossPct[i] = &eq, &pl, &pct
	}
	return writeJSON(w, http.StatusOK, out)
}
