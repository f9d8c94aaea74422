package paper

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// The market of the clock and the calendar: Alpaca's, NYSE's sessions.
const clockExchange = "NYSE"

// session returns the regular session of day d on cal, as times in the
// exchange's zone, and whether d is a trading day.
func session(cal *calendar.Calendar, loc *time.Location, d calendar.Date) (open, close time.Time, ok bool) {
	closeAt, ok := cal.CloseTime(d)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	at := func(hhmm string) time.Time {
		t, _ := time.Parse("15:04", hhmm) // the calendars' own "HH:MM"
		y, m, day := d.Year, d.Month, d.Day
		return time.Date(y, m, day, t.Hour(), t.Minute(), 0, 0, loc)
	}
	return at(cal.Exchange().Open), at(closeAt), true
}

// nyse returns NYSE's calendar and time zone.
func nyse() (*calendar.Calendar, *time.Location, error) {
	cal, ok := calendar.Lookup(clockExchange)
	if !ok {
		return nil, nil, fmt.Errorf("paper: no calendar for %s", clockExchange)
	}
	loc, err := cal.Location()
	if err != nil {
		return nil, nil, fmt.Errorf("paper: %w", err)
	}
	return cal, loc, nil
}

// handleClock answers GET /v2/clock from Tradekit's NYSE calendar: the
// market is open during a trading day's regular session (09:30 to 16:00
// New York time, or to an early close), and next_open and next_close are
// the next session's bounds, or the current session's close. Times carry
// New York's offset, as Alpaca's do.
func (b *Broker) handleClock(w http.ResponseWriter, r *http.Request, _ account) error {
	cal, loc, err := nyse()
	if err != nil {
		return err
	}
	now := b.now().In(loc).Truncate(time.Second)
	out := alpaca.ClockJSON{Timestamp: now}
	d := calendar.NewDate(now.Year(), now.Month(), now.Day())
	open, close, ok := session(cal, loc, d)
	switch {
	case ok && now.Before(open):
		out.NextOpen, out.NextClose = open, close
	case ok && now.Before(close):
		out.IsOpen = true
		next := cal.Next(d)
		out.NextOpen, _, _ = session(cal, loc, next)
		out.NextClose = close
	default:
		out.NextOpen, out.NextClose, _ = session(cal, loc, cal.Next(d))
	}
	return writeJSON(w, http.StatusOK, out)
}

// The default span of GET /v2/calendar after its start, and the longest
// span served.
const (
	defaultCalendarDays = 366
	maxCalendarDays     = 366 * 10
)

