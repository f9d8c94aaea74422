package portal_test

import (
	"testing"
	"time"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
)

// TestNewPanics checks that New refuses configurations that are
// programming errors.
func TestNewPanics(t *testing.T) {
	t.Parallel()
	b := paper.New(nil, paper.Config{})
	ok := portal.Client{ID: "a", Secret: "s", RedirectURIs: []string{"https://app.example/cb"}}
	tests := []struct {
		name string
		cfg  portal.Config
	}{
		{"no client ID", portal.Config{Clients: []portal.Client{{Secret: "s", RedirectURIs: ok.RedirectURIs}}}},
		{"no secret", portal.Config{Clients: []portal.Client{{ID: "a", RedirectURIs: ok.RedirectURIs}}}},
		{"no redirect URI", portal.Config{Clients: []portal.Client{{ID: "a", Secret: "s"}}}},
		{"relative redirect URI", portal.Config{Clients: []portal.Client{{ID: "a", Secret: "s", RedirectURIs: []string{"/cb"}}}}},
		{"redirect URI with a fragment", portal.Config{Clients: []portal.Client{{ID: "a", Secret: "s", RedirectURIs: []string{"https://app.example/cb#x"}}}}},
		{"two clients with one ID", portal.Config{Clients: []portal.Client{ok, ok}}},
		{"prefix", portal.Config{Prefix: "paper"}},
		{"public URL with a query", portal.Config{PublicURL: "https://broker.example/?x=1"}},
		{"negative TTL", portal.Config{AccessTTL: -time.Second}},
		{"short signing key", portal.Config{SigningKey: make([]byte, 31)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !panics(func() { portal.New(nil, b, tt.cfg) }) {
				t.Errorf("New(%+v) did not panic", tt.cfg)
			}
		})
	}
	if panics(func() { portal.New(nil, b, portal.Config{Clients: []portal.Client{ok}, Prefix: "/paper/"}) }) {
		t.Error("New panicked on a good configuration")
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	f()
	return false
}
