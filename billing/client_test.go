package billing_test

import (
	"testing"

	"github.com/tradekit/tradekit/billing"
)

func TestClientAddress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ remote, want string }{
		{"203.0.113.7:4000", "203.0.113.7"},
		{"[2001:db8:1:2:aaaa::1]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::ffff]:80", "2001:db8:1:2::/64"},
		{"[::ffff:203.0.113.7]:4000", "203.0.113.7"},
		{"203.0.113.7", "203.0.113.7"}, // no port
		{"not an address", "not an address"},
	} {
		if got := billing.ClientAddress(tt.remote); got != tt.want {
			t.Errorf("ClientAddress(%q) = %q, want %q", tt.remote, got, tt.want)
		}
	}
}
