package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// start is when every test's clock starts: a Monday afternoon, UTC.
var start = time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)

// env is one test's world: a migrated database, a clock, a fake broker
// every connection reaches, a sealer, and the calls of OnFill.
type env struct {
	db     *bun.DB
	clock  *testkit.Clock
	broker *fakeBroker
	sealer *Sealer
	limit  atomic.Int64 // the portfolio limit of every user

	mu     sync.Mutex
	filled []uuid.UUID     // OnFill's arguments, in call order
	tokens []*oauth2.Token // the tokens Config.Trader was given
	users  []uuid.UUID     // the users mustUser stored
}

// newEnv returns an env on db whose users may have 3 portfolios. Tests
// of one database share it: when the test ends, once its services are
// done, its users' pending orders are closed, so that no order tracker of
// a later test reads them.
func newEnv(t *testing.T, db *bun.DB) *env {
	t.Helper()
	sealer, err := NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, clock: testkit.NewClock(start), sealer: sealer}
	e.broker = newFakeBroker(e.clock.Now)
	e.limit.Store(3)
	t.Cleanup(func() {
		e.mu.Lock()
		users := e.users
		e.mu.Unlock()
		if len(users) == 0 {
			return
		}
		_, err := db.NewUpdate().Model((*Order)(nil)).Set("status = ?, next_check_at = NULL", brokers.Cancelled).
			Where("status = ? AND user_id IN (?)", brokers.Pending, bun.In(users)).Exec(context.Background())
		if err != nil {
			t.Error(err)
		}
	})
	return e
}

// paper is the provider of the tests' connections. Its endpoints are
// never reached but through the tests' round trippers.
var paper = Provider{Name: "paper", OAuth: &oauth2.Config{ClientID: "client-1", ClientSecret: "secret-1",
	Endpoint:    oauth2.Endpoint{AuthURL: "https://broker.example/oauth/authorize", TokenURL: "https://broker.example/oauth/token"},
	RedirectURL: "https://tradekit.example/api/v1/brokers/callback", Scopes: []string{"trading"}},
	APIURL: "https://broker.example/api", CanShort: true} // as the fake broker can

// errNoNetwork is what the default HTTP client of the tests answers.
var errNoNetwork = errors.New("test: no network")

// config returns the Config of the env's services: the fake broker, no
// background loops, the env's clock.
func (e *env) config() Config {
	return Config{
		Providers: []Provider{paper},
		Sealer:    e.sealer,
		PortfolioLimit: func(context.Context, uuid.UUID) (int, error) {
			return int(e.limit.Load()), nil
		},
		HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, errNoNetwork
		})},
		SyncInterval:  -1,
		OrderInterval: -1,
		Trader: func(_ Provider, _ *Connection, tok *oauth2.Token) brokers.Trader {
			e.mu.Lock()
			e.tokens = append(e.tokens, tok)
			e.mu.Unlock()
			return e.broker
		},
		OnFill: func(id uuid.UUID) {
			e.mu.Lock()
			e.filled = append(e.filled, id)
			e.mu.Unlock()
		},
		Now:    e.clock.Now,
		Logger: slog.New(slog.DiscardHandler),
	}
}

// service returns a Service on the env's database, its config changed
// by mods; the test waits for its background work before it ends.
func (e *env) service(t *testing.T, mods ...func(*Config)) *Service {
	t.Helper()
	cfg := e.config()
	for _, m := range mods {
		m(&cfg)
	}
	s := New(e.db, cfg)
	t.Cleanup(s.Wait)
	return s
}

// onFills returns OnFill's arguments so far.
func (e *env) onFills() []uuid.UUID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]uuid.UUID(nil), e.filled...)
}

// mustUser stores a user on the pro plan and returns its id.
func (e *env) mustUser(t *testing.T) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	n := uuid.New()
	st := billing.NewStore(e.db)
	plan, err := st.Plan(ctx, "pro")
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: fmt.Sprintf("user-%s@example.com", n), Name: "User " + n.String()[:8], PlanID: plan.ID}
	if err := st.CreateUser(ctx, &u, start); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.users = append(e.users, u.ID)
	e.mu.Unlock()
	return u.ID
}

