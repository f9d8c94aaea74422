package connect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/internal/database"
)

// Connect starts a connection of the user to provider: it stores the
// connection pending with a single-use OAuth state and returns it with
// the URL at the broker where the user authorizes it, with a PKCE S256
// challenge (and the user's email as login_hint for a provider with
// SendLoginHint). redirectURL, where
// the user's browser returns afterwards, must be an absolute http(s) URL.
// An account whose members together have as many active connections as
// Config.PortfolioLimit allows gets an error wrapping
// [tradekit.ErrForbidden] with details {"limit": "portfolios"}; a user
// with [MaxPending] connections waiting for authorization, one with
// details {"limit": "pendingConnections"}.
func (s *Service) Connect(ctx context.Context, userID uuid.UUID, provider, redirectURL string) (Connection, string, error) {
	p, err := s.provider(provider)
	if err != nil {
		return Connection{}, "", err
	}
	if err := checkRedirect(redirectURL); err != nil {
		return Connection{}, "", err
	}
	sealer, err := s.sealer()
	if err != nil {
		return Connection{}, "", err
	}
	limit, err := s.portfolioLimit(ctx, userID)
	if err != nil {
		return Connection{}, "", err
	}
	opts, err := s.authOptions(ctx, p, userID)
	if err != nil {
		return Connection{}, "", err
	}
	now := s.cfg.Now().UTC()
	c := Connection{ID: uuid.New(), UserID: userID, Provider: p.Name, Status: Pending, RedirectURL: redirectURL,
		CreatedAt: now, UpdatedAt: now}
	state, verifier := randomToken(), oauth2.GenerateVerifier()
	st := oauthState{StateHash: hashToken(state), ConnectionID: c.ID, CodeVerifier: sealer.Seal(verifier, "verifier:"+c.ID.String()),
		ExpiresAt: now.Add(s.cfg.StateTTL)}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Under the account's lock, so that concurrent connects of its
		// members never pass either limit.
		if err := limit.check(ctx, tx); err != nil {
			return err
		}
		if err := checkWaiting(ctx, tx, userID, now); err != nil {
			return err
		}
		if err := NewStore(tx).InsertConnection(ctx, &c); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&st).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert state: %w", err)
		}
		return nil
	})
	if err != nil {
		return Connection{}, "", err
	}
	return c, p.OAuth.AuthCodeURL(state, append(opts, oauth2.S256ChallengeOption(verifier))...), nil
}

// authOptions returns the parameters the authorization URL of p carries
// beyond the state and the PKCE challenge: the user's login_hint, when p
// asks for it.
func (s *Service) authOptions(ctx context.Context, p Provider, userID uuid.UUID) ([]oauth2.AuthCodeOption, error) {
	if !p.SendLoginHint || s.cfg.UserEmail == nil {
		return nil, nil
	}
	email, err := s.cfg.UserEmail(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("connect: the email of user %s: %w", userID, err)
	}
	return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("login_hint", email)}, nil
}

// portfolioLimit is what the plan's portfolio limit of a user needs: how
// many the plan allows, the user's account and its members.
type portfolioLimit struct {
	max       int
	accountID uuid.UUID
	members   []uuid.UUID
}

// portfolioLimit reads the user's limit, before the transaction that
// checks it (on SQLite, a query outside it would wait for it).
func (s *Service) portfolioLimit(ctx context.Context, userID uuid.UUID) (portfolioLimit, error) {
	maxPortfolios, err := s.cfg.PortfolioLimit(ctx, userID)
	if err != nil {
		return portfolioLimit{}, err
	}
	accountID, members, err := s.cfg.Account(ctx, userID)
	if err != nil {
		return portfolioLimit{}, err
	}
	return portfolioLimit{max: maxPortfolios, accountID: accountID, members: members}, nil
}

// check takes the lock of the account in the transaction tx and returns
// a 403 when its members together already have as many active
// connections as the plan allows portfolios.
func (l portfolioLimit) check(ctx context.Context, tx bun.Tx) error {
	maxPortfolios := l.max
	if err := database.Lock(ctx, tx, l.accountID); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	n, err := NewStore(tx).CountActiveOf(ctx, l.members)
	if err != nil {
		return err
	}
	if n >= maxPortfolios {
		return fmt.Errorf("connect: %w", &tradekit.Error{Kind: tradekit.ErrForbidden,
			Msg: fmt.Sprintf("your plan allows %s and each connected account is one; "+
				"disconnect one or move to a larger plan", plural(maxPortfolios, "portfolio")),
			Details: map[string]any{"limit": "portfolios", "max": maxPortfolios}})
	}
	return nil
}

