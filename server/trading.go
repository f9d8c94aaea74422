package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/dashboard"
)

// oauthScopes are the OAuth scopes Tradekit asks of a broker, Alpaca's:
// trading, to place and cancel orders, and account:write, for the paper
// broker's sign-in links to the account page. It reads no market data
// through a broker, so it asks for no data scope.
var oauthScopes = []string{"account:write", "trading"}

// BrokersConfig configures broker connections and the built-in paper
// broker. The zero value serves the paper broker, but connections need a
// SecretKey.
type BrokersConfig struct {
	// PublicURL is the base URL at which browsers and the server itself
	// reach this server: the paper broker's pages and API and the OAuth
	// callback hang below it. Default http://127.0.0.1:8080, the address
	// `tradekit serve` listens on by default.
	PublicURL string
	// SecretKey (32 bytes) seals broker tokens and webhook signing
	// secrets at rest and derives the paper broker's client secret.
	// Without it connections and webhooks are refused with a message
	// saying so.
	SecretKey []byte
	// Alpaca is Tradekit's OAuth app at Alpaca; nil leaves the alpaca
	// provider out.
	Alpaca *AlpacaConfig
	// PaperCash is a new paper account's cash. Default 100,000 (USD).
	PaperCash decimal.Decimal
	// PaperSlippageBps is the paper broker's slippage on market orders, in
	// basis points of the latest close. Default 0.
	PaperSlippageBps decimal.Decimal
	// PaperCommission is the paper broker's commission per filled order,
	// in the account's currency. Default 0.
	PaperCommission decimal.Decimal
	// PaperSignupsPerHour is how many paper accounts one client address
	// (an IP address, or an IPv6 /64) may open in a UTC clock hour.
	// Default 10 ([portal.DefaultSignupLimit]); negative: no limit.
	PaperSignupsPerHour int
	// PaperRequestsPerMinute is how many requests one paper account may
	// make to the paper broker's API in a UTC clock minute, Tradekit's own
	// calls for the account's connection included, as at Alpaca. Default
	// 200 ([paper.DefaultRateLimit]); negative: no limit.
	PaperRequestsPerMinute int
	// SyncInterval is how often active connections sync. Default 15
	// minutes; negative: never on a schedule.
	SyncInterval time.Duration
	// HTTPClient reaches the brokers, the paper broker included. Default:
	// a client with a 30 s timeout.
	HTTPClient *http.Client
}

// AlpacaConfig is Tradekit's OAuth app registered at Alpaca, and the
// endpoints to use (live or paper trading).
type AlpacaConfig struct {
	ClientID, ClientSecret string
	AuthorizeURL           string // default https://app.alpaca.markets/oauth/authorize
	TokenURL               string // default https://api.alpaca.markets/oauth/token
	APIURL                 string // default https://paper-api.alpaca.markets (paper trading)
}

// paperPrefix is where the paper broker is mounted.
const paperPrefix = "/paper"

// callbackPath is the OAuth callback's path.
const callbackPath = "/api/v1/brokers/oauth/callback"

