package paper

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Client is an OAuth 2.0 client registered with the paper broker: an
// application that may ask users to connect a paper account.
type Client struct {
	// ID is the client_id the application sends.
	ID string
	// Secret authenticates the application at the token and revocation
	// endpoints.
	Secret string
	// Name is shown to the user on the consent page; ID when empty.
	Name string
	// RedirectURIs are the absolute URLs the broker may send the user back
	// to. A request's redirect_uri must equal one of them exactly.
	RedirectURIs []string

	secretHash string // a registered app's: the hex SHA-256 of its secret
}

// name returns the name shown on the consent page.
func (c Client) name() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// Config configures a [Broker]. The zero value of every field but Clients
// is a usable default.
type Config struct {
	// Clients are the registered OAuth clients.
	Clients []Client
	// StartingCash is the cash of a new account; 100000 when zero.
	StartingCash decimal.Decimal
	// Currency is the ISO 4217 code of the accounts; "USD" when empty.
	Currency string
	// Prefix is the path at which the handler is mounted, as browsers see
	// it, e.g. "/paper": the consent form posts to Prefix+"/oauth/authorize"
	// and the CSRF cookie's Path is that same path. Empty means the root.
	Prefix string
	// PublicURL is the base URL at which browsers and clients reach the
	// server the broker is mounted in, such as "https://tradekit.example":
	// sign-in links to the account page start with it, then Prefix.
	// Empty: they are paths on the broker's host.
	PublicURL string
	// AccessTTL is the lifetime of an access token; 1 h when zero.
	AccessTTL time.Duration
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
	// SigningKey signs the consent form's CSRF tokens (HMAC-SHA256); at
	// least 32 bytes. Brokers sharing a database must share it, or a form
	// shown by one is refused by another. Random when nil: right for a
	// single process.
	SigningKey []byte
	// SignupLimit is how many paper accounts one client address may open
	// in a UTC clock hour; approvals beyond it answer 429 with
	// Retry-After. [DefaultSignupLimit] when zero; negative: no limit.
	SignupLimit int
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
	// ClientAddress names the client of a request for SignupLimit: a
	// server passes the address it counts clients by elsewhere (Tradekit's
	// server: the IP address, or the /64 network of an IPv6 one). The host
	// of the request's RemoteAddr when nil. Behind a reverse proxy every
	// client is the proxy unless this function says otherwise.
	ClientAddress func(*http.Request) string
}