// checkWaiting returns a 403 when the user has MaxPending connections
// waiting for authorization at now. Run it under the lock
// [portfolioLimit.check] takes.
func checkWaiting(ctx context.Context, tx bun.Tx, userID uuid.UUID, now time.Time) error {
	n, first, err := NewStore(tx).waiting(ctx, userID, now)
	if err != nil {
		return err
	}
	if n >= MaxPending {
		return fmt.Errorf("connect: %w", &tradekit.Error{Kind: tradekit.ErrForbidden,
			Msg: fmt.Sprintf("you have %d broker connections waiting for authorization, the most allowed at once; "+
				"finish or disconnect one, or wait until the oldest expires in %s", n, first.Sub(now).Round(time.Second)),
			Details: map[string]any{"limit": "pendingConnections", "max": MaxPending}})
	}
	return nil
}

// checkRedirect returns a 400 naming redirectUrl unless u is an absolute
// http or https URL.
func checkRedirect(u string) error {
	if u == "" {
		return &tradekit.ParamError{Param: "redirectUrl", Msg: "is required: the URL the user's browser returns to after authorizing"}
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || len(u) > 2048 {
		return &tradekit.ParamError{Param: "redirectUrl", Msg: "must be an absolute http or https URL without credentials, got " + tradekit.Quote(u)}
	}
	return nil
}

// Callback completes the authorization the broker redirected back with:
// state and code, or errCode (and errDesc) when the user denied or the
// broker failed. It returns where to send the user's browser: the
// connection's redirect URL with connectionId and status, or error. An
// unknown or already used state changes nothing and is an error wrapping
// [tradekit.ErrNotFound]; a state past its time fails the connection's
// authorization.
func (s *Service) Callback(ctx context.Context, state, code, errCode, errDesc string) (string, error) {
	now := s.cfg.Now().UTC()
	if state == "" {
		return "", &tradekit.ParamError{Param: "state", Msg: "is required"}
	}
	st, err := NewStore(s.db).takeState(ctx, hashToken(state), now)
	if err != nil {
		return "", err
	}
	c, err := NewStore(s.db).connection(ctx, st.ConnectionID)
	if err != nil {
		return "", err
	}
	fail := func(reason, public string) (string, error) {
		s.cfg.Logger.Warn("broker authorization failed", "connection_id", c.ID, "provider", c.Provider, "reason", reason)
		c.LastError, c.UpdatedAt = public, now
		if err := NewStore(s.db).updateConnection(ctx, &c, "last_error", "updated_at"); err != nil {
			return "", err
		}
		return withQuery(c.RedirectURL, "connectionId", c.ID.String(), "status", c.Status, "error", public), nil
	}
	switch {
	case c.Status != Pending:
		return fail("connection not pending", "the connection is "+c.Status)
	case now.After(st.ExpiresAt):
		return fail("state expired", "the authorization took longer than "+s.cfg.StateTTL.String()+"; connect again")
	case errCode != "":
		return fail(errCode+": "+errDesc, "the broker did not authorize the connection: "+errCode)
	case code == "":
		return fail("no code", "the broker sent no authorization code")
	}
	p, err := s.provider(c.Provider)
	if err != nil {
		return fail(err.Error(), "the provider is no longer configured on this server")
	}
	sealer, err := s.sealer()
	if err != nil {
		return "", err
	}
	verifier, err := sealer.Open(st.CodeVerifier, "verifier:"+c.ID.String())
	if err != nil {
		return "", err
	}
	tok, err := p.OAuth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return fail("code exchange: "+err.Error(), "the broker refused the authorization code")
	}
	acct, err := s.client(p, &c, tok, sealer).Account(ctx)
	if err != nil {
		return fail("read account: "+err.Error(), "the broker's account could not be read")
	}
	c.Status, c.AccountID, c.AccountName, c.LastError, c.UpdatedAt = Active, acct.ID, acct.Number, "", now
	sealTokens(sealer, &c, tok)
	// The limit is checked again, under the account's lock with the
	// update: two authorizations of its members may have raced.
	limit, err := s.portfolioLimit(ctx, c.UserID)
	if err != nil {
		return "", err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := limit.check(ctx, tx); err != nil {
			return err
		}
		return NewStore(tx).updateConnection(ctx, &c, "status", "account_id", "account_name", "last_error", "updated_at",
			"access_token", "refresh_token", "token_expiry")
	})
	if errors.Is(err, tradekit.ErrForbidden) {
		c.Status, c.AccountID, c.AccountName, c.AccessToken, c.RefreshToken, c.TokenExpiry = Pending, "", "", nil, nil, nil
		return fail("portfolio limit", "your plan's portfolio limit is reached")
	}
	if err != nil {
		return "", err
	}
	// The first sync starts at once, so that the portfolio is there
	// within moments of connecting, not at the next scheduled round.
	if _, err := s.StartSync(ctx, c.UserID, c.ID); err != nil {
		s.cfg.Logger.Warn("the first sync of a new connection did not start", "connection_id", c.ID, "err", err)
	}
	return withQuery(c.RedirectURL, "connectionId", c.ID.String(), "status", c.Status), nil
}

