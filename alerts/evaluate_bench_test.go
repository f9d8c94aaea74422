package alerts

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// The sizes of BenchmarkEvaluateDay: issue 30 asks that 10,000 alerts
// across 1,000 assets be evaluated on a day's import in at most 1 s.
const (
	benchAssets         = 1000
	benchAlertsPerAsset = 10
	benchHistory        = 260 // bars per asset: a year, enough for sma(close, 200)
	benchUsers          = 20
)

// benchConditions is the mix of conditions the benchmark's alerts use,
// from ones that rarely hold to ones that hold about every other day, and
// from a comparison with a constant to two long moving averages.
var benchConditions = []string{
	"close > 130",
	"close < 70",
	"rsi(close, 14) < 30",
	"rsi(close, 14) > 70",
	"close > sma(close, 50)",
	"crossover(sma(close, 50), sma(close, 200))",
	"crossunder(close, sma(close, 20))",
	"ema(close, 12) > ema(close, 26)",
	"close > highest(high, 20)[1]",
	"(close - sma(close, 20)) / stddev(close, 20) < -2",
}

// BenchmarkEvaluateDay measures what a day's import costs the alerts:
// 1,000 assets with a year of daily bars, 10,000 active alerts (10 per
// asset, of the conditions above, a third of them once), and each user a
// webhook, so that every firing also writes a delivery. [Service.Run]
// runs as a server runs it. Each iteration saves the next day's 1,000
// bars through marketdata's SavePrices in one transaction (not timed), and
// times from its commit to the end of the pass that recorded the firings:
// on PostgreSQL the pass is woken by the import's notification on
// marketdata.PricesChannel, on SQLite by [Service.Wake], the signal of an
// import in the same process. The timed work is the wake-up, reading the
// changed assets, their alerts and bars, evaluating, and inserting the
// notifications, firing rows and deliveries. It reports the firings per
// pass.
//
// The stored copies of the price columns are built by a first import and
// pass before the timing, as the first pass of a deployment (or the first
// chart read) builds them; each later pass brings them up to date from
// the day's records. Between iterations the benchmark waits for the
// passes and webhook deliveries (to a transport that answers 200 at
// once) to settle, so that none runs into the next timing.
//
//	go test ./alerts -run '^$' -bench EvaluateDay -benchtime 5x
func BenchmarkEvaluateDay(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		r := rand.New(rand.NewPCG(30, 1))
		assets, last := benchSetup(b, db, r)
		passes := make(chan int, 1024) // the firings of each pass; -1 for a delivery attempt
		svc := New(db, Config{EvaluateEvery: time.Hour, DeliverEvery: time.Hour, Transport: benchTransport{},
			Limits: func(context.Context, uuid.UUID) (int, int, error) { return 0, 0, nil },
			Observe: Observer{
				Evaluated: func(fired int, _ time.Duration) { passes <- fired },
				Delivered: func(string, time.Duration) { passes <- -1 },
			}})
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			svc.Run(ctx)
		}()
		defer func() {
			cancel()
			<-stopped
		}()
		// settle waits until neither passes nor deliveries have been
		// reported for a while.
		settle := func() {
			for {
				select {
				case <-passes:
				case <-time.After(200 * time.Millisecond):
					return
				}
			}
		}
		// firingPass waits for the pass that records the day's firings.
		firingPass := func() int {
			timeout := time.After(time.Minute)
			for {
				select {
				case n := <-passes:
					if n > 0 {
						return n
					}
				case <-timeout:
					b.Fatal("no pass fired within a minute of the import")
				}
			}
		}
		wake := db.Dialect().Name() != dialect.PG
		day := func() {
			last = last.AddDays(1)
			benchSaveDay(b, db, r, assets, last)
		}
		settle() // Run's first pass, which finds nothing new
		day()    // builds the stored copies of the columns
		if wake {
			svc.Wake()
		}
		firingPass()
		settle()
		fired := 0
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			day()
			b.StartTimer()
			if wake {
				svc.Wake()
			}
			fired += firingPass()
			b.StopTimer()
			settle()
			b.StartTimer()
		}
		b.ReportMetric(float64(fired)/float64(b.N), "firings/op")
	})
}

// benchTransport answers every delivery with 200 at once, without a
// network.
type benchTransport struct{}

func (benchTransport) CheckURL(context.Context, string) error { return nil }

func (benchTransport) Post(context.Context, string, map[string]string, []byte) (int, error) {
	return 200, nil
}

// benchAsset is an asset of the benchmark with its latest close.
type benchAsset struct {
	id    uuid.UUID
	close float64
}