// The defaults of [Config].
const (
	DefaultCurrency      = "USD"
	DefaultAccessTTL     = time.Hour
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

// CodeTTL is the lifetime of an authorization code.
const CodeTTL = 10 * time.Minute

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

// Broker is Tradekit's paper broker: an OAuth 2.0 authorization server
// and a brokerage that speaks Alpaca's Trading API v2 dialect, serving
// play-money accounts from the paper_* tables. It is safe for concurrent
// use, and several Brokers on one PostgreSQL database behave as one.
//
// Broker is not a [brokers.Broker]: it is the far side of one. Tradekit
// reaches it over HTTP through package brokers/alpaca, as it reaches a
// real broker.
type Broker struct {
	db         bun.IDB
	md         *marketdata.Store
	closes     *lastCloses
	clients    map[string]Client
	cash       decimal.Decimal
	currency   string
	prefix     string
	publicURL  string // no trailing slash
	accessTTL  time.Duration
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
	pages      *template.Template

	key         []byte // signs the consent tokens
	signupLimit int    // accounts per client address per hour; negative: no limit
	maxOpen     int    // open orders per account
	rateLimit   int    // requests per account per minute; negative: no limit
	leases      rateLeases
	maxStreams  int // trade-update streams per credential
	streamsMu   sync.Mutex
	streams     map[string]int // open trade-update streams by [credential]
	clientAddr  func(*http.Request) string
}

// New returns a Broker on db (a *bun.DB or a bun.Tx) configured by cfg;
// the db must have Tradekit's migrations applied. New panics, as
// [regexp.MustCompile] does, on a configuration that is a programming
// error: a client without an ID, a secret or a redirect URI, two clients
// with one ID, a redirect URI that is not an absolute URL without a
// fragment, a negative or oversized StartingCash or one with more than 18
// decimal places, a Currency that is not three letters, a Prefix that does
// not start with "/", a PublicURL that is not an absolute URL without a
// query or a fragment, a negative AccessTTL, MatchInterval, StreamPoll
// or StreamKeepAlive, a negative MaxOpenOrders or MaxStreams, a SlippageBps outside [0, 10000), a
// negative Commission or one with more than 9 decimal places, or a
// SigningKey shorter than 32 bytes.
func New(db bun.IDB, cfg Config) *Broker {
	b := &Broker{
		db:         db,
		md:         marketdata.NewStore(db),
		clients:    map[string]Client{},
		cash:       cfg.StartingCash,
		currency:   strings.ToUpper(cfg.Currency),
		prefix:     strings.TrimRight(cfg.Prefix, "/"),
		publicURL:  strings.TrimRight(cfg.PublicURL, "/"),
		accessTTL:  cfg.AccessTTL,
		slippage:   cfg.SlippageBps.Shift(-4),
		commission: cfg.Commission,
		matchEvery: cfg.MatchInterval,
		streamPoll: cfg.StreamPoll,
		keepAlive:  cfg.StreamKeepAlive,
		streamsEnd: make(chan struct{}),
		kick:       make(chan struct{}, 1),
		now:        cfg.Now,
		log:        cfg.Logger,
		pages:      pages,

		key:         cfg.SigningKey,
		signupLimit: cfg.SignupLimit,
		maxOpen:     cfg.MaxOpenOrders,
		rateLimit:   cfg.RateLimit,
		maxStreams:  cfg.MaxStreams,
		streams:     map[string]int{},
		clientAddr:  cfg.ClientAddress,
	}
	b.closes = &lastCloses{version: cfg.PriceVersion, m: make(map[uuid.UUID]lastClose)}
	for _, c := range cfg.Clients {
		switch {
		case c.ID == "":
			panic("paper: a client has no ID")
		case c.Secret == "":
			panic(fmt.Sprintf("paper: client %q has no secret", c.ID))
		case len(c.RedirectURIs) == 0:
			panic(fmt.Sprintf("paper: client %q has no redirect URI", c.ID))
		}
		if _, dup := b.clients[c.ID]; dup {
			panic(fmt.Sprintf("paper: two clients have the ID %q", c.ID))
		}
		for _, u := range c.RedirectURIs {
			p, err := url.Parse(u)
			if err != nil || !p.IsAbs() || p.Host == "" || p.Fragment != "" || strings.Contains(u, "#") {
				panic(fmt.Sprintf("paper: client %q: redirect URI %q is not an absolute URL without a fragment", c.ID, u))
			}
		}
		c.RedirectURIs = append([]string(nil), c.RedirectURIs...)
		b.clients[c.ID] = c
	}
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
	if b.prefix != "" && !strings.HasPrefix(b.prefix, "/") {
		panic(fmt.Sprintf("paper: prefix %q does not start with /", cfg.Prefix))
	}
	if p, err := url.Parse(b.publicURL); b.publicURL != "" && (err != nil || !p.IsAbs() || p.Host == "" || p.RawQuery != "" || strings.Contains(b.publicURL, "#")) {
		panic(fmt.Sprintf("paper: public URL %q is not an absolute URL without a query or a fragment", cfg.PublicURL))
	}
	switch {
	case b.accessTTL < 0:
		panic("paper: negative AccessTTL")
	case b.accessTTL == 0:
		b.accessTTL = DefaultAccessTTL
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
	b.setConsentDefaults()
	return b
}

// setConsentDefaults fills in the defaults of the consent form's
// defences, and panics on a SigningKey too short to sign with.
func (b *Broker) setConsentDefaults() {
	switch {
	case b.key == nil:
		b.key = newKey()
	case len(b.key) < 32:
		panic(fmt.Sprintf("paper: SigningKey has %d bytes, want at least 32", len(b.key)))
	default:
		b.key = append([]byte(nil), b.key...)
	}
	if b.signupLimit == 0 {
		b.signupLimit = DefaultSignupLimit
	}
	if b.clientAddr == nil {
		b.clientAddr = peerAddress
	}
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

// holding is a position's quantity and average entry price.
type holding struct {
	Qty decimal.Decimal
	Avg decimal.Decimal
}

// apply returns the cash and the holding after a fill of qty at price on
// the given side, charged commission:
//
//	buy:  cash − qty×price − commission,  Qty + qty,  Avg = (Qty×Avg + qty×price) / (Qty + qty)
//	sell: cash + qty×price − commission,  Qty − qty,  Avg unchanged
//
// Avg is rounded to avgScale places. The error wraps
// [tradekit.ErrRejected] for a buy that costs more than the cash and a
// sell of more than the holding. [Broker.Fill] and the replay behind the
// portfolio history share it, so that they cannot disagree.
func apply(cash decimal.Decimal, h holding, symbol string, side brokers.Side, qty, price, commission decimal.Decimal) (decimal.Decimal, holding, error) {
	notional := qty.Mul(price)
	switch side {
	case brokers.Buy:
		if cost := notional.Add(commission); cost.GreaterThan(cash) {
			return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrRejected,
				"buying %s %s at %s costs %s, more than the cash of %s", qty, symbol, price, cost, cash))
		}
		q := h.Qty.Add(qty)
		avg := h.Qty.Mul(h.Avg).Add(notional).DivRound(q, avgScale)
		return cash.Sub(notional).Sub(commission), holding{Qty: q, Avg: avg}, nil
	case brokers.Sell:
		if qty.GreaterThan(h.Qty) {
			return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrRejected,
				"selling %s %s is more than the position of %s", qty, symbol, h.Qty))
		}
		return cash.Add(notional).Sub(commission), holding{Qty: h.Qty.Sub(qty), Avg: h.Avg}, nil
	}
	return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrInvalid, "side %s is neither buy nor sell", tradekit.Quote(string(side))))
}

