package feedtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
)

// NewMassive starts a fake Massive REST API serving m: grouped daily
// aggregates (raw only: adjusted=false is required), the tickers
// reference, splits and dividends, with next_url pages on Massive's public
// host as the real API gives them. It accepts Key as the apiKey parameter
// or a Bearer header, and answers 401 with the recorded body otherwise.
func NewMassive(tb testing.TB, m *Market) *Server {
	return newServer(tb, "massive", m, (*Server).massive)
}

// massivePublic is the host Massive's next_url links name.
const massivePublic = "https://api.massive.com"

func (s *Server) massive(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("apiKey") != s.Key && r.Header.Get("Authorization") != "Bearer "+s.Key {
		s.writeError(w, http.StatusUnauthorized)
		return
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v2/aggs/grouped/locale/us/market/stocks/"):
		s.grouped(w, q, strings.TrimPrefix(p, "/v2/aggs/grouped/locale/us/market/stocks/"))
	case p == "/v3/reference/tickers":
		s.tickers(w, q)
	case p == "/v3/reference/splits":
		s.actions(w, q, p, "execution_date", s.m.Splits)
	case p == "/v3/reference/dividends":
		s.actions(w, q, p, "ex_dividend_date", s.m.Dividends)
	default:
		s.writeError(w, http.StatusNotFound)
	}
}

// num is a JSON number written as the decimal's digits.
type num = json.Number

func (s *Server) grouped(w http.ResponseWriter, q url.Values, date string) {
	d, err := calendar.ParseDate(date)
	if err != nil || q.Get("adjusted") != "false" {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"status":"ERROR","request_id":"x","error":"Could not parse the date or the adjusted parameter"}`))
		return
	}
	bars := s.m.day(d)
	type agg struct {
		T  string `json:"T"`
		C  num    `json:"c"`
		H  num    `json:"h"`
		L  num    `json:"l"`
		N  int    `json:"n"`
		O  num    `json:"o"`
		Ts int64  `json:"t"`
		V  int64  `json:"v"`
		VW num    `json:"vw"`
	}
	out := struct {
		Adjusted     bool   `json:"adjusted"`
		QueryCount   int    `json:"queryCount"`
		RequestID    string `json:"request_id"`
		Results      []agg  `json:"results,omitempty"`
		ResultsCount int    `json:"resultsCount"`
		Status       string `json:"status"`
	}{QueryCount: len(bars), RequestID: "feedtest", ResultsCount: len(bars), Status: "OK"}
	ts := d.Time(nyc()).Add(16 * 3600e9).UnixMilli()
	for _, b := range bars {
		out.Results = append(out.Results, agg{T: b.Symbol, C: num(b.Close.String()), H: num(b.High.String()), L: num(b.Low.String()),
			N: 100, O: num(b.Open.String()), Ts: ts, V: b.Volume, VW: num(b.Close.String())})
	}
	body, _ := json.Marshal(out)
	writeJSON(w, body)
}

func (s *Server) tickers(w http.ResponseWriter, q url.Values) {
	type ticker struct {
		Active          bool   `json:"active"`
		CurrencyName    string `json:"currency_name"`
		Locale          string `json:"locale"`
		Market          string `json:"market"`
		Name            string `json:"name"`
		PrimaryExchange string `json:"primary_exchange"`
		Ticker          string `json:"ticker"`
		Type            string `json:"type"`
	}
	var all []ticker
	for _, sym := range s.m.Symbols {
		if s.m.Unknown[sym] {
			continue
		}
		mic := "XNYS"
		if len(sym) > 0 && sym[len(sym)-1]%2 == 1 {
			mic = "XNAS"
		}
		all = append(all, ticker{Active: true, CurrencyName: "usd", Locale: "us", Market: "stocks", Name: s.m.Names[sym],
			PrimaryExchange: mic, Ticker: sym, Type: "CS"})
	}
	if t := q.Get("ticker"); t != "" {
		var one []ticker
		for _, x := range all {
			if x.Ticker == t {
				one = append(one, x)
			}
		}
		all = one
	}
	off, size := s.page(q.Get("cursor"), q.Get("limit"))
	out := struct {
		Count     int      `json:"count"`
		NextURL   string   `json:"next_url,omitempty"`
		RequestID string   `json:"request_id"`
		Results   []ticker `json:"results"`
		Status    string   `json:"status"`
	}{RequestID: "feedtest", Status: "OK", Results: []ticker{}}
	end := min(off+size, len(all))
	if off < end {
		out.Results = all[off:end]
	}
	out.Count = len(out.Results)
	if end < len(all) {
		nq := url.Values{"cursor": {strconv.Itoa(end)}, "limit": {strconv.Itoa(size)}}
		out.NextURL = massivePublic + "/v3/reference/tickers?" + nq.Encode()
	}
	body, _ := json.Marshal(out)
	writeJSON(w, body)
}

func (s *Server) actions(w http.ResponseWriter, q url.Values, path, dateKey string, acts []feed.Action) {
	var sel []feed.Action
	for _, a := range acts {
		if gte := q.Get(dateKey + ".gte"); gte != "" && a.Date.String() < gte {
			continue
		}
		if lte := q.Get(dateKey + ".lte"); lte != "" && a.Date.String() > lte {
			continue
		}
		sel = append(sel, a)
	}
	off, size := s.page(q.Get("cursor"), q.Get("limit"))
	end := min(off+size, len(sel))
	results := []map[string]any{}
	for _, a := range sel[min(off, end):end] {
		if a.Kind == marketdata.Split {
			results = append(results, map[string]any{"execution_date": a.Date.String(), "id": "E" + a.Symbol + a.Date.String(),
				"split_from": 1, "split_to": num(a.Value.String()), "ticker": a.Symbol})
		} else {
			results = append(results, map[string]any{"cash_amount": num(a.Value.String()), "currency": "USD", "dividend_type": "CD",
				"ex_dividend_date": a.Date.String(), "frequency": 4, "id": "E" + a.Symbol + a.Date.String(),
				"pay_date": a.Date.AddDays(7).String(), "record_date": a.Date.AddDays(1).String(), "ticker": a.Symbol})
		}
	}
	out := map[string]any{"request_id": "feedtest", "results": results, "status": "OK"}
	if end < len(sel) {
		nq := url.Values{"cursor": {strconv.Itoa(end)}, "limit": {strconv.Itoa(size)}}
		for k, v := range q {
			if strings.HasPrefix(k, dateKey) {
				nq[k] = v
			}
		}
		out["next_url"] = massivePublic + path + "?" + nq.Encode()
	}
	body, _ := json.Marshal(out)
	writeJSON(w, body)
}