// sealTokens stores tok in c, sealed.
func sealTokens(sealer *Sealer, c *Connection, tok *oauth2.Token) {
	at := sealer.Seal(tok.AccessToken, "access:"+c.ID.String())
	c.AccessToken = &at
	c.RefreshToken = nil
	if tok.RefreshToken != "" {
		rt := sealer.Seal(tok.RefreshToken, "refresh:"+c.ID.String())
		c.RefreshToken = &rt
	}
	c.TokenExpiry = nil
	if !tok.Expiry.IsZero() {
		e := tok.Expiry.UTC()
		c.TokenExpiry = &e
	}
}

// openTokens returns c's tokens, opened.
func openTokens(sealer *Sealer, c *Connection) (*oauth2.Token, error) {
	if c.AccessToken == nil {
		return nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict, "the connection holds no broker authorization"))
	}
	tok := &oauth2.Token{TokenType: "Bearer"}
	var err error
	if tok.AccessToken, err = sealer.Open(*c.AccessToken, "access:"+c.ID.String()); err != nil {
		return nil, errSealedElsewhere(c, err)
	}
	if c.RefreshToken != nil {
		if tok.RefreshToken, err = sealer.Open(*c.RefreshToken, "refresh:"+c.ID.String()); err != nil {
			return nil, errSealedElsewhere(c, err)
		}
	}
	if c.TokenExpiry != nil {
		tok.Expiry = *c.TokenExpiry
	}
	return tok, nil
}

// errSealedElsewhere is the error of c's tokens that the server's key
// does not open (err): sealed under another key, which a restored
// database without its key file, or another TRADEKIT_SECRET_KEY, brings.
// No retry helps; its message says what does.
func errSealedElsewhere(c *Connection, err error) error {
	return fmt.Errorf("connect: connection %s: %w: %w", c.ID, tradekit.Errorf(tradekit.ErrUnavailable,
		"the connection's broker tokens do not open with this server's key (TRADEKIT_SECRET_KEY, or the SQLite "+
			"database's .secret file): restore the key that sealed them, or disconnect and connect again"), err)
}

// client returns the broker client of c, which stores refreshed tokens.
func (s *Service) client(p Provider, c *Connection, tok *oauth2.Token, sealer *Sealer) brokers.Trader {
	if s.cfg.Trader != nil {
		return s.cfg.Trader(p, c, tok)
	}
	return alpaca.New(alpaca.Config{BaseURL: p.APIURL, OAuth: p.OAuth, Token: tok, HTTPClient: s.cfg.HTTPClient,
		OnToken: func(ctx context.Context, t *oauth2.Token) error {
			if c.Status != Active {
				return nil // stored when the connection becomes active
			}
			sealTokens(sealer, c, t)
			c.UpdatedAt = s.cfg.Now().UTC()
			return NewStore(s.db).updateConnection(ctx, c, "access_token", "refresh_token", "token_expiry", "updated_at")
		}})
}

// randomToken returns 256 random bits as URL-safe text.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never returns an error (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken returns the hex SHA-256 of t, the form states are stored in.
func hashToken(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// withQuery returns u with the name-value pairs added to its query.
func withQuery(u string, kv ...string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// plural returns "1 portfolio", "2 portfolios": n and the noun, with an s
// unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
