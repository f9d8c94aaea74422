package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestServePaperStreamShutdown opens the paper broker's trade-update
// stream through Serve, with a WriteTimeout shorter than the stream's
// life, and then shuts the server down: the stream outlives the
// WriteTimeout, and shutdown cuts it short (the client sees an error,
// not a clean end) instead of waiting the ShutdownTimeout out.
func TestServePaperStreamShutdown(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		s := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords,
			WriteTimeout: 300 * time.Millisecond, ShutdownTimeout: time.Minute}, db)
		ctx := context.Background()
		accountID, _, err := s.Paper().OpenAccount(ctx, uuid.Nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		key, secret, err := s.Paper().CreateAPIKey(ctx, accountID, "stream")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		serveCtx, stop := context.WithCancel(ctx)
		defer stop()
		served := make(chan error, 1)
		go func() { served <- s.Serve(serveCtx, l) }()

		req, err := http.NewRequest(http.MethodGet, "http://"+l.Addr().String()+"/paper/v2/events/trades", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("APCA-API-KEY-ID", key.ID)
		req.Header.Set("APCA-API-SECRET-KEY", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET /paper/v2/events/trades: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
		}
		read := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, bufio.NewReader(resp.Body))
			read <- err
		}()
		select {
		case err := <-read:
			t.Fatalf("the stream ended before shutdown: %v", err)
		case <-time.After(time.Second): // three WriteTimeouts
		}

		start := time.Now()
		stop()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return: shutdown waits for the stream")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("shutdown took %v", d)
		}
		if err := <-read; err == nil {
			t.Error("the stream ended cleanly at shutdown; want it cut short, so that clients reconnect")
		}
	})
}