// newTrading builds the paper broker, its portal and the connection
// service.
func (s *Server) newTrading() {
	cfg := s.cfg.Brokers
	base := strings.TrimRight(or(cfg.PublicURL, "http://127.0.0.1:8080"), "/")
	callback := base + callbackPath
	secret := paperClientSecret(cfg.SecretKey)
	s.paper = paper.New(s.db, paper.Config{
		StartingCash: cfg.PaperCash, SlippageBps: cfg.PaperSlippageBps, Commission: cfg.PaperCommission,
		PriceVersion: s.studies.PriceVersion, Now: s.now, Logger: s.log,
		RateLimit: cfg.PaperRequestsPerMinute,
	})
	s.paperPortal = portal.New(s.db, s.paper, portal.Config{
		Clients: []portal.Client{{ID: "tradekit", Name: "Tradekit", Secret: secret, RedirectURIs: []string{callback}}},
		Prefix:  paperPrefix, PublicURL: strings.TrimRight(cfg.PublicURL, "/"),
		SigningKey: paperSigningKey(cfg.SecretKey), SignupLimit: cfg.PaperSignupsPerHour, ClientAddress: clientAddress,
	})
	providers := []connect.Provider{{
		Name:          "paper",
		OAuth:         alpaca.OAuthConfig("tradekit", secret, base+paperPrefix+"/oauth/authorize", base+paperPrefix+"/oauth/token", callback, oauthScopes...),
		APIURL:        base + paperPrefix,
		RevokeURL:     base + paperPrefix + "/oauth/revoke",
		SendLoginHint: true,
	}}
	unavailable := map[string]string{"alpaca": alpacaConfigure}
	if a := cfg.Alpaca; a != nil {
		providers = append(providers, connect.Provider{
			Name:   "alpaca",
			OAuth:  alpaca.OAuthConfig(a.ClientID, a.ClientSecret, or(a.AuthorizeURL, "https://app.alpaca.markets/oauth/authorize"), or(a.TokenURL, "https://api.alpaca.markets/oauth/token"), callback, oauthScopes...),
			APIURL: or(a.APIURL, "https://paper-api.alpaca.markets"),
			// A margin account may short; a cash account's broker refuses.
			CanShort: true,
		})
		delete(unavailable, "alpaca")
	}
	var sealer *connect.Sealer
	if cfg.SecretKey != nil {
		var err error
		if sealer, err = connect.NewSealer(cfg.SecretKey); err != nil {
			panic("server: " + err.Error()) // cmd checks the key's size; only a caller's mistake gets here
		}
	}
	s.sealer = sealer
	s.connect = connect.New(s.db, connect.Config{Providers: providers, Sealer: sealer, Unavailable: unavailable,
		Account: s.billing.AccountOf,
		PortfolioLimit: func(ctx context.Context, userID uuid.UUID) (int, error) {
			p, err := s.billing.PlanOf(ctx, userID)
			return p.Features.Portfolios, err
		},
		HTTPClient: s.brokerClient(), SyncInterval: cfg.SyncInterval, SlippageBps: cfg.PaperSlippageBps,
		PriceVersion: s.studies.PriceVersion,
		// The copy engine is built after this service: wake it through s.
		OnFill:  func(uuid.UUID) { s.copy.Wake() },
		Observe: s.metrics.connectObserver(),
		UserEmail: func(ctx context.Context, userID uuid.UUID) (string, error) {
			u, err := s.billing.UserByID(ctx, userID)
			return u.Email, err
		},
		Now: s.now, Logger: s.log})
}

// paperSignIn returns a sign-in link to the paper broker's page of the
// paper account with the id, for the dashboard's button on a paper
// connection, bound to the browser of r by a cookie set on w.
func (s *Server) paperSignIn(w http.ResponseWriter, r *http.Request, accountID string) (string, error) {
	id, err := uuid.Parse(accountID)
	if err != nil {
		return "", fmt.Errorf("server: paper account id %q: %w", accountID, err)
	}
	link, _, err := s.paperPortal.SignInLink(w, r, id)
	return link, err
}

// paperClientSecret derives the paper broker's OAuth client secret from
// the secret key, so that every instance sharing the key agrees on it;
// without a key it is random (and connections are refused anyway).
func paperClientSecret(key []byte) string {
	if key == nil {
		b := make([]byte, 32)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tradekit paper broker OAuth client secret"))
	return hex.EncodeToString(m.Sum(nil))
}

// paperSigningKey derives the key that signs the paper broker's consent
// forms from the secret key, so that every instance sharing the key
// accepts the forms the others show; nil without a key (the broker then
// draws one of its own).
func paperSigningKey(key []byte) []byte {
	if key == nil {
		return nil
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tradekit paper broker consent form signing key"))
	return m.Sum(nil)
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mount sends the paper broker's paths to it, the dashboard's to the
// dashboard, GET /metrics to the metrics when [Config.Metrics] is set, and
// the rest to the router.
func (s *Server) mount(router http.Handler) http.Handler {
	paper := http.StripPrefix(paperPrefix, s.paperPortal.Handler())
	board := dashboard.New(dashboard.Config{Billing: s.billing, Trading: s.trading, Market: s.marketdb, Status: statusOf,
		Now: s.now, Revoke: s.auth.Revoke, Usage: s.limiter.Usage,
		PublicURL: s.cfg.Brokers.PublicURL, Brokers: s.connect, Copy: s.copy, Logger: s.log,
		Alerts: s.alerts, Studies: s.studies, Passwords: s.cfg.Passwords, PaperSignIn: s.paperSignIn})
	metrics := s.metrics.handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, paperPrefix+"/") {
			setRoute(r, routePaper)
			paper.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/dashboard" {
			setRoute(r, routeDashboard)
			http.Redirect(w, r, "/dashboard/", http.StatusMovedPermanently)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/dashboard/") {
			setRoute(r, routeDashboard)
			board.ServeHTTP(w, r)
			return
		}
		if s.cfg.Metrics && r.URL.Path == routeMetrics && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			setRoute(r, routeMetrics)
			metrics.ServeHTTP(w, r)
			return
		}
		router.ServeHTTP(w, r)
	})
}
