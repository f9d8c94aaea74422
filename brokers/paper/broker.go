package paper

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Config configures a [Broker]. The zero value of every field is a usable
// default. The OAuth server and the pages have their own configuration,
// package brokers/paper/portal's Config.
type Config struct {
	// StartingCash is the cash of a new account; 100000 when zero.
	StartingCash decimal.Decimal
	// Currency is the ISO 4217 code of the accounts; "USD" when empty.
	Currency string
	// SlippageBps is how far from the latest close a market order fills,
	// in basis points, against the order: a buy at close × (1 + bps/10⁴),
	// a sell at close × (1 − bps/10⁴). Zero: at the close.
	SlippageBps decimal.Decimal
	// Commission is charged to the cash on every filled order, a flat
	// amount in the account's currency; zero when zero.
	Commission decimal.Decimal
	// MatchInterval is how often [Broker.Run] looks for orders to fill,
	// besides at once after each placement; 250 ms when zero.
	MatchInterval time.Duration
	// StreamPoll is how often an open trade-update stream (GET
	// /v2/events/trades) reads its account's orders for changes, made
	// through this Broker or any other on the database;
	// [DefaultStreamPoll] when zero.
	StreamPoll time.Duration
	// StreamKeepAlive is how long a trade-update stream stays silent
	// before it sends a keep-alive comment; [DefaultStreamKeepAlive]
	// when zero.
	StreamKeepAlive time.Duration
	// PriceVersion returns an asset's price version, which changes with
	// its prices: the broker keeps each asset's latest close while its
	// version is unchanged. When nil, [marketdata.Store.PriceVersion]; a
	// server passes one that answers from memory where it can.
	PriceVersion func(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error)
	// Now returns the current time; [time.Now] when nil.
	Now func() time.Time
	// Logger receives the errors that answer 500 and the detected reuse of
	// codes and refresh tokens; nothing is logged when nil.
	Logger *slog.Logger
	// MaxOpenOrders is how many open orders (status new) an account may
	// hold: a placement that would open more is refused with 403 and
	// Alpaca's code 40310000. [DefaultMaxOpenOrders] when zero.
	MaxOpenOrders int
	// RateLimit is how many requests an account may make to the API (the
	// routes under /v2 and POST /account/sign-in-links) in a UTC clock
	// minute, counted in the database across Brokers; one more answers
	// Alpaca's 429 {"code":42910000,"message":"rate limit exceeded"}.
	// Every answer carries X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset, as Alpaca's do. [DefaultRateLimit] when zero;
	// negative: no limit.
	RateLimit int
	// MaxStreams is how many trade-update streams (GET /v2/events/trades)
	// one API key or access token may hold open at once on this Broker;
	// one more answers 429. [DefaultMaxStreams] when zero.
	MaxStreams int
}

// The defaults of [Config].
const (
	DefaultCurrency      = "USD"
	DefaultMatchInterval = 250 * time.Millisecond

	// DefaultStreamPoll is the default of Config.StreamPoll.
	DefaultStreamPoll = 100 * time.Millisecond
	// DefaultStreamKeepAlive is the default of Config.StreamKeepAlive.
	DefaultStreamKeepAlive = 15 * time.Second
	// DefaultMaxOpenOrders is the default of Config.MaxOpenOrders.
	DefaultMaxOpenOrders = 1000
	// DefaultRateLimit is the default of Config.RateLimit, Alpaca's.
	DefaultRateLimit = 200
	// DefaultMaxStreams is the default of Config.MaxStreams.
	DefaultMaxStreams = 10
)

// defaultStartingCash is the cash of a new account when
// Config.StartingCash is zero.
var defaultStartingCash = decimal.New(100000, 0)

// The precision rules of the broker's arithmetic. Quantities and prices
// have at most qtyScale decimal places (Alpaca's precision for fractional
// quantities), so that every notional, qty × price, has at most 18 and
// every cash amount is exact at the 18-place scale of the NUMERIC(38, 18)
// columns. The average entry price, a quotient, is rounded half away from
// zero to avgScale places; profit and loss percentages to pctScale.
const (
	qtyScale = 9
	avgScale = 18
	pctScale = 8
)

// maxAmount bounds every stored amount: NUMERIC(38, 18) holds 20 digits
// before the point.
var maxAmount = decimal.New(1, 20)