// benchSetup stores the benchmark's users, webhooks, assets, their
// history and their alerts, and returns the assets and the date of their
// latest bar.
func benchSetup(b *testing.B, db *bun.DB, r *rand.Rand) ([]benchAsset, calendar.Date) {
	b.Helper()
	ctx := context.Background()
	bs := billing.NewStore(db)
	p, err := bs.Plan(ctx, "pro")
	if err != nil {
		b.Fatal(err)
	}
	users := make([]uuid.UUID, benchUsers)
	var hooks []Webhook
	for i := range users {
		u := billing.User{Email: fmt.Sprintf("bench%d@example.com", i), Name: "Bench", PlanID: p.ID}
		if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
			b.Fatal(err)
		}
		users[i] = u.ID
		hooks = append(hooks, Webhook{ID: uuid.New(), UserID: u.ID, URL: "https://hooks.example.com/" + u.ID.String(),
			Secret: "whsec_bench", CreatedAt: time.Now().UTC()})
	}
	if _, err := db.NewInsert().Model(&hooks).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	md := marketdata.NewStore(db)
	assets := make([]benchAsset, benchAssets)
	for i := range assets {
		a := marketdata.Asset{Symbol: fmt.Sprintf("B%04d", i), Name: "Bench", Type: marketdata.Stock,
			ExchangeID: uuid.MustParse("d30d4255-6f11-5d39-a7d1-bbef5fbe2ec8"), Currency: "USD", IsActive: true}
		if err := md.SaveAsset(ctx, &a); err != nil {
			b.Fatal(err)
		}
		assets[i] = benchAsset{id: a.ID, close: 100}
	}
	first := calendar.NewDate(2025, time.January, 1)
	last := first.AddDays(benchHistory - 1)
	for start := 0; start < len(assets); start += 100 {
		var ps []marketdata.Price
		for i := start; i < min(start+100, len(assets)); i++ {
			for d := range benchHistory {
				ps = append(ps, benchBar(r, &assets[i], first.AddDays(d)))
			}
		}
		if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			return st.SavePrices(ctx, ps)
		}); err != nil {
			b.Fatal(err)
		}
	}
	// The alerts start with the watermark CreateAlert gives them: the
	// asset's price version and latest bar.
	now := time.Now().UTC().Truncate(time.Microsecond)
	var list []Alert
	for i, a := range assets {
		v, err := md.PriceVersion(ctx, a.id)
		if err != nil {
			b.Fatal(err)
		}
		for j := range benchAlertsPerAsset {
			list = append(list, Alert{ID: uuid.New(), UserID: users[(i*benchAlertsPerAsset+j)%benchUsers], AssetID: a.id,
				Name: fmt.Sprintf("alert %d", j), Condition: benchConditions[j%len(benchConditions)], Once: (i+j)%3 == 0,
				Status: Active, CheckedVersion: v.Version, CheckedThrough: last.String(), CreatedAt: now, UpdatedAt: now})
		}
		if len(list) >= 1000 {
			if _, err := db.NewInsert().Model(&list).Exec(ctx); err != nil {
				b.Fatal(err)
			}
			list = list[:0]
		}
	}
	return assets, last
}

// benchBar returns a's bar on day, a random step of at most 2 % from its
// last close, which it moves on.
func benchBar(r *rand.Rand, a *benchAsset, day calendar.Date) marketdata.Price {
	open := a.close
	a.close = max(1, a.close*(1+(r.Float64()-0.5)*0.04))
	c, o := decimal.NewFromFloat(a.close).Round(2), decimal.NewFromFloat(open).Round(2)
	hi, lo := decimal.Max(c, o).Add(decimal.New(5, -1)), decimal.Min(c, o).Sub(decimal.New(5, -1))
	return marketdata.Price{AssetID: a.id, Date: day, Open: o, High: hi, Low: lo, Close: c, Volume: 1000}
}

// benchSaveDay saves a bar on day for every asset, as a day's import
// does: one SavePrices in one transaction.
func benchSaveDay(b *testing.B, db *bun.DB, r *rand.Rand, assets []benchAsset, day calendar.Date) {
	b.Helper()
	ps := make([]marketdata.Price, len(assets))
	for i := range assets {
		ps[i] = benchBar(r, &assets[i], day)
	}
	if err := marketdata.InConnTx(context.Background(), db, func(ctx context.Context, st *marketdata.Store) error {
		return st.SavePrices(ctx, ps)
	}); err != nil {
		b.Fatal(err)
	}
}