// maxSymbol is the longest symbol Fill accepts.
const maxSymbol = 32

// Fill records a market order for qty of symbol that filled at once at
// price, at time at (the current time when zero), in the account with the
// given id, and returns the order as GET /v2/orders lists it. In one
// transaction it updates the cash and the position:
//
//	buy:  cash −= qty×price; the position's average entry price becomes
//	      (qty₀×avg₀ + qty×price) / (qty₀ + qty), rounded to 18 places
//	sell: cash += qty×price; the quantity drops, the average is unchanged,
//	      and a position that reaches 0 is removed
//
// Short sales and margin are not offered. Fills are recorded in time
// order: the history replays them so.
//
// The error wraps [tradekit.ErrNotFound] for an unknown account;
// [tradekit.ErrInvalid] for an empty or malformed symbol, a side other
// than [brokers.Buy] and [brokers.Sell], a qty or price that is not
// positive or has more than 9 decimal places, a time before the account
// was opened or before its latest order, or amounts too large to store;
// and [tradekit.ErrRejected] for a buy that costs more than the cash or a
// sell of more than the position.
func (b *Broker) Fill(ctx context.Context, accountID string, symbol string, side brokers.Side, qty, price decimal.Decimal, at time.Time) (alpaca.OrderJSON, error) {
	id, err := uuid.Parse(accountID)
	if err != nil {
		return alpaca.OrderJSON{}, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "account %s not found", tradekit.Quote(accountID)))
	}
	symbol = marketdata.NormalizeSymbol(symbol)
	switch {
	case symbol == "" || len(symbol) > maxSymbol || strings.IndexFunc(symbol, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return alpaca.OrderJSON{}, invalid("symbol %s is empty, longer than %d bytes or not printable", tradekit.Quote(symbol), maxSymbol)
	case side != brokers.Buy && side != brokers.Sell:
		return alpaca.OrderJSON{}, invalid("side %s is neither buy nor sell", tradekit.Quote(string(side)))
	case !qty.IsPositive() || !fits(qty, qtyScale):
		return alpaca.OrderJSON{}, invalid("quantity %s is not positive, has more than %d decimal places or is too large", qty, qtyScale)
	case !price.IsPositive() || !fits(price, qtyScale):
		return alpaca.OrderJSON{}, invalid("price %s is not positive, has more than %d decimal places or is too large", price, qtyScale)
	}
	if at.IsZero() {
		at = b.clock()
	}
	at = at.UTC().Truncate(time.Microsecond)

	var assetID *uuid.UUID
	class := "us_equity"
	if a, err := b.md.AssetBySymbol(ctx, symbol); err == nil {
		assetID, class = &a.ID, assetClass(a.Type)
	} else if !errors.Is(err, tradekit.ErrNotFound) {
		return alpaca.OrderJSON{}, fmt.Errorf("paper: fill: %w", err)
	}

	var o order
	err = b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, err := lockAccount(ctx, tx, account{ID: id}, 1, at)
		if err != nil {
			return err
		}
		if at.Before(a.CreatedAt) {
			return invalid("fill time %s is before the account was opened, %s", at.Format(time.RFC3339Nano), a.CreatedAt.Format(time.RFC3339Nano))
		}
		last, hasLast, err := lastOrder(ctx, tx, id)
		if err != nil {
			return err
		}
		if hasLast && at.Before(last.SubmittedAt) {
			return invalid("fill time %s is before the account's latest order, %s", at.Format(time.RFC3339Nano), last.SubmittedAt.Format(time.RFC3339Nano))
		}
		p, _, err := positionOf(ctx, tx, id, symbol)
		if err != nil {
			return err
		}
		cash, h, err := apply(a.Cash, holding{Qty: p.Qty, Avg: p.AvgEntryPrice}, symbol, side, qty, price, decimal.Zero)
		if err != nil {
			return err
		}
		if !fits(cash, avgScale) || !fits(h.Qty, avgScale) || !fits(h.Avg, avgScale) {
			return invalid("the fill's amounts are too large to store")
		}
		if err := updateCash(ctx, tx, id, cash); err != nil {
			return err
		}
		p = position{AccountID: id, Symbol: symbol, Qty: h.Qty, AvgEntryPrice: h.Avg, UpdatedAt: at}
		if err := savePosition(ctx, tx, p); err != nil {
			return err
		}
		oid := uuid.New()
		o = order{
			ID: oid, AccountID: id, ClientOrderID: oid.String(),
			AssetID: assetID, Symbol: symbol, AssetClass: class,
			Side: string(side), Type: "market", TimeInForce: "day", Status: "filled",
			Qty: qty, FilledQty: qty, FilledAvgPrice: &price,
			CreatedAt: at, UpdatedAt: at, SubmittedAt: at, FilledAt: &at,
		}
		return insertOrders(ctx, tx, a.OrderSeq, &o)
	})
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	return orderJSON(o), nil
}

