package demo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// addIndustries adds the industry tree and returns the ids of the
// industries (lowest level) by name.
func (set *Set) addIndustries() map[string]uuid.UUID {
	ids := map[string]uuid.UUID{}
	var groups, industries []marketdata.Industry
	for _, sc := range sectorTree {
		sid := marketdata.IndustryID(marketdata.Sector, sc.name)
		set.Industries = append(set.Industries, marketdata.Industry{ID: sid, Name: sc.name, Level: marketdata.Sector})
		for _, g := range sc.groups {
			gid := marketdata.IndustryID(marketdata.IndustryGroup, g.name)
			groups = append(groups, marketdata.Industry{ID: gid, Name: g.name, Level: marketdata.IndustryGroup, ParentID: ptr(sid)})
			for _, name := range g.industries {
				iid := marketdata.IndustryID(marketdata.IndustryLevel, name)
				industries = append(industries, marketdata.Industry{ID: iid, Name: name, Level: marketdata.IndustryLevel, ParentID: ptr(gid)})
				ids[name] = iid
			}
		}
	}
	set.Industries = append(append(set.Industries, groups...), industries...)
	return ids
}

// addCompany adds the profile and fundamentals of a stock.
//
// lastClose is the simulated last close and split the product of the
// asset's split ratios: the traded close is lastClose/split, the shares
// outstanding split times the spec's.
func (set *Set) addCompany(rng *rand.Rand, sp spec, a marketdata.Asset, lastClose, split float64, end calendar.Date) {
	var sectorName string
	for _, sc := range sectorTree {
		for _, g := range sc.groups {
			for _, name := range g.industries {
				if name == sp.industry {
					sectorName = sc.name
				}
			}
		}
	}
	mcap := decimal.NewFromFloat(sp.shares * 1e6 * lastClose).Round(-3)
	host := "www." + strings.ToLower(sp.symbol) + ".example" // .example is reserved (RFC 2606): no real site
	set.Profiles = append(set.Profiles, marketdata.Profile{
		AssetID: a.ID,
		Description: fmt.Sprintf("%s is a fictional %s company listed on %s. It is part of Tradekit's demo data set: "+
			"its prices and figures are synthetic and describe no real company.", sp.name, strings.ToLower(sp.industry), sp.exchange),
		Sector: sectorName, Industry: sp.industry, MarketCap: mcap,
		Website: "https://" + host, LogoURL: "https://" + host + "/logo.png",
	})
	pe := 9 + 29*rng.Float64()
	if sp.drift > 0.12 {
		pe += 15 // growth companies are dearer
	}
	yield := 0.045 * rng.Float64()
	if sp.drift > 0.12 {
		yield *= 0.1
	}
	sales := 0.8 + 6*rng.Float64() // price-to-sales
	set.Fundamentals = append(set.Fundamentals, marketdata.Fundamentals{
		AssetID:       a.ID,
		PERatio:       decimal.NewFromFloat(pe).Round(2),
		EPS:           decimal.NewFromFloat(lastClose / split / pe).Round(2),
		Revenue:       decimal.NewFromFloat(sp.shares * 1e6 * lastClose / sales).Round(-5),
		MarketCap:     mcap,
		DividendYield: decimal.NewFromFloat(yield).Round(4),
		Beta:          decimal.NewFromFloat(sp.rho * sp.vol / 0.16).Round(2),
		UpdatedAt:     time.Date(end.Year, end.Month, end.Day, 21, 0, 0, 0, time.UTC),
	})
}