// handleCalendar answers GET /v2/calendar: NYSE's trading days from start
// (default today) to end (default a year after start), both included,
// with their regular session in New York time ("09:30" to "16:00", or
// the early close). settlement_date is the next trading day (T+1).
func (b *Broker) handleCalendar(w http.ResponseWriter, r *http.Request, _ account) error {
	cal, _, err := nyse()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	start, end := b.today(), calendar.Date{}
	if s := q.Get("start"); s != "" {
		if start, err = parseDay("start", s); err != nil {
			return err
		}
	}
	end = start.AddDays(defaultCalendarDays)
	if s := q.Get("end"); s != "" {
		if end, err = parseDay("end", s); err != nil {
			return err
		}
	}
	if end.Sub(start) > maxCalendarDays {
		return &tradekit.ParamError{Param: "end", Msg: fmt.Sprintf("must be at most %d days after start", maxCalendarDays)}
	}
	days, err := cal.Sessions(start, end)
	if err != nil {
		return &tradekit.ParamError{Param: "start", Msg: fmt.Sprintf("start and end must be dates from %d to %d", calendar.MinYear, calendar.MaxYear)}
	}
	out := make([]alpaca.CalendarDayJSON, len(days))
	for i, d := range days {
		closeAt, _ := cal.CloseTime(d)
		open := cal.Exchange().Open
		out[i] = alpaca.CalendarDayJSON{
			Date: d.String(), Open: open, Close: closeAt,
			SessionOpen: strings.ReplaceAll(open, ":", ""), SessionClose: strings.ReplaceAll(closeAt, ":", ""),
			SettlementDate: cal.Next(d).String(),
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// parseDay parses a date parameter: YYYY-MM-DD, or an RFC 3339 time,
// meaning its date.
func parseDay(param, s string) (calendar.Date, error) {
	if d, err := calendar.ParseDate(s); err == nil {
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return calendar.NewDate(t.Year(), t.Month(), t.Day()), nil
	}
	return calendar.Date{}, &tradekit.ParamError{Param: param, Msg: "must be a YYYY-MM-DD date"}
}

// errNoAsset is Alpaca's 404 for an unknown asset.
var errNoAsset = &apiError{http.StatusNotFound, codeNotFound, "asset not found"}

// assetJSON returns a Tradekit asset as Alpaca lists it: tradable while
// active (an order also needs a stored close), never marginable or
// shortable, always fractionable.
func assetJSON(a marketdata.Asset, exchange string) alpaca.AssetJSON {
	status := "inactive"
	if a.IsActive {
		status = "active"
	}
	return alpaca.AssetJSON{
		ID: a.ID.String(), Class: assetClass(a.Type), Exchange: exchange, Symbol: a.Symbol, Name: a.Name,
		Status: status, Tradable: a.IsActive, MaintenanceMarginRequirement: 100, Fractionable: true,
		Attributes: []string{},
	}
}

// exchangeSymbols returns the symbols of the stored exchanges, by id.
func (b *Broker) exchangeSymbols(r *http.Request) (map[uuid.UUID]string, error) {
	exs, err := b.md.Exchanges(r.Context())
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	m := make(map[uuid.UUID]string, len(exs))
	for _, e := range exs {
		m[e.ID] = e.Symbol
	}
	return m, nil
}

// handleAssets answers GET /v2/assets with Tradekit's assets, filtered
// by status (active, inactive), asset_class (us_equity, crypto) and
// exchange (a Tradekit exchange symbol, such as NYSE).
func (b *Broker) handleAssets(w http.ResponseWriter, r *http.Request, _ account) error {
	q := r.URL.Query()
	status, class, exchange := q.Get("status"), q.Get("asset_class"), strings.ToUpper(q.Get("exchange"))
	switch status {
	case "", "active", "inactive":
	default:
		return &tradekit.ParamError{Param: "status", Msg: "must be active or inactive"}
	}
	switch class {
	case "", "us_equity", "crypto":
	case "us_option":
		return notSimulated("options trading")
	default:
		return &tradekit.ParamError{Param: "asset_class", Msg: "must be us_equity, us_option or crypto"}
	}
	as, err := b.md.Assets(r.Context())
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	exs, err := b.exchangeSymbols(r)
	if err != nil {
		return err
	}
	out := make([]alpaca.AssetJSON, 0, len(as))
	for _, a := range as {
		j := assetJSON(a, exs[a.ExchangeID])
		if status != "" && j.Status != status || class != "" && j.Class != class || exchange != "" && j.Exchange != exchange {
			continue
		}
		out = append(out, j)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleAsset answers GET /v2/assets/{symbol}, where symbol is a symbol
// or an asset id.
func (b *Broker) handleAsset(w http.ResponseWriter, r *http.Request, _ account) error {
	s := r.PathValue("symbol")
	var a marketdata.Asset
	var err error
	if id, perr := uuid.Parse(s); perr == nil {
		a, err = b.md.Asset(r.Context(), id)
	} else {
		a, err = b.md.AssetBySymbol(r.Context(), marketdata.NormalizeSymbol(s))
	}
	if errors.Is(err, tradekit.ErrNotFound) {
		return errNoAsset
	}
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	ex, err := b.md.Exchange(r.Context(), a.ExchangeID)
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	return writeJSON(w, http.StatusOK, assetJSON(a, ex.Symbol))
}