// invalid returns an error wrapping [tradekit.ErrInvalid] with a message
// for end users.
func invalid(format string, args ...any) error {
	return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrInvalid, format, args...))
}

// assetClass returns Alpaca's asset class of an asset of type t.
func assetClass(t marketdata.AssetType) string {
	if t == marketdata.Crypto {
		return "crypto"
	}
	return "us_equity"
}

// orderJSON returns o as Alpaca sends it: a notional order has a null
// qty, as on Alpaca, and its filled_qty once it fills.
func orderJSON(o order) alpaca.OrderJSON {
	out := alpaca.OrderJSON{
		ID: o.ID.String(), ClientOrderID: o.ClientOrderID,
		CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), SubmittedAt: o.SubmittedAt.UTC(),
		FilledAt: utc(o.FilledAt), CanceledAt: utc(o.CanceledAt), ReplacedAt: utc(o.ReplacedAt),
		Symbol: o.Symbol, AssetClass: o.AssetClass, OrderClass: o.OrderClass, Type: o.Type, OrderType: o.Type, Side: o.Side,
		TimeInForce: o.TimeInForce, Status: o.Status,
		Qty: &o.Qty, Notional: o.Notional, FilledQty: o.FilledQty, FilledAvgPrice: o.FilledAvgPrice,
		LimitPrice: o.LimitPrice, StopPrice: o.StopPrice, ExtendedHours: o.ExtendedHours,
		TrailPrice: o.TrailPrice, TrailPercent: o.TrailPercent, HWM: o.HWM,
		Commission: o.Commission,
	}
	if o.legs != nil {
		out.Legs = make([]alpaca.OrderJSON, len(o.legs))
		for i, l := range o.legs {
			out.Legs[i] = orderJSON(l)
		}
	}
	if o.Notional != nil {
		out.Qty = nil
	}
	if out.OrderClass == "" {
		out.OrderClass = "simple"
	}
	if o.AssetID != nil {
		out.AssetID = o.AssetID.String()
	}
	if o.ReplacedBy != nil {
		s := o.ReplacedBy.String()
		out.ReplacedBy = &s
	}
	if o.Replaces != nil {
		s := o.Replaces.String()
		out.Replaces = &s
	}
	return out
}