// mustConnection stores an active connection of the user to the paper
// provider, holding sealed tokens, with no portfolio yet.
func (e *env) mustConnection(t *testing.T, userID uuid.UUID) Connection {
	t.Helper()
	now := e.clock.Now().UTC()
	c := Connection{ID: uuid.New(), UserID: userID, Provider: paper.Name, Status: Active, RedirectURL: "https://app.example/done",
		AccountID: "acct-1", AccountName: "PA0001", CreatedAt: now, UpdatedAt: now}
	sealTokens(e.sealer, &c, &oauth2.Token{AccessToken: "at-" + c.ID.String(), RefreshToken: "rt-" + c.ID.String()})
	if err := NewStore(e.db).InsertConnection(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// mustLedger runs the connection's first sync in the foreground: the
// portfolio becomes the fake broker's account.
func (e *env) mustLedger(t *testing.T, s *Service, c Connection) Portfolio {
	t.Helper()
	if _, err := s.pull(context.Background(), c.ID); err != nil {
		t.Fatal(err)
	}
	return e.mustPortfolio(t, c.ID)
}

// mustPortfolio returns the connection's portfolio with its positions.
func (e *env) mustPortfolio(t *testing.T, connectionID uuid.UUID) Portfolio {
	t.Helper()
	p, err := NewStore(e.db).PortfolioOf(context.Background(), connectionID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustOrder reads order id back.
func (e *env) mustOrder(t *testing.T, id uuid.UUID) Order {
	t.Helper()
	var o Order
	if err := e.db.NewSelect().Model(&o).Where("id = ?", id).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

// mustFills returns the portfolio's fills in seq order.
func (e *env) mustFills(t *testing.T, portfolioID uuid.UUID) []Fill {
	t.Helper()
	var fs []Fill
	if err := e.db.NewSelect().Model(&fs).Where("portfolio_id = ?", portfolioID).Order("seq").Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return fs
}

// mustGuardrails sets the user's guardrails.
func (e *env) mustGuardrails(t *testing.T, userID uuid.UUID, g brokers.Guardrails) {
	t.Helper()
	if err := NewStore(e.db).SaveGuardrails(context.Background(), userID, g, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// loose returns guardrails that refuse nothing but what is asked: no
// daily, size or risk limit, every asset type.
func loose() brokers.Guardrails {
	return brokers.Guardrails{AllowedAssetTypes: brokers.AssetTypes()}
}

// mustAsset stores a stock with days daily bars ending the day before the
// clock's start, each closing at close with a high 1 above and a low 1
// below it, so its ATR(14) is 2. The fake broker marks it at close.
func (e *env) mustAsset(t *testing.T, symbol, close string, days int) marketdata.Asset {
	t.Helper()
	ctx := context.Background()
	md := marketdata.NewStore(e.db)
	a := marketdata.Asset{Symbol: symbol, Name: symbol + " Inc.", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"),
		Currency: "USD", IsActive: true}
	if err := md.SaveAsset(ctx, &a); err != nil {
		t.Fatal(err)
	}
	c := dec(close)
	today := calendar.DateOf(start)
	var bars []marketdata.Price
	for i := days; i >= 1; i-- {
		bars = append(bars, marketdata.Price{AssetID: a.ID, Date: today.AddDays(-i), Open: c, High: c.Add(one), Low: c.Sub(one), Close: c, Volume: 1000})
	}
	if len(bars) > 0 {
		if err := md.SavePrices(ctx, bars); err != nil {
			t.Fatal(err)
		}
	}
	e.broker.set(func(b *fakeBroker) { b.marks[a.Symbol] = c })
	return a
}

// marketOrder returns the input of a market order of qty of the asset.
func marketOrder(c Connection, a marketdata.Asset, side brokers.Side, qty string) OrderInput {
	return OrderInput{ConnectionID: c.ID, AssetID: a.ID, Order: brokers.Order{Side: side, Type: brokers.Market, Quantity: dec(qty)}}
}

// limitOrder returns the input of a limit order of qty of the asset at price.
func limitOrder(c Connection, a marketdata.Asset, side brokers.Side, qty, price string) OrderInput {
	return OrderInput{ConnectionID: c.ID, AssetID: a.ID,
		Order: brokers.Order{Side: side, Type: brokers.Limit, Quantity: dec(qty), LimitPrice: decp(price)}}
}

// withStop returns in with a stop-loss price.
func withStop(in OrderInput, stop string) OrderInput {
	in.Order.StopLossPrice = decp(stop)
	return in
}

// withClientID returns in with a client order id.
func withClientID(in OrderInput, id string) OrderInput {
	in.ClientOrderID = id
	return in
}

// mustPlace places in and fails the test on an error.
func mustPlace(t *testing.T, s *Service, userID uuid.UUID, in OrderInput) Placement {
	t.Helper()
	p, err := s.PlaceOrder(context.Background(), userID, in)
	if err != nil {
		t.Fatalf("PlaceOrder(%s %s %s) = %v", in.Order.Side, in.Order.Quantity, in.AssetID, err)
	}
	return p
}

// mustTrack advances the clock past every pending order's next check
// and runs one round of the tracker; it returns how many it read.
func mustTrack(t *testing.T, e *env, s *Service) int {
	t.Helper()
	e.clock.Add(time.Minute / 2)
	n, err := s.TrackOrders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// brokerID returns the broker's id of the order, failing the test when
// the broker has not acknowledged it.
func brokerID(t *testing.T, o Order) string {
	t.Helper()
	if o.BrokerOrderID == nil {
		t.Fatalf("order %s has no broker id", o.ID)
	}
	return *o.BrokerOrderID
}

// decimalString returns d as text, "<nil>" for nil, for messages.
func decimalString(d *decimal.Decimal) string {
	if d == nil {
		return "<nil>"
	}
	return d.String()
}
