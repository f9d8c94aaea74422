package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// The defaults of [Config]: prices from Start to End, drawn from a PCG
// generator seeded with Seed1 and Seed2.
var (
	Start = calendar.Date{Year: 2016, Month: time.January, Day: 1}
	End   = calendar.Date{Year: 2026, Month: time.October, Day: 30}
)

// Seed1 and Seed2 seed the default random source, rand.NewPCG(Seed1, Seed2).
const (
	Seed1 = 20161
	Seed2 = 20261030
)

// Config parameterises [Generate]. The zero value gives the standard demo
// data set.
type Config struct {
	// Start and End bound the simulated prices (both included). Zero:
	// the package's Start and End.
	Start, End calendar.Date
	// Rand is the random source. Nil: rand.New(rand.NewPCG(Seed1, Seed2)).
	// The same source state gives the same data set, bit for bit.
	Rand *rand.Rand
}

// Set is a generated demo universe, ready for [Load].
type Set struct {
	// Industries are parents first: sectors, groups, industries.
	Industries   []marketdata.Industry
	Assets       []marketdata.Asset
	Profiles     []marketdata.Profile
	Fundamentals []marketdata.Fundamentals
	Indexes      []marketdata.Index
	Constituents []marketdata.Constituent
	// Prices holds every asset's bars, asset by asset, oldest first, as
	// traded (after the splits of Actions).
	Prices []marketdata.Price
	// Actions holds the splits and dividends whose ex-dates fall after
	// an asset's first bar, asset by asset, oldest first.
	Actions []marketdata.Action
}

// market regimes: the common state that sets every asset's drift and
// volatility multiplier.
type regime struct {
	name  string
	drift float64 // annualised drift added for a market loading of 1
	vol   float64 // volatility multiplier for a market loading of 1
	stay  float64 // daily probability of staying in the regime
}

var regimes = [...]regime{
	{"bull", 0.08, 0.85, 0.996},
	{"bear", -0.30, 1.6, 0.985},
	{"range", 0.0, 1.0, 0.993},
}

// GARCH(1,1) parameters of the daily variance h:
//
//	h[t] = omega + alpha*eps[t-1]^2 + beta*h[t-1],  omega = s2*(1-alpha-beta)
//
// with s2 the asset's long-run daily variance.
const (
	garchAlpha = 0.08
	garchBeta  = 0.90
)

// fxReversion is the annual rate at which an FX pair's drift pulls its log
// rate back towards its first value (an Ornstein-Uhlenbeck term).
const fxReversion = 0.5