// ordersJSON returns the orders as Alpaca's JSON; with nested, each
// bracket, OTO or OCO order with its legs (one more read).
func ordersJSON(ctx context.Context, db bun.IDB, os []order, nested bool) ([]alpaca.OrderJSON, error) {
	if nested {
		var parents []uuid.UUID
		for _, o := range os {
			if o.ParentID == nil && o.OrderClass != "" && o.OrderClass != "simple" {
				parents = append(parents, o.ID)
			}
		}
		legs, err := legsOf(ctx, db, parents)
		if err != nil {
			return nil, err
		}
		for i := range os {
			os[i].legs = legs[os[i].ID]
		}
	}
	out := make([]alpaca.OrderJSON, len(os))
	for i, o := range os {
		out[i] = orderJSON(o)
	}
	return out, nil
}

// utc returns a copy of *t in UTC, or nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ---- valuation ----

// lookback is how many days of closes before a range are read with it, so
// that the close on or before the range's first day is nearly always found
// in the same query (weekends and holidays are shorter than that).
const lookback = 10

// pricer values symbols at Tradekit's stored daily closes. It lives for one
// request and reads each symbol's closes once.
type pricer struct {
	md       *marketdata.Store
	bySymbol map[string]*closes
}

// closes are the stored closes of the asset with a symbol, oldest first,
// from the last one on or before a range's first day to its last day.
type closes struct {
	asset *marketdata.Asset // nil when no stored asset has the symbol
	bars  []marketdata.Price
}

func newPricer(md *marketdata.Store) *pricer {
	return &pricer{md: md, bySymbol: map[string]*closes{}}
}

