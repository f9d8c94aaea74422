package feedtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
)

// NewAlpaca starts a fake Alpaca market-data API serving m: /v2/stocks/bars
// (timeframe=1Day and adjustment=raw required, pages by next_page_token)
// and /v1/corporate-actions (forward and reverse splits, cash dividends).
// It accepts Key and Secret in the APCA-API-KEY-ID and APCA-API-SECRET-KEY
// headers, and answers 401 with the recorded body otherwise.
func NewAlpaca(tb testing.TB, m *Market) *Server {
	return newServer(tb, "alpaca", m, (*Server).alpaca)
}

func nyc() *time.Location {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic("feedtest: " + err.Error())
	}
	return loc
}

func (s *Server) alpaca(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("APCA-API-KEY-ID") != s.Key || r.Header.Get("APCA-API-SECRET-KEY") != s.Secret {
		s.writeError(w, http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/v2/stocks/bars":
		s.alpacaBars(w, q)
	case "/v1/corporate-actions":
		s.alpacaActions(w, q)
	default:
		s.writeError(w, http.StatusNotFound)
	}
}

// alpacaDate parses a start or end parameter: RFC 3339 or a date.
func alpacaDate(v string) (calendar.Date, bool) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return calendar.DateOf(t.In(nyc())), true
	}
	d, err := calendar.ParseDate(v)
	return d, err == nil
}

func (s *Server) alpacaBars(w http.ResponseWriter, q url.Values) {
	from, ok1 := alpacaDate(q.Get("start"))
	to, ok2 := alpacaDate(q.Get("end"))
	if q.Get("timeframe") != "1Day" || q.Get("adjustment") != "raw" || !ok1 || !ok2 || q.Get("symbols") == "" {
		w.WriteHeader(http.StatusUnprocessableEntity)
		w.Write([]byte(`{"code":42210000,"message":"invalid timeframe, adjustment, start, end or symbols"}`))
		return
	}
	want := map[string]bool{}
	for _, sym := range strings.Split(q.Get("symbols"), ",") {
		want[sym] = true
	}
	type bar struct {
		C  json.Number `json:"c"`
		H  json.Number `json:"h"`
		L  json.Number `json:"l"`
		N  int         `json:"n"`
		O  json.Number `json:"o"`
		T  string      `json:"t"`
		V  int64       `json:"v"`
		VW json.Number `json:"vw"`
	}
	type row struct {
		sym string
		b   bar
	}
	// Alpaca orders by symbol, then time.
	var rows []row
	for _, sym := range s.m.Symbols {
		if !want[sym] {
			continue
		}
		for _, d := range s.m.Days {
			if d.Before(from) || d.After(to) {
				continue
			}
			for _, b := range s.m.day(d) {
				if b.Symbol == sym {
					rows = append(rows, row{sym, bar{C: json.Number(b.Close.String()), H: json.Number(b.High.String()),
						L: json.Number(b.Low.String()), N: 100, O: json.Number(b.Open.String()),
						T: d.Time(nyc()).UTC().Format(time.RFC3339), V: b.Volume, VW: json.Number(b.Close.String())}})
				}
			}
		}
	}
	off, size := s.page(q.Get("page_token"), q.Get("limit"))
	end := min(off+size, len(rows))
	out := struct {
		Bars          map[string][]bar `json:"bars"`
		NextPageToken *string          `json:"next_page_token"`
	}{Bars: map[string][]bar{}}
	for _, r := range rows[min(off, end):end] {
		out.Bars[r.sym] = append(out.Bars[r.sym], r.b)
	}
	if end < len(rows) {
		tok := strconv.Itoa(end)
		out.NextPageToken = &tok
	}
	body, _ := json.Marshal(out)
	writeJSON(w, body)
}

func (s *Server) alpacaActions(w http.ResponseWriter, q url.Values) {
	from, ok1 := alpacaDate(q.Get("start"))
	to, ok2 := alpacaDate(q.Get("end"))
	if !ok1 || !ok2 {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"code":40010001,"message":"invalid start or end"}`))
		return
	}
	var want map[string]bool
	if v := q.Get("symbols"); v != "" {
		want = map[string]bool{}
		for _, sym := range strings.Split(v, ",") {
			want[sym] = true
		}
	}
	var sel []feed.Action
	for _, a := range append(append([]feed.Action(nil), s.m.Splits...), s.m.Dividends...) {
		if a.Date.Before(from) || a.Date.After(to) || (want != nil && !want[a.Symbol]) {
			continue
		}
		sel = append(sel, a)
	}
	off, size := s.page(q.Get("page_token"), q.Get("limit"))
	end := min(off+size, len(sel))
	ca := map[string][]map[string]any{}
	for _, a := range sel[min(off, end):end] {
		if a.Kind == marketdata.Split {
			key, newRate, oldRate := "forward_splits", json.Number(a.Value.String()), json.Number("1")
			if a.Value.LessThan(oneDecimal) {
				key, newRate, oldRate = "reverse_splits", "1", json.Number(oneDecimal.Div(a.Value).Round(6).String())
			}
			ca[key] = append(ca[key], map[string]any{"symbol": a.Symbol, "new_rate": newRate, "old_rate": oldRate,
				"process_date": a.Date.String(), "ex_date": a.Date.String()})
		} else {
			ca["cash_dividends"] = append(ca["cash_dividends"], map[string]any{"symbol": a.Symbol, "rate": json.Number(a.Value.String()),
				"special": false, "foreign": false, "process_date": a.Date.String(), "ex_date": a.Date.String(),
				"payable_date": a.Date.AddDays(14).String()})
		}
	}
	out := map[string]any{"corporate_actions": ca, "next_page_token": nil}
	if end < len(sel) {
		out["next_page_token"] = strconv.Itoa(end)
	}
	body, _ := json.Marshal(out)
	writeJSON(w, body)
}

var oneDecimal = mustDecimal("1")
