package universe

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

// Universe is a backtest's assets and days.
type Universe struct {
	Name   string
	Assets []backtest.Asset
	// Days are the exchange calendar's sessions when every asset trades
	// on the same calendar; nil otherwise (the assets' dates).
	Days     []calendar.Date
	Calendar string // the calendar's exchange, "" for none
}

// demoSet is the demo data set, generated once per process: a command
// needs it once, and the examples' tests run command after command in one
// process (a generation takes most of a second, many under the race
// detector). Universes only read it.
var demoSet = sync.OnceValues(func() (*demo.Set, error) { return demo.Generate(demo.Config{}) })

// Demo returns a universe of the demo data set: the members of the index
// (with their point-in-time membership) when index is not "", else the
// symbols, comma-separated. Its prices are SYNTHETIC, and back-adjusted
// for the set's splits and dividends (marketdata.Adjust).
func Demo(index, symbols string) (*Universe, error) {
	set, err := demoSet()
	if err != nil {
		return nil, err
	}
	bars := map[uuid.UUID][]marketdata.Price{}
	for _, p := range set.Prices {
		bars[p.AssetID] = append(bars[p.AssetID], p)
	}
	// The set's prices are as traded: a split drops them by its ratio.
	// Back-adjust them for the splits and dividends, as the API's
	// backtests do by default (adjusted=true), so that a split is no loss.
	actions := map[uuid.UUID][]marketdata.Action{}
	for _, a := range set.Actions {
		actions[a.AssetID] = append(actions[a.AssetID], a)
	}
	for id, as := range actions {
		bars[id] = marketdata.Adjust(bars[id], as)
	}
	bySymbol := map[string]marketdata.Asset{}
	for _, a := range set.Assets {
		bySymbol[a.Symbol] = a
	}
	u := &Universe{}
	var assets []marketdata.Asset
	spans := map[uuid.UUID][]backtest.Span{}
	switch {
	case index != "":
		var ix *marketdata.Index
		for i := range set.Indexes {
			if strings.EqualFold(set.Indexes[i].Symbol, index) {
				ix = &set.Indexes[i]
			}
		}
		if ix == nil {
			return nil, fmt.Errorf("no demo index %q: the demo indexes are %s", index, indexSymbols(set))
		}
		for _, c := range set.Constituents {
			if c.IndexID != ix.ID {
				continue
			}
			if spans[c.AssetID] == nil {
				for _, a := range set.Assets {
					if a.ID == c.AssetID {
						assets = append(assets, a)
					}
				}
			}
			spans[c.AssetID] = append(spans[c.AssetID], backtest.Span{From: c.From, To: c.To})
		}
		u.Name = fmt.Sprintf("%s (%s), %d members over time", ix.Symbol, ix.Name, len(assets))
	default:
		for _, s := range strings.Split(symbols, ",") {
			a, ok := bySymbol[marketdata.NormalizeSymbol(s)]
			if !ok {
				return nil, fmt.Errorf("no demo asset %q", s)
			}
			assets = append(assets, a)
		}
		u.Name = symbols
	}
	codes := map[uuid.UUID]string{}
	for _, ex := range calendar.Exchanges() {
		codes[marketdata.ExchangeID(ex.Symbol)] = ex.Symbol
	}
	var exchanges []string
	for _, a := range assets {
		u.Assets = append(u.Assets, backtest.Asset{Symbol: a.Symbol, Bars: marketdata.PriceSeries(bars[a.ID]), Member: spans[a.ID]})
		exchanges = append(exchanges, codes[a.ExchangeID])
	}
	u.Days, u.Calendar = backtest.Sessions(u.Assets, exchanges)
	return u, nil
}

// CSV returns a universe of one asset whose daily bars are in the CSV
// file that `tradekit import prices` reads.
func CSV(path string) (*Universe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := marketdata.ReadPricesCSV(f)
	if err != nil {
		return nil, err
	}
	return &Universe{Name: path, Assets: []backtest.Asset{{Symbol: path, Bars: marketdata.PriceSeries(ps)}}}, nil
}

func indexSymbols(set *demo.Set) string {
	var s []string
	for _, ix := range set.Indexes {
		s = append(s, ix.Symbol)
	}
	return strings.Join(s, ", ")
}
