package fetch

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 2 ", 2 * time.Second},
		{"-3", 0},
		{"soon", 0},
		{"Fri, 27 Nov 2026 23:00:30 GMT", 30 * time.Second},
		{"Fri, 27 Nov 2026 22:59:00 GMT", 0}, // in the past
		{"86400", 10 * time.Minute},          // capped
		{"Sat, 28 Nov 2026 23:00:00 GMT", 10 * time.Minute},
	} {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tt.h, got, tt.want)
		}
	}
}