// Generate builds the demo universe: at least 60 assets (stocks, ETFs, FX
// pairs, fictional crypto coins and commodities) on the calendar
// exchanges, each with synthetic daily bars on its exchange's trading days
// (crypto every day, FX every weekday but 1 January and 25 December), the
// industry tree, company profiles and fundamentals, and indexes rebalanced
// every January from the simulated market capitalisations.
//
// Prices follow a regime-switching geometric Brownian motion with
// GARCH(1,1) volatility clustering: a Markov chain of market regimes
// (bull, bear, range) sets drifts and volatility multipliers; each asset's
// daily log return is
//
//	r[t] = mu[t]/N - m[t]^2*h[t]/2 + m[t]*eps[t],  eps[t] = sqrt(h[t]) * (rho*z[t] + sqrt(1-rho^2)*e[t])
//
// with N the sessions per year (252, or 365 for crypto), m the regime's
// volatility multiplier, z the common market shock, e the asset's own
// shock and rho its market loading. Open, high and low are drawn around
// the close-to-close move and rounded to the asset's tick, so that
// low <= min(open, close) and high >= max(open, close) always hold.
func Generate(cfg Config) (*Set, error) {
	if cfg.Start == (calendar.Date{}) {
		cfg.Start = Start
	}
	if cfg.End == (calendar.Date{}) {
		cfg.End = End
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(Seed1, Seed2))
	}
	if !cfg.End.After(cfg.Start) {
		return nil, fmt.Errorf("demo: end %s is not after start %s", cfg.End, cfg.Start)
	}
	rng := cfg.Rand
	set := &Set{}
	industryIDs := set.addIndustries()

	// The market: a regime and a shock for every calendar day.
	days := cfg.End.Sub(cfg.Start) + 1
	mkt := make([]float64, days)
	reg := make([]int, days)
	state := 0
	for i := range days {
		if rng.Float64() > regimes[state].stay {
			state = (state + 1 + rng.IntN(len(regimes)-1)) % len(regimes)
		}
		reg[i], mkt[i] = state, rng.NormFloat64()
	}

	closes := make([][]dayClose, len(specs))
	for i, sp := range specs {
		sessions, err := sessionsOf(sp, cfg.Start, cfg.End)
		if err != nil {
			return nil, err
		}
		a := marketdata.Asset{
			ID: marketdata.AssetID(sp.symbol), Symbol: sp.symbol, Name: sp.name, Type: sp.typ,
			ExchangeID: marketdata.ExchangeID(sp.exchange), Currency: sp.currency, IsActive: true,
		}
		if sp.industry != "" {
			id, ok := industryIDs[sp.industry]
			if !ok {
				return nil, fmt.Errorf("demo: %s: unknown industry %q", sp.symbol, sp.industry)
			}
			a.IndustryID = &id
		}
		set.Assets = append(set.Assets, a)
		bars, cl := simulate(rng, sp, a, sessions, cfg.Start, mkt, reg)
		split := set.addActions(sp, bars) // draws nothing from rng
		set.Prices = append(set.Prices, bars...)
		closes[i] = cl // as simulated: market caps count the shares a split adds
		if sp.typ == marketdata.Stock {
			set.addCompany(rng, sp, a, cl[len(cl)-1].close, split, cfg.End)
		}
	}
	if err := set.addIndexes(closes, cfg.Start, cfg.End); err != nil {
		return nil, err
	}
	return set, nil
}

// dayClose is an asset's close on a session.
type dayClose struct {
	date  calendar.Date
	close float64
}

func ptr[T any](v T) *T { return &v }

// sessionsOf returns the dates on which sp trades.
func sessionsOf(sp spec, from, to calendar.Date) ([]calendar.Date, error) {
	if sp.typ == marketdata.FX {
		var out []calendar.Date
		for d := from; !d.After(to); d = d.AddDays(1) {
			wd := d.Weekday()
			if wd == time.Saturday || wd == time.Sunday || d.Month == time.January && d.Day == 1 || d.Month == time.December && d.Day == 25 {
				continue
			}
			out = append(out, d)
		}
		return out, nil
	}
	cal, ok := calendar.Lookup(sp.exchange)
	if !ok {
		return nil, fmt.Errorf("demo: %s: no calendar for %s", sp.symbol, sp.exchange)
	}
	ss, err := cal.Sessions(from, to)
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", sp.symbol, err)
	}
	return ss, nil
}

