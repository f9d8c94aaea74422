package portal

import (
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/paper"
)

// Client is an OAuth 2.0 client registered with the portal: an
// application that may ask users to connect a paper account.
type Client struct {
	// ID is the client_id the application sends.
	ID string
	// Secret authenticates the application at the token and revocation
	// endpoints.
	Secret string
	// Name is shown to the user on the consent page; ID when empty.
	Name string
	// RedirectURIs are the absolute URLs the portal may send the user back
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

// Config configures a [Portal]. The zero value of every field but Clients
// is a usable default.
type Config struct {
	// Clients are the registered OAuth clients.
	Clients []Client
	// Prefix is the path at which the handler is mounted, as browsers see
	// it, e.g. "/paper": the consent form posts to Prefix+"/oauth/authorize"
	// and the CSRF cookie's Path is that same path. Empty means the root.
	Prefix string
	// PublicURL is the base URL at which browsers and clients reach the
	// server the portal is mounted in, such as "https://tradekit.example":
	// sign-in links to the account page start with it, then Prefix.
	// Empty: they are paths on the portal's host.
	PublicURL string
	// AccessTTL is the lifetime of an access token; [DefaultAccessTTL]
	// when zero.
	AccessTTL time.Duration
	// SigningKey signs the consent form's CSRF tokens (HMAC-SHA256); at
	// least 32 bytes. Portals sharing a database must share it, or a form
	// shown by one is refused by another. Random when nil: right for a
	// single process.
	SigningKey []byte
	// SignupLimit is how many paper accounts one client address may open
	// in a UTC clock hour; approvals beyond it answer 429 with
	// Retry-After. [DefaultSignupLimit] when zero; negative: no limit.
	SignupLimit int
	// ClientAddress names the client of a request for SignupLimit: a
	// server passes the address it counts clients by elsewhere (Tradekit's
	// server: the IP address, or the /64 network of an IPv6 one). The host
	// of the request's RemoteAddr when nil. Behind a reverse proxy every
	// client is the proxy unless this function says otherwise.
	ClientAddress func(*http.Request) string
}

// DefaultAccessTTL is the default of Config.AccessTTL.
const DefaultAccessTTL = time.Hour

// CodeTTL is the lifetime of an authorization code.
const CodeTTL = 10 * time.Minute

// Portal is the paper broker's OAuth 2.0 authorization server and its
// account pages, in front of a [paper.Broker]: the consent page, the
// token and revocation endpoints, sign-in links and the account page
// where the holder manages API keys, and the registered apps. It keeps
// its own tables (codes, consent nonces, sign-up counts, sign-in links,
// sessions, apps) and reaches the accounts, the tokens and the API keys
// through the broker's API. It is safe for concurrent use, and several
// Portals on one PostgreSQL database behave as one.
type Portal struct {
	db          bun.IDB
	broker      *paper.Broker
	tokens      *paper.Tokens
	clients     map[string]Client
	prefix      string
	publicURL   string // no trailing slash
	accessTTL   time.Duration
	pages       *template.Template
	key         []byte // signs the consent tokens
	signupLimit int    // accounts per client address per hour; negative: no limit
	clientAddr  func(*http.Request) string
	log         *slog.Logger
}

// New returns the Portal of the broker b, on db (the database b runs on),
// configured by cfg. New panics, as [regexp.MustCompile] does, on a
// configuration that is a programming error: a client without an ID, a
// secret or a redirect URI, two clients with one ID, a redirect URI that
// is not an absolute URL without a fragment, a Prefix that does not start
// with "/", a PublicURL that is not an absolute URL without a query or a
// fragment, a negative AccessTTL, or a SigningKey shorter than 32 bytes.
func New(db bun.IDB, b *paper.Broker, cfg Config) *Portal {
	p := &Portal{
		db:          db,
		broker:      b,
		tokens:      paper.NewTokens(db),
		clients:     map[string]Client{},
		prefix:      strings.TrimRight(cfg.Prefix, "/"),
		publicURL:   strings.TrimRight(cfg.PublicURL, "/"),
		accessTTL:   cfg.AccessTTL,
		pages:       pages,
		key:         cfg.SigningKey,
		signupLimit: cfg.SignupLimit,
		clientAddr:  cfg.ClientAddress,
		log:         b.Logger(),
	}
	for _, c := range cfg.Clients {
		switch {
		case c.ID == "":
			panic("paper: a client has no ID")
		case c.Secret == "":
			panic(fmt.Sprintf("paper: client %q has no secret", c.ID))
		case len(c.RedirectURIs) == 0:
			panic(fmt.Sprintf("paper: client %q has no redirect URI", c.ID))
		}
		if _, dup := p.clients[c.ID]; dup {
			panic(fmt.Sprintf("paper: two clients have the ID %q", c.ID))
		}
		for _, u := range c.RedirectURIs {
			pu, err := url.Parse(u)
			if err != nil || !pu.IsAbs() || pu.Host == "" || pu.Fragment != "" || strings.Contains(u, "#") {
				panic(fmt.Sprintf("paper: client %q: redirect URI %q is not an absolute URL without a fragment", c.ID, u))
			}
		}
		c.RedirectURIs = append([]string(nil), c.RedirectURIs...)
		p.clients[c.ID] = c
	}
	if p.prefix != "" && !strings.HasPrefix(p.prefix, "/") {
		panic(fmt.Sprintf("paper: prefix %q does not start with /", cfg.Prefix))
	}
	if u, err := url.Parse(p.publicURL); p.publicURL != "" && (err != nil || !u.IsAbs() || u.Host == "" || u.RawQuery != "" || strings.Contains(p.publicURL, "#")) {
		panic(fmt.Sprintf("paper: public URL %q is not an absolute URL without a query or a fragment", cfg.PublicURL))
	}
	switch {
	case p.accessTTL < 0:
		panic("paper: negative AccessTTL")
	case p.accessTTL == 0:
		p.accessTTL = DefaultAccessTTL
	}
	switch {
	case p.key == nil:
		p.key = newKey()
	case len(p.key) < 32:
		panic(fmt.Sprintf("paper: SigningKey has %d bytes, want at least 32", len(p.key)))
	default:
		p.key = append([]byte(nil), p.key...)
	}
	if p.signupLimit == 0 {
		p.signupLimit = DefaultSignupLimit
	}
	if p.clientAddr == nil {
		p.clientAddr = peerAddress
	}
	return p
}

// Handler returns the portal's HTTP interface, with paths relative to
// where it is mounted (Config.Prefix), in front of the broker's API
// ([paper.Broker.Handler]), which serves every other path:
//
//	GET  /oauth/authorize                 the consent page
//	POST /oauth/authorize                 the user's decision
//	POST /oauth/token                     authorization_code and refresh_token grants
//	POST /oauth/revoke                    token revocation (RFC 7009)
//	POST /account/sign-in-links           a sign-in link to the account page (access token with account:write)
//	GET  /account/sign-in                 use a sign-in link: start a session, go to the account page
//	GET  /account                         the account page: its API keys
//	POST /account/keys                    create an API key; the page shows its secret once
//	POST /account/keys/revoke             revoke an API key (key_id)
//	POST /account/sign-out                end the session
//	/v2/…                                 the broker's API
//
// Mount it under its prefix with the prefix stripped:
//
//	mux.Handle("/paper/", http.StripPrefix("/paper", p.Handler()))
func (p *Portal) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /oauth/authorize", p.page(p.handleAuthorizeShow))
	mux.Handle("POST /oauth/authorize", p.page(p.handleAuthorizeDecide))
	mux.Handle("POST /oauth/token", p.oauth(p.handleToken))
	mux.Handle("POST /oauth/revoke", p.oauth(p.handleRevoke))
	mux.Handle("POST /account/sign-in-links", p.broker.AccountWriteRoute(p.handleSignInLink))
	mux.Handle("GET /account/sign-in", p.accountPages(p.handleSignIn))
	mux.Handle("GET /account", p.accountPages(p.handleAccountPage))
	mux.Handle("POST /account/keys", p.accountPages(p.handleKeyCreate))
	mux.Handle("POST /account/keys/revoke", p.accountPages(p.handleKeyRevoke))
	mux.Handle("POST /account/sign-out", p.accountPages(p.handleSignOut))
	api := p.broker.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2" || strings.HasPrefix(r.URL.Path, "/v2/") {
			api.ServeHTTP(w, r) // the order path: one routing, the engine's
			return
		}
		mux.ServeHTTP(w, r) // a known path with another method answers 405
	})
}

// clock returns the broker's current time as stored ([paper.Broker.Now]).
func (p *Portal) clock() time.Time { return p.broker.Now() }

// logError logs an error that answers 500.
func (p *Portal) logError(r *http.Request, err error) {
	p.log.Error("paper: request failed", "method", r.Method, "uri", r.URL.RequestURI(), "error", err)
}