// Broker is Tradekit's paper broker: a brokerage that speaks Alpaca's
// Trading API v2 dialect, serving play-money accounts from the paper_*
// tables. Package brokers/paper/portal puts its OAuth 2.0 authorization
// server and its account pages in front of it. It is safe for concurrent
// use, and several Brokers on one PostgreSQL database behave as one.
//
// Broker is not a [brokers.Broker]: it is the far side of one. Tradekit
// reaches it over HTTP through package brokers/alpaca, as it reaches a
// real broker.
type Broker struct {
	db         bun.IDB
	md         *marketdata.Store
	closes     *lastCloses
	cash       decimal.Decimal
	currency   string
	slippage   decimal.Decimal // SlippageBps / 10⁴
	commission decimal.Decimal
	matchEvery time.Duration
	streamPoll time.Duration // how often a trade-update stream polls
	keepAlive  time.Duration // a trade-update stream's longest silence
	streamsEnd chan struct{} // closed by EndStreams
	endOnce    sync.Once
	kick       chan struct{} // a placement asks the matcher to run
	placedMu   sync.Mutex
	placed     []order    // the orders placed through b (as placed, with their legs) that its matcher has not yet looked at
	matching   matchState // what the matcher's regular passes remember (see matchChanged)
	now        func() time.Time
	log        *slog.Logger

	maxOpen    int // open orders per account
	rateLimit  int // requests per account per minute; negative: no limit
	leases     rateLeases
	maxStreams int // trade-update streams per credential
	streamsMu  sync.Mutex
	streams    map[string]int // open trade-update streams by [credential]
}

// New returns a Broker on db (a *bun.DB or a bun.Tx) configured by cfg;
// the db must have Tradekit's migrations applied. New panics, as
// [regexp.MustCompile] does, on a configuration that is a programming
// error: a negative or oversized StartingCash or one with more than 18
// decimal places, a Currency that is not three letters, a negative
// MatchInterval, StreamPoll or StreamKeepAlive, a negative MaxOpenOrders
// or MaxStreams, a SlippageBps outside [0, 10000), or a negative
// Commission or one with more than 9 decimal places.
func New(db bun.IDB, cfg Config) *Broker {
	b := &Broker{
		db:         db,
		md:         marketdata.NewStore(db),
		cash:       cfg.StartingCash,
		currency:   strings.ToUpper(cfg.Currency),
		slippage:   cfg.SlippageBps.Shift(-4),
		commission: cfg.Commission,
		matchEvery: cfg.MatchInterval,
		streamPoll: cfg.StreamPoll,
		keepAlive:  cfg.StreamKeepAlive,
		streamsEnd: make(chan struct{}),
		kick:       make(chan struct{}, 1),
		now:        cfg.Now,
		log:        cfg.Logger,

		maxOpen:    cfg.MaxOpenOrders,
		rateLimit:  cfg.RateLimit,
		maxStreams: cfg.MaxStreams,
		streams:    map[string]int{},
	}
	b.closes = &lastCloses{version: cfg.PriceVersion, m: make(map[uuid.UUID]lastClose)}
	if b.cash.IsZero() {
		b.cash = defaultStartingCash
	}
	if b.cash.IsNegative() || !fits(b.cash, avgScale) {
		panic(fmt.Sprintf("paper: starting cash %s is negative, has more than 18 decimal places or 20 digits before the point", b.cash))
	}
	if b.currency == "" {
		b.currency = DefaultCurrency
	}
	if len(b.currency) != 3 || strings.IndexFunc(b.currency, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		panic(fmt.Sprintf("paper: currency %q is not a 3-letter code", cfg.Currency))
	}
	switch {
	case cfg.SlippageBps.IsNegative() || !cfg.SlippageBps.LessThan(decimal.New(10000, 0)):
		panic(fmt.Sprintf("paper: slippage %s bps is not in [0, 10000)", cfg.SlippageBps))
	case b.commission.IsNegative() || !fits(b.commission, qtyScale):
		panic(fmt.Sprintf("paper: commission %s is negative, too large or has more than 9 decimal places", b.commission))
	case b.matchEvery < 0:
		panic("paper: negative MatchInterval")
	case b.matchEvery == 0:
		b.matchEvery = DefaultMatchInterval
	}
	switch {
	case b.streamPoll < 0 || b.keepAlive < 0:
		panic("paper: negative StreamPoll or StreamKeepAlive")
	case b.streamPoll == 0:
		b.streamPoll = DefaultStreamPoll
	}
	if b.keepAlive == 0 {
		b.keepAlive = DefaultStreamKeepAlive
	}
	switch {
	case b.maxOpen < 0:
		panic("paper: negative MaxOpenOrders")
	case b.maxOpen == 0:
		b.maxOpen = DefaultMaxOpenOrders
	}
	if b.rateLimit == 0 {
		b.rateLimit = DefaultRateLimit
	}
	switch {
	case b.maxStreams < 0:
		panic("paper: negative MaxStreams")
	case b.maxStreams == 0:
		b.maxStreams = DefaultMaxStreams
	}
	if b.now == nil {
		b.now = time.Now
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	return b
}

// clock returns the current time as stored: UTC, to the microsecond
// (PostgreSQL's precision), so that every time read back equals the time
// written.
func (b *Broker) clock() time.Time {
	return b.now().UTC().Truncate(time.Microsecond)
}

// today returns the current date, in UTC.
func (b *Broker) today() calendar.Date {
	return calendar.DateOf(b.clock())
}

// fits reports whether d has at most scale decimal places and fewer than
// 20 digits before the point, so that NUMERIC(38, 18) stores it exactly.
func fits(d decimal.Decimal, scale int32) bool {
	return d.Abs().LessThan(maxAmount) && d.Equal(d.Truncate(scale))
}
