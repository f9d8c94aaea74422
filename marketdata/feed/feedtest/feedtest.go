package feedtest

import (
	"embed"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
)

//go:embed testdata
var recorded embed.FS

// Recorded returns the recorded answer testdata/name, such as
// "massive/error_429.json".
func Recorded(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := recorded.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatalf("feedtest: %v", err)
	}
	return b
}

// Market is a synthetic market: symbols with names, raw daily bars of
// every NYSE session of a range, splits and dividends. The raw prices
// step at a split's ex-date as real ones do.
type Market struct {
	mu sync.Mutex
	// Symbols lists the symbols, sorted.
	Symbols []string
	// Names gives each symbol's name in the tickers reference.
	Names map[string]string
	// Unknown holds the symbols that trade but that no reference lists.
	Unknown map[string]bool
	// Days lists the sessions with bars, oldest first; Bars holds them.
	Days []calendar.Date
	Bars map[calendar.Date][]feed.Bar
	// Splits and Dividends are the corporate actions, by ex-date.
	Splits, Dividends []feed.Action
}

// NewMarket returns a market of n symbols (S0000, S0001, …) with a bar for
// each on every NYSE session from from to to, a 4-for-1 split of S0001 on
// the range's 6th session and a dividend of 0.50 of S0002 on its 9th (when
// the range has them).
func NewMarket(n int, from, to calendar.Date) *Market {
	cal, _ := calendar.Lookup("XNYS")
	days, err := cal.Sessions(from, to)
	if err != nil {
		panic("feedtest: " + err.Error())
	}
	m := &Market{Names: map[string]string{}, Unknown: map[string]bool{}, Days: days, Bars: map[calendar.Date][]feed.Bar{}}
	for i := range n {
		s := fmt.Sprintf("S%04d", i)
		m.Symbols = append(m.Symbols, s)
		m.Names[s] = fmt.Sprintf("Synthetic Company %d Inc.", i)
	}
	if len(days) > 5 && n > 1 {
		m.Splits = append(m.Splits, feed.Action{Symbol: "S0001", Date: days[5], Kind: marketdata.Split, Value: decimal.NewFromInt(4)})
	}
	if len(days) > 8 && n > 2 {
		m.Dividends = append(m.Dividends, feed.Action{Symbol: "S0002", Date: days[8], Kind: marketdata.Dividend, Value: decimal.RequireFromString("0.5")})
	}
	for di, d := range days {
		bars := make([]feed.Bar, 0, n)
		for i, s := range m.Symbols {
			base := decimal.NewFromInt(int64(20 + i%180))
			close := base.Add(decimal.New(int64((di*7+i)%50), -2))
			for _, sp := range m.Splits {
				if sp.Symbol == s && !d.Before(sp.Date) {
					close = close.DivRound(sp.Value, 4)
				}
			}
			bars = append(bars, feed.Bar{Symbol: s, Open: close, High: close.Add(decimal.New(5, -2)), Low: close.Sub(decimal.New(5, -2)),
				Close: close, Volume: int64(1000 + i*10 + di)})
		}
		m.Bars[d] = bars
	}
	return m
}

// SetBar replaces (or adds) the bar of b.Symbol on day.
func (m *Market) SetBar(day calendar.Date, b feed.Bar) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bars := m.Bars[day]
	for i := range bars {
		if bars[i].Symbol == b.Symbol {
			bars[i] = b
			return
		}
	}
	m.Bars[day] = append(bars, b)
}

// day returns the bars of day, sorted by symbol.
func (m *Market) day(d calendar.Date) []feed.Bar {
	m.mu.Lock()
	defer m.mu.Unlock()
	bars := append([]feed.Bar(nil), m.Bars[d]...)
	sort.Slice(bars, func(i, j int) bool { return bars[i].Symbol < bars[j].Symbol })
	return bars
}

// failure is an answer the server gives instead of the real one.
type failure struct {
	prefix     string
	status     int
	left       int
	retryAfter string
}

// Server is a fake provider. Its fields may be changed before requests.
type Server struct {
	// URL is the server's base URL.
	URL string
	// Key is the API key it accepts (Massive) or key id (Alpaca), Secret
	// Alpaca's secret key.
	Key, Secret string
	// PageSize caps the rows of a page (tickers, splits, dividends, bars,
	// corporate actions), so that answers are cut into pages.
	PageSize int

	m        *Market
	provider string
	mu       sync.Mutex
	requests []string
	fails    []*failure
}

func newServer(tb testing.TB, provider string, m *Market, h func(*Server, http.ResponseWriter, *http.Request)) *Server {
	s := &Server{Key: "test-key", Secret: "test-secret", PageSize: 1000, m: m, provider: provider}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		q := r.URL.Query()
		q.Del("apiKey")
		s.requests = append(s.requests, r.URL.Path+"?"+q.Encode())
		var f *failure
		for _, x := range s.fails {
			if x.left > 0 && strings.HasPrefix(r.URL.Path, x.prefix) {
				x.left--
				f = x
				break
			}
		}
		s.mu.Unlock()
		if f != nil {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			s.writeError(w, f.status)
			return
		}
		h(s, w, r)
	}))
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Fail makes the next times requests whose path starts with prefix get
// status, with the recorded body of that status and, when retryAfter is
// not empty, a Retry-After header.
func (s *Server) Fail(prefix string, status, times int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, &failure{prefix: prefix, status: status, left: times, retryAfter: retryAfter})
}

// Requests returns the paths and queries (without apiKey) of the requests
// received whose path starts with prefix, in order.
func (s *Server) Requests(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// writeError writes the recorded error body of status (for a status with
// no recording, a 500 body).
func (s *Server) writeError(w http.ResponseWriter, status int) {
	body, err := recorded.ReadFile(fmt.Sprintf("testdata/%s/error_%d.json", s.provider, status))
	if err != nil {
		body = []byte(`{"status":"ERROR","error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// page returns the offset and size of the page a cursor and limit ask for.
func (s *Server) page(cursor, limit string) (int, int) {
	off, size := 0, s.PageSize
	fmt.Sscan(cursor, &off)
	var l int
	if _, err := fmt.Sscan(limit, &l); err == nil && l > 0 && l < size {
		size = l
	}
	return off, size
}

func mustDecimal(s string) decimal.Decimal { return decimal.RequireFromString(s) }