// load reads the closes of symbol that value it on the days from from to
// to (from <= to).
func (p *pricer) load(ctx context.Context, symbol string, from, to calendar.Date) (*closes, error) {
	if c, ok := p.bySymbol[symbol]; ok {
		return c, nil
	}
	c := &closes{}
	a, err := p.md.AssetBySymbol(ctx, symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		p.bySymbol[symbol] = c
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	c.asset = &a
	lo := from.AddDays(-lookback)
	bars, err := p.md.Prices(ctx, a.ID, lo, to)
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	if len(bars) == 0 || bars[0].Date.After(from) {
		// No close in the lookback: the last one before it, if any.
		older, err := p.md.Prices(ctx, a.ID, calendar.Date{}, lo.AddDays(-1))
		if err != nil {
			return nil, fmt.Errorf("paper: %w", err)
		}
		if len(older) > 0 {
			bars = append([]marketdata.Price{older[len(older)-1]}, bars...)
		}
	}
	c.bars = bars
	p.bySymbol[symbol] = c
	return c, nil
}

// on returns the close on or before d, and whether there is one.
func (c *closes) on(d calendar.Date) (decimal.Decimal, bool) {
	i := sort.Search(len(c.bars), func(i int) bool { return c.bars[i].Date.After(d) })
	if i == 0 {
		return decimal.Decimal{}, false
	}
	return c.bars[i-1].Close, true
}

// priceOn returns the price at which a holding is valued on day d: the
// close on or before d, or the average entry price when none is stored.
func (c *closes) priceOn(d calendar.Date, h holding) decimal.Decimal {
	if p, ok := c.on(d); ok {
		return p
	}
	return h.Avg
}

// valued is an open position with its valuation today.
type valued struct {
	position
	asset   *marketdata.Asset
	price   decimal.Decimal  // the close on or before today, or the average entry price
	lastday *decimal.Decimal // the close on or before yesterday, if any
	value   decimal.Decimal  // Qty × price
}

// valuePositions returns the account's open positions valued today, by
// symbol, and the sum of their values.
func (b *Broker) valuePositions(ctx context.Context, a account) ([]valued, decimal.Decimal, error) {
	ps, err := positions(ctx, b.db, a.ID)
	if err != nil {
		return nil, decimal.Decimal{}, err
	}
	today := b.today()
	pr := newPricer(b.md)
	out := make([]valued, 0, len(ps))
	total := decimal.Zero
	for _, p := range ps {
		c, err := pr.load(ctx, p.Symbol, today.AddDays(-1), today)
		if err != nil {
			return nil, decimal.Decimal{}, err
		}
		v := valued{position: p, asset: c.asset, price: c.priceOn(today, holding{Qty: p.Qty, Avg: p.AvgEntryPrice})}
		if last, ok := c.on(today.AddDays(-1)); ok {
			v.lastday = &last
		}
		v.value = p.Qty.Mul(v.price)
		total = total.Add(v.value)
		out = append(out, v)
	}
	return out, total, nil
}

// point is an account's equity at the end of a day.
type point struct {
	Date   calendar.Date
	Equity decimal.Decimal
}

// history returns the account's equity at the end of each day from start
// to end (UTC days, both included; start is moved up to the day the
// account was opened), and the base: the equity at the end of the day
// before the first point, or the starting cash when the first point is
// the account's first day. It replays the filled orders from the starting
// cash with [apply], and values each day's holdings at the close on or
// before that day, or at their average entry price when none is stored.
func (b *Broker) history(ctx context.Context, a account, start, end calendar.Date) (decimal.Decimal, []point, error) {
	opened := calendar.DateOf(a.CreatedAt)
	if start.Before(opened) {
		start = opened
	}
	if end.Before(start) {
		return a.StartingCash, []point{}, nil
	}
	fills, err := filledOrders(ctx, b.db, a.ID)
	if err != nil {
		return decimal.Decimal{}, nil, err
	}
	from := start
	if start.After(opened) {
		from = start.AddDays(-1)
	}
	pr := newPricer(b.md)
	for _, f := range fills {
		if _, err := pr.load(ctx, f.Symbol, from, end); err != nil {
			return decimal.Decimal{}, nil, err
		}
	}
	cash, held := a.StartingCash, map[string]holding{}
	next := 0
	// replayTo applies the fills made before the end of day d.
	replayTo := func(d calendar.Date) error {
		limit := d.AddDays(1).Time(time.UTC)
		for ; next < len(fills); next++ {
			f := fills[next]
			if f.FilledAt == nil || f.FilledAvgPrice == nil {
				return fmt.Errorf("paper: filled order %s of account %s has no fill time or price", f.ID, a.ID)
			}
			if !f.FilledAt.Before(limit) {
				break
			}
			var err error
			var h holding
			var commission decimal.Decimal
			if f.Commission != nil {
				commission = *f.Commission
			}
			cash, h, err = apply(cash, held[f.Symbol], f.Symbol, brokers.Side(f.Side), f.FilledQty, *f.FilledAvgPrice, commission)
			if err != nil {
				return fmt.Errorf("paper: replaying order %s of account %s: %w", f.ID, a.ID, err)
			}
			if h.Qty.IsZero() {
				delete(held, f.Symbol)
			} else {
				held[f.Symbol] = h
			}
		}
		return nil
	}
	equity := func(d calendar.Date) decimal.Decimal {
		e := cash
		for sym, h := range held {
			e = e.Add(h.Qty.Mul(pr.bySymbol[sym].priceOn(d, h)))
		}
		return e
	}
	base := a.StartingCash
	if start.After(opened) {
		if err := replayTo(from); err != nil {
			return decimal.Decimal{}, nil, err
		}
		base = equity(from)
	}
	pts := make([]point, 0, end.Sub(start)+1)
	for d := start; !d.After(end); d = d.AddDays(1) {
		if err := replayTo(d); err != nil {
			return decimal.Decimal{}, nil, err
		}
		pts = append(pts, point{Date: d, Equity: equity(d)})
	}
	return base, pts, nil
}

// lastEquity returns the account's equity at the end of yesterday, as
// [Broker.history] computes it, from its positions valued today (vs). It
// undoes today's fills from the cash and the quantities rather than
// replaying every fill since the account opened, so that reading the
// account costs the same however long its history. When a holding of
// yesterday has no close on or before yesterday and its average entry
// price of yesterday is not known (it was bought today, or sold out), it
// falls back to the replay.
func (b *Broker) lastEquity(ctx context.Context, a account, vs []valued) (decimal.Decimal, error) {
	today := b.today()
	if !calendar.DateOf(a.CreatedAt).Before(today) {
		return a.StartingCash, nil
	}
	var fills []order
	err := b.db.NewSelect().Model(&fills).Where("account_id = ? AND status = ? AND filled_at >= ?", a.ID, statusFilled, today.Time(time.UTC)).
		Scan(ctx)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("paper: today's fills of %s: %w", a.ID, err)
	}
	replay := func() (decimal.Decimal, error) {
		base, _, err := b.history(ctx, a, today, today)
		return base, err
	}
	type held struct {
		qty, avg  decimal.Decimal
		close     *decimal.Decimal // on or before yesterday
		avgKnown  bool             // avg is yesterday's
		closeRead bool
	}
	hs := make(map[string]*held, len(vs))
	for _, v := range vs {
		hs[v.Symbol] = &held{qty: v.Qty, avg: v.AvgEntryPrice, close: v.lastday, avgKnown: true, closeRead: true}
	}
	cash := a.Cash
	for _, f := range fills {
		if f.FilledAvgPrice == nil {
			return replay()
		}
		h := hs[f.Symbol]
		if h == nil {
			h = &held{}
			hs[f.Symbol] = h
		}
		notional := f.FilledQty.Mul(*f.FilledAvgPrice)
		var commission decimal.Decimal
		if f.Commission != nil {
			commission = *f.Commission
		}
		if f.Side == string(brokers.Buy) {
			cash, h.qty, h.avgKnown = cash.Add(notional).Add(commission), h.qty.Sub(f.FilledQty), false
		} else {
			cash, h.qty = cash.Sub(notional).Add(commission), h.qty.Add(f.FilledQty)
		}
	}
	equity := cash
	yesterday := today.AddDays(-1)
	pr := newPricer(b.md)
	for sym, h := range hs {
		if h.qty.IsZero() {
			continue
		}
		if !h.closeRead {
			c, err := pr.load(ctx, sym, yesterday, yesterday)
			if err != nil {
				return decimal.Decimal{}, err
			}
			if p, ok := c.on(yesterday); ok {
				h.close = &p
			}
		}
		switch {
		case h.close != nil:
			equity = equity.Add(h.qty.Mul(*h.close))
		case h.avgKnown:
			equity = equity.Add(h.qty.Mul(h.avg))
		default:
			return replay()
		}
	}
	return equity, nil
}
