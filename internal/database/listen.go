package database

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// ErrNoNotifications is the error of [NewListener] when a notification
// sent through the database's pool does not reach the listening
// connection: the DSN leads to a transaction pooler, which keeps no
// LISTEN past its transaction. [Options.ListenDSN] names a direct
// connection for it; without one, the callers poll.
var ErrNoNotifications = errors.New("database: notifications sent through the pool do not reach LISTEN " +
	"(a transaction pooler?); give a direct connection for it (serve --db-listen)")

// probeTimeout is how long [NewListener] waits for its own notification.
const probeTimeout = 3 * time.Second

// probePrefix starts the payload of the notifications that check
// delivery; [Listener.Receive] drops them, any instance's.
const probePrefix = "tradekit-probe:"

// Listener is a PostgreSQL connection of its own, outside the pool,
// that LISTENs on one channel. Its server is [Options.ListenDSN]'s, or
// the DSN's.
type Listener struct {
	conn *pgx.Conn
	// early are the payloads that came before the probe's.
	early []string
}

// NewListener connects, LISTENs on channel and checks that a
// notification sent through db's pool reaches it, which a transaction
// pooler between db and its server prevents: then it returns
// [ErrNoNotifications], and the log says so once in the life of db. db
// must be PostgreSQL.
func NewListener(ctx context.Context, db *bun.DB, channel string) (*Listener, error) {
	pg := pgOf(db)
	if pg == nil {
		return nil, errors.New("database: LISTEN needs PostgreSQL")
	}
	conn, err := pgx.ConnectConfig(ctx, pg.listen)
	if err != nil {
		return nil, fmt.Errorf("database: listen: %w", err)
	}
	l := &Listener{conn: conn}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		l.Close()
		return nil, fmt.Errorf("database: listen: %w", err)
	}
	if err := l.probe(ctx, db, channel); err != nil {
		l.Close()
		if errors.Is(err, ErrNoNotifications) {
			pg.listenFallback.Do(func() {
				pg.log.Warn("database: notifications do not reach this process; polling instead. Behind a transaction pooler, " +
					"give serve a direct connection for LISTEN with --db-listen (TRADEKIT_DB_LISTEN)")
			})
		}
		return nil, err
	}
	return l, nil
}

// probe sends a notification on channel through db's pool and waits
// for it on l, keeping what comes before it.
func (l *Listener) probe(ctx context.Context, db *bun.DB, channel string) error {
	token := probePrefix + rand.Text()
	if _, err := db.ExecContext(ctx, "SELECT pg_notify(?, ?)", channel, token); err != nil {
		return fmt.Errorf("database: listen: %w", err)
	}
	wait, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for {
		n, err := l.conn.WaitForNotification(wait)
		switch {
		case err != nil && ctx.Err() == nil && wait.Err() != nil:
			return ErrNoNotifications
		case err != nil:
			return fmt.Errorf("database: listen: %w", err)
		case n.Payload == token:
			return nil
		case !strings.HasPrefix(n.Payload, probePrefix):
			l.early = append(l.early, n.Payload)
		}
	}
}

// Receive waits for the next notification and returns its payload, or
// the error that ended the wait (ctx's, or the connection's).
func (l *Listener) Receive(ctx context.Context) (string, error) {
	if len(l.early) > 0 {
		p := l.early[0]
		l.early = l.early[1:]
		return p, nil
	}
	for {
		n, err := l.conn.WaitForNotification(ctx)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(n.Payload, probePrefix) {
			return n.Payload, nil
		}
	}
}

// Close closes l's connection.
func (l *Listener) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.conn.Close(ctx)
}

// noNotificationsRetry is how long [Listen] waits before it tries again
// after [ErrNoNotifications] on a set-up where notifications never
// arrived: it does not change soon. Where they did (a probe lost while
// the server restarts, say), it tries again after its usual retry.
const noNotificationsRetry = time.Minute

// Listen calls notify with the payload of each notification on channel
// until ctx is done, from a [Listener] that it connects again after a
// failure, retry later (the callers poll meanwhile). Each time it starts
// listening it calls notify with "" first, for what may have come while
// no one listened. It logs each lost connection with log, but
// [ErrNoNotifications] only once (see [NewListener]). It returns at once
// when db is not PostgreSQL.
func Listen(ctx context.Context, db *bun.DB, channel string, retry time.Duration, log *slog.Logger, notify func(payload string)) {
	if pgOf(db) == nil {
		return
	}
	listened := false // notifications arrived here before
	for ctx.Err() == nil {
		wait := retry
		l, err := NewListener(ctx, db, channel)
		if err == nil {
			listened = true
			notify("")
			var payload string
			for {
				if payload, err = l.Receive(ctx); err != nil {
					break
				}
				notify(payload)
			}
			l.Close()
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrNoNotifications) && !listened {
			wait = max(wait, noNotificationsRetry)
		} else {
			log.Warn("notifications on "+channel+" lost; polling until they are back", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}