// addActions applies the asset's splits of splitSpecs to its bars (in
// place) and adds them and its dividends of dividendSpecs to set.Actions,
// those with an ex-date after the first bar and not after the last. It
// returns the product of the split ratios applied (1 without).
func (set *Set) addActions(sp spec, bars []marketdata.Price) float64 {
	if len(bars) < 2 {
		return 1
	}
	// exDate returns the first session on or after d, if a bar after the
	// first has it.
	exDate := func(d calendar.Date) (int, bool) {
		i, _ := slices.BinarySearchFunc(bars, d, func(p marketdata.Price, d calendar.Date) int { return p.Date.Compare(d) })
		return i, i > 0 && i < len(bars)
	}
	var acts []marketdata.Action
	product := 1.0
	for _, s := range splitSpecs {
		i, ok := exDate(s.date)
		if s.symbol != sp.symbol || !ok {
			continue
		}
		ratio := decimal.NewFromInt(s.ratio)
		tick := decimal.New(1, -sp.decimals)
		for j := i; j < len(bars); j++ {
			p := &bars[j]
			for _, x := range []*decimal.Decimal{&p.Open, &p.High, &p.Low, &p.Close} {
				*x = decimal.Max(x.DivRound(ratio, sp.decimals), tick) // rounding keeps low <= open, close <= high
			}
			p.Volume *= s.ratio
		}
		product *= float64(s.ratio)
		acts = append(acts, marketdata.Action{AssetID: bars[0].AssetID, Date: bars[i].Date, Kind: marketdata.Split, Value: ratio})
	}
	for _, dv := range dividendSpecs {
		if dv.symbol != sp.symbol {
			continue
		}
		amount, raise := decimal.RequireFromString(dv.amount), decimal.RequireFromString(dv.raise)
		for y := Start.Year; y <= bars[len(bars)-1].Date.Year; y++ {
			for _, m := range []time.Month{time.February, time.May, time.August, time.November} {
				if i, ok := exDate(calendar.Date{Year: y, Month: m, Day: 15}); ok {
					acts = append(acts, marketdata.Action{AssetID: bars[0].AssetID, Date: bars[i].Date, Kind: marketdata.Dividend,
						Value: amount.Add(raise.Mul(decimal.NewFromInt(int64(y - Start.Year))))})
				}
			}
		}
	}
	slices.SortStableFunc(acts, func(a, b marketdata.Action) int { return a.Date.Compare(b.Date) })
	set.Actions = append(set.Actions, acts...)
	return product
}

// addIndexes adds the indexes and their membership periods: at every
// rebalance (the first NYSE session of each year), the largest stocks by
// market capitalisation on the last close before it.
func (set *Set) addIndexes(closes [][]dayClose, start, end calendar.Date) error {
	nyse, ok := calendar.Lookup("NYSE")
	if !ok {
		return fmt.Errorf("demo: no NYSE calendar")
	}
	var rebalances []calendar.Date
	for y := start.Year; y <= end.Year; y++ {
		d := nyse.Next(calendar.Date{Year: y - 1, Month: time.December, Day: 31})
		if !d.Before(start) && !d.After(end) {
			rebalances = append(rebalances, d)
		}
	}
	for _, ix := range indexSpecs {
		x := marketdata.Index{ID: marketdata.IndexID(ix.symbol), Symbol: ix.symbol, Name: ix.name, Description: ix.description}
		set.Indexes = append(set.Indexes, x)
		open := map[int]calendar.Date{} // spec index -> start of its current period
		for _, rb := range rebalances {
			type cand struct {
				i   int
				cap float64
			}
			var cands []cand
			for i, sp := range specs {
				if sp.typ != marketdata.Stock || ix.exchanges != nil && !contains(ix.exchanges, sp.exchange) {
					continue
				}
				cands = append(cands, cand{i, sp.shares * closeBefore(closes[i], rb, sp.price) * usdPer[sp.currency]})
			}
			sort.SliceStable(cands, func(a, b int) bool { return cands[a].cap > cands[b].cap })
			members := map[int]bool{}
			for _, c := range cands[:min(ix.size, len(cands))] {
				members[c.i] = true
				if _, ok := open[c.i]; !ok {
					open[c.i] = rb
				}
			}
			for i, from := range open {
				if !members[i] {
					set.Constituents = append(set.Constituents, marketdata.Constituent{
						IndexID: x.ID, AssetID: marketdata.AssetID(specs[i].symbol), From: from, To: rb})
					delete(open, i)
				}
			}
		}
		for i, from := range open {
			set.Constituents = append(set.Constituents, marketdata.Constituent{
				IndexID: x.ID, AssetID: marketdata.AssetID(specs[i].symbol), From: from})
		}
	}
	sort.SliceStable(set.Constituents, func(a, b int) bool {
		ca, cb := set.Constituents[a], set.Constituents[b]
		if ca.IndexID != cb.IndexID {
			return ca.IndexID.String() < cb.IndexID.String()
		}
		if ca.AssetID != cb.AssetID {
			return ca.AssetID.String() < cb.AssetID.String()
		}
		return ca.From.Before(cb.From)
	})
	return nil
}

// closeBefore returns the last close strictly before d, or first when
// there is none.
func closeBefore(cl []dayClose, d calendar.Date, first float64) float64 {
	i := sort.Search(len(cl), func(i int) bool { return !cl[i].date.Before(d) })
	if i == 0 {
		return first
	}
	return cl[i-1].close
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
