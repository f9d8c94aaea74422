package database

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseLSN(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0/0", 0, true},
		{"0/16B3748", 0x16B3748, true},
		{"16/B374D848", 0x16<<32 | 0xB374D848, true},
		{"", 0, false},
		{"16", 0, false},
		{"x/1", 0, false},
		{"1/100000000", 0, false}, // the low half has 32 bits
	} {
		got, err := parseLSN(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseLSN(%q) = %#x, %v, want %#x, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestLagOf checks the lag by LSN against a history of the primary's
// samples: caught up with the latest is no lag whatever the times; behind
// it, the time since the newest sample the replica has reached; behind
// them all, unknown.
func TestLagOf(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	idle := []lsnSample{{100, at(0)}, {100, at(1)}, {100, at(2)}}
	busy := []lsnSample{{100, at(0)}, {200, at(1)}, {300, at(2)}, {400, at(3)}}
	for _, tt := range []struct {
		name    string
		history []lsnSample
		replay  uint64
		now     time.Time
		want    time.Duration
		known   bool
	}{
		{"IdleCaughtUp", idle, 100, at(60), 0, true},
		{"AheadOfSample", busy, 450, at(3), 0, true},
		{"CaughtUp", busy, 400, at(4), 0, true},
		{"OneBehind", busy, 300, at(4), 2 * time.Second, true},
		{"BetweenSamples", busy, 250, at(4), 3 * time.Second, true},
		{"PausedAtStart", busy, 100, at(10), 10 * time.Second, true},
		{"BehindAll", busy, 50, at(4), 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, known := lagOf(tt.history, tt.replay, tt.now)
			if got != tt.want || known != tt.known {
				t.Errorf("lagOf(…, %d, …) = %s, %v, want %s, %v", tt.replay, got, known, tt.want, tt.known)
			}
		})
	}
}

// pgError is pgx's error of a statement with the SQLSTATE code.
func pgError(code string) error { return &pgconn.PgError{Severity: "ERROR", Code: code} }

func TestRetryOnPrimary(t *testing.T) {
	for _, tt := range []struct {
		err        error
		conn, want bool
	}{
		{fmt.Errorf("x: %w", ErrStale), false, true},
		{io.EOF, true, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true, true},
		{pgError("57P01"), true, true},
		{pgError("08006"), true, true},
		{pgError("40001"), false, true},
		{pgError("25006"), false, true},
		{pgError("42P01"), false, false},
		{errors.New("marketdata: asset not found"), false, false},
	} {
		if got := IsConnectionError(tt.err); got != tt.conn {
			t.Errorf("IsConnectionError(%v) = %v, want %v", tt.err, got, tt.conn)
		}
		if got := retryOnPrimary(tt.err); got != tt.want {
			t.Errorf("retryOnPrimary(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