// simulate draws the bars of one asset on its sessions.
func simulate(rng *rand.Rand, sp spec, a marketdata.Asset, sessions []calendar.Date, start calendar.Date, mkt []float64, reg []int) ([]marketdata.Price, []dayClose) {
	perYear := 252.0
	if sp.typ == marketdata.Crypto {
		perYear = 365
	}
	s2 := sp.vol * sp.vol / perYear // long-run daily variance
	omega := s2 * (1 - garchAlpha - garchBeta)
	h, eps := s2, 0.0
	loading := math.Abs(sp.rho)
	idio := math.Sqrt(1 - sp.rho*sp.rho)
	// The asset's own trend regime: up, flat or down, switching about
	// once a year.
	trend := 0.0
	tick := decimal.New(1, -sp.decimals)
	price := sp.price
	bars := make([]marketdata.Price, 0, len(sessions))
	closes := make([]dayClose, 0, len(sessions))
	for k, d := range sessions {
		if rng.Float64() < 1/perYear {
			trend = []float64{-0.3, 0, 0.3}[rng.IntN(3)] // in units of the asset's volatility
		}
		rg := regimes[reg[d.Sub(start)]]
		mu := sp.drift + trend*sp.vol + sp.rho*rg.drift
		if sp.typ == marketdata.FX {
			mu -= fxReversion * math.Log(price/sp.price) // exchange rates wander, but stay in a band
		}
		mult := 1 + loading*(rg.vol-1)
		h = omega + garchAlpha*eps*eps + garchBeta*h
		sd := math.Sqrt(h)
		eps = sd * (sp.rho*mkt[d.Sub(start)] + idio*rng.NormFloat64()) // the GARCH innovation
		ret := mu/perYear - 0.5*sd*sd*mult*mult + mult*eps

		prev := price
		if k == 0 {
			prev = sp.price * math.Exp(-ret*0.3)
		}
		open := prev * math.Exp(0.3*ret+0.15*sd*rng.NormFloat64())
		closeP := prev * math.Exp(ret)
		hi := math.Max(open, closeP) * math.Exp(math.Abs(rng.NormFloat64())*0.5*sd*mult)
		lo := math.Min(open, closeP) * math.Exp(-math.Abs(rng.NormFloat64())*0.5*sd*mult)
		price = closeP

		o, c := round(open, sp.decimals, tick), round(closeP, sp.decimals, tick)
		hd := decimal.Max(round(hi, sp.decimals, tick), o, c)
		ld := decimal.Min(round(lo, sp.decimals, tick), o, c)
		vol := int64(0)
		if sp.volume > 0 {
			surprise := math.Abs(eps) / sd
			vol = int64(math.Round(sp.volume * math.Exp(0.3*rng.NormFloat64()-0.045) * (0.6 + 0.5*surprise) * mult))
		}
		bars = append(bars, marketdata.Price{
			ID: marketdata.PriceID(a.ID, d), AssetID: a.ID, Date: d, Open: o, High: hd, Low: ld, Close: c, Volume: vol,
		})
		closes = append(closes, dayClose{d, c.InexactFloat64()})
	}
	return bars, closes
}

// round rounds x to places decimals, but never below one tick.
func round(x float64, places int32, tick decimal.Decimal) decimal.Decimal {
	d := decimal.NewFromFloat(x).Round(places)
	if d.LessThan(tick) {
		return tick
	}
	return d
}

// Load stores set through st: industries, assets, profiles,
// fundamentals, indexes, constituents, prices and corporate actions, each an upsert on its
// natural key, so loading the same set twice changes nothing. Run it on a
// Store built on a transaction to load all or nothing.
func Load(ctx context.Context, st *marketdata.Store, set *Set) error {
	for i := range set.Industries {
		if err := st.SaveIndustry(ctx, &set.Industries[i]); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for i := range set.Assets {
		if err := st.SaveAsset(ctx, &set.Assets[i]); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for _, p := range set.Profiles {
		if err := st.SaveProfile(ctx, p); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for _, f := range set.Fundamentals {
		if err := st.SaveFundamentals(ctx, f); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for i := range set.Indexes {
		if err := st.SaveIndex(ctx, &set.Indexes[i]); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for _, c := range set.Constituents {
		if err := st.SaveConstituent(ctx, c); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if err := st.SavePrices(ctx, set.Prices); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := st.SaveActions(ctx, set.Actions); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// IsLoaded reports whether the database behind st holds the demo data
// set, so that a server can say its prices are synthetic on every start.
// It looks for the demo's indexes (such as TKXGL25, "Tradekit Demo Global
// 25"), which [Load] writes in the same transaction as the prices: an
// index counts only when both its symbol and its name are the demo's, so
// real reference data does not pass for the demo. It makes at most one
// indexed lookup per demo index.
func IsLoaded(ctx context.Context, st *marketdata.Store) (bool, error) {
	for _, ix := range indexSpecs {
		x, err := st.IndexBySymbol(ctx, ix.symbol)
		if errors.Is(err, tradekit.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("demo: is the demo data set loaded: %w", err)
		}
		if x.Name == ix.name {
			return true, nil
		}
	}
	return false, nil
}
