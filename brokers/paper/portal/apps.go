package portal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/paper"
)

// App is a third-party application registered with the paper broker
// (`tradekit paper apps create`): an OAuth client stored in the
// database, which the broker accepts beside the clients of
// Config.Clients. Its secret is stored only as a SHA-256 hash.
type App struct {
	// ClientID is the client_id the application sends: "app_" and 16
	// random bytes, hex.
	ClientID string
	// Name is shown to the user on the consent page.
	Name string
	// RedirectURIs are the absolute URLs the broker may send the user
	// back to.
	RedirectURIs []string
	// CreatedAt is when the application was registered.
	CreatedAt time.Time
}

// appRow is a row of paper_apps.
type appRow struct {
	bun.BaseModel `bun:"table:paper_apps"`

	ClientID     string    `bun:"client_id,pk"`
	Name         string    `bun:"name"`
	SecretHash   string    `bun:"secret_hash"`
	RedirectURIs string    `bun:"redirect_uris"` // one per line
	CreatedAt    time.Time `bun:"created_at"`
}

func (r appRow) app() App {
	return App{ClientID: r.ClientID, Name: r.Name, RedirectURIs: strings.Split(r.RedirectURIs, "\n"), CreatedAt: r.CreatedAt}
}

// maxAppName is the longest application name.
const maxAppName = 100

// checkRedirectURI reports whether u is an absolute URL with a host and
// without a fragment, as every redirect URI must be.
func checkRedirectURI(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.IsAbs() && p.Host != "" && !strings.Contains(u, "#") && !strings.ContainsAny(u, "\n\r")
}

// CreateApp registers an application named name with its redirect URIs
// on db (with Tradekit's migrations applied) and returns it and its
// client secret, 256 random bits in base64url: the only time the secret
// is shown, since only its hash is stored. The error wraps
// [tradekit.ErrInvalid] for an empty name or one longer than 100
// characters, no redirect URI, or one that is not an absolute URL
// without a fragment.
func CreateApp(ctx context.Context, db bun.IDB, name string, redirectURIs []string, now time.Time) (App, string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "" || len(name) > maxAppName || strings.ContainsAny(name, "\n\r"):
		return App{}, "", invalid("an app's name must be 1 to %d characters on one line", maxAppName)
	case len(redirectURIs) == 0:
		return App{}, "", invalid("an app needs a redirect URI")
	}
	for _, u := range redirectURIs {
		if !checkRedirectURI(u) {
			return App{}, "", invalid("redirect URI %s is not an absolute URL without a fragment", tradekit.Quote(u))
		}
	}
	id := make([]byte, 16)
	secret := make([]byte, 32)
	rand.Read(id) // never returns an error (crypto/rand)
	rand.Read(secret)
	s := base64.RawURLEncoding.EncodeToString(secret)
	r := appRow{ClientID: "app_" + hex.EncodeToString(id), Name: name, SecretHash: paper.HashSecret(s),
		RedirectURIs: strings.Join(redirectURIs, "\n"), CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if _, err := db.NewInsert().Model(&r).Exec(ctx); err != nil {
		return App{}, "", fmt.Errorf("paper: register app: %w", err)
	}
	return r.app(), s, nil
}

// Apps returns the registered applications, oldest first.
func Apps(ctx context.Context, db bun.IDB) ([]App, error) {
	var rows []appRow
	if err := db.NewSelect().Model(&rows).Order("created_at", "client_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: apps: %w", err)
	}
	out := make([]App, len(rows))
	for i, r := range rows {
		out[i] = r.app()
	}
	return out, nil
}

// DeleteApp unregisters the application with the client id and revokes
// every token issued to it; the accounts it opened stay. The error wraps
// [tradekit.ErrNotFound] when no application has the id.
func DeleteApp(ctx context.Context, db bun.IDB, clientID string, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*appRow)(nil)).Where("client_id = ?", clientID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("paper: delete app: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return fmt.Errorf("paper: delete app: %w", err)
			}
			return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "app %s not found", tradekit.Quote(clientID)))
		}
		if err := paper.NewTokens(tx).RevokeClient(ctx, clientID, now); err != nil {
			return fmt.Errorf("paper: revoke the tokens of app %s: %w", clientID, err)
		}
		return nil
	})
}

// client returns the OAuth client with the id: one of Config.Clients, or
// a registered app, and whether there is one.
func (p *Portal) client(ctx context.Context, id string) (Client, bool, error) {
	if c, ok := p.clients[id]; ok {
		return c, true, nil
	}
	if !strings.HasPrefix(id, "app_") {
		return Client{}, false, nil
	}
	var r appRow
	err := p.db.NewSelect().Model(&r).Where("client_id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Client{}, false, nil
	}
	if err != nil {
		return Client{}, false, fmt.Errorf("paper: app %s: %w", id, err)
	}
	a := r.app()
	return Client{ID: a.ClientID, Name: a.Name, RedirectURIs: a.RedirectURIs, secretHash: r.SecretHash}, true, nil
}

// checkSecret reports whether secret is the client's, in constant time.
func (c Client) checkSecret(secret string) bool {
	got := sha256.Sum256([]byte(secret))
	var want []byte
	if c.secretHash != "" {
		want, _ = hex.DecodeString(c.secretHash)
	} else {
		w := sha256.Sum256([]byte(c.Secret))
		want = w[:]
	}
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

// invalid returns an error wrapping [tradekit.ErrInvalid] with a message
// for end users.
func invalid(format string, args ...any) error {
	return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrInvalid, format, args...))
}
