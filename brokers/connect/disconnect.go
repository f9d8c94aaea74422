package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/internal/database"
)

// Disconnect ends the user's connection id, in this order:
//
//  1. The connection is marked disconnected, under the user's lock, so
//     that no order is placed through it from then on, and the order
//     tracker leaves it.
//  2. Every order still pending through it is settled with its tokens,
//     which are still valid: read back from the broker with its fills,
//     recorded, and cancelled there when still open, since Tradekit could
//     no longer watch it nor count it against the guardrails (see
//     [Service.CancelOrder]).
//  3. The tokens are revoked at the broker where the broker supports it
//     (a failure there is logged, not fatal), and forgotten. The row and
//     its portfolio stay, for history.
//
// So no order of a disconnected connection stays pending. When the
// broker cannot be reached to settle an order, the connection is active
// again and the error wraps [tradekit.ErrUnavailable]: nothing was
// disconnected, and the user may try again. When the broker no longer
// accepts the connection's tokens, its orders cannot be read: they are
// recorded cancelled, their broker status saying that their state at the
// broker is unknown. Disconnecting a disconnected connection changes
// nothing.
func (s *Service) Disconnect(ctx context.Context, userID, id uuid.UUID) (Connection, error) {
	st := NewStore(s.db)
	c, err := st.Connection(ctx, userID, id)
	if err != nil || c.Status == Disconnected {
		return c, err
	}
	if c.Status == Active {
		if err := s.setStatus(ctx, &c, Active, Disconnected); err != nil {
			return Connection{}, err
		}
		held := c
		held.Status = Active // its tokens, as the trader needs them
		if err := s.settlePending(ctx, &held); err != nil {
			if rerr := s.setStatus(context.WithoutCancel(ctx), &c, Disconnected, Active); rerr != nil {
				s.cfg.Logger.Error("making a connection active again after a failed disconnect failed", "connection_id", c.ID, "err", rerr)
			}
			return Connection{}, err
		}
		c.AccessToken, c.RefreshToken = held.AccessToken, held.RefreshToken // refreshed meanwhile, maybe
	}
	s.revoke(ctx, &c)
	c.Status, c.AccessToken, c.RefreshToken, c.TokenExpiry, c.UpdatedAt = Disconnected, nil, nil, nil, s.cfg.Now().UTC()
	if err := st.updateConnection(ctx, &c, "status", "access_token", "refresh_token", "token_expiry", "updated_at"); err != nil {
		return Connection{}, err
	}
	return c, nil
}

// setStatus changes the status of connection c from one to another,
// under its user's lock, which an order's placement holds while it checks
// that the connection is active.
func (s *Service) setStatus(ctx context.Context, c *Connection, from, to string) error {
	now := s.cfg.Now().UTC()
	return database.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if err := database.LockUser(ctx, tx, c.UserID); err != nil {
			return err
		}
		res, err := tx.NewUpdate().Model((*Connection)(nil)).Set("status = ?", to).Set("updated_at = ?", now).
			Where("id = ? AND status = ?", c.ID, from).Exec(ctx)
		if err != nil {
			return fmt.Errorf("connect: connection %s %s: %w", c.ID, to, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
				"broker connection %s changed meanwhile: try again", c.ID))
		}
		c.Status, c.UpdatedAt = to, now
		return nil
	})
}

// placingFor is how long [Service.settlePending] waits for an order that
// its broker does not know yet, and that is young enough to be on its way
// there (sent by a placement that began before the disconnect).
const placingFor = 2 * time.Second

// settlePending settles every pending order of connection c, which holds
// its tokens, as [Service.Disconnect] says.
func (s *Service) settlePending(ctx context.Context, c *Connection) error {
	var pending []Order
	err := s.db.NewSelect().Model(&pending).Where("connection_id = ? AND status = ?", c.ID, brokers.Pending).
		Order("created_at").Scan(ctx)
	if err != nil || len(pending) == 0 {
		return err
	}
	tr, err := s.traderOf(c)
	if err != nil {
		return err
	}
	for _, o := range pending {
		if o.BrokerOrderID == nil && s.now().Sub(o.CreatedAt) < placingFor {
			o = s.awaitPlacement(ctx, tr, o)
		}
		_, err := s.cancelAt(ctx, tr, o)
		switch {
		case err == nil, errors.Is(err, tradekit.ErrConflict):
			// Cancelled, or final already (filled, say): recorded.
		case errors.Is(err, tradekit.ErrUnauthorized):
			s.cfg.Logger.Warn("a disconnected connection's order could not be read: its broker no longer accepts the "+
				"connection's authorization; recorded cancelled, its state at the broker unknown", "order_id", o.ID, "err", err)
			if _, err := s.cancelled(ctx, o, brokers.OrderState{BrokerStatus: "unknown: the broker no longer accepts this connection"}); err != nil && !errors.Is(err, tradekit.ErrConflict) {
				return err
			}
		default:
			return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrUnavailable,
				"the broker could not be reached to settle pending order %s, so the connection stays active: try again (%v)", o.ID, err))
		}
	}
	return nil
}

// awaitPlacement returns the young pending order o once its broker knows
// it, or once placingFor has passed since it was made, re-read from the
// database (its placement records the broker's id).
func (s *Service) awaitPlacement(ctx context.Context, tr brokers.Trader, o Order) Order {
	deadline := time.Now().Add(placingFor - s.now().Sub(o.CreatedAt))
	for wait := 20 * time.Millisecond; time.Now().Before(deadline); wait *= 2 {
		if _, err := tr.OrderByClientID(ctx, o.ID.String()); !errors.Is(err, tradekit.ErrNotFound) {
			break
		}
		select {
		case <-ctx.Done():
			return o
		case <-time.After(wait):
		}
	}
	if cur, err := NewStore(s.db).Order(ctx, o.UserID, o.ID); err == nil {
		return cur
	}
	return o
}

// revoke revokes the tokens of connection c at its broker, where the
// broker supports it; a failure is logged.
func (s *Service) revoke(ctx context.Context, c *Connection) {
	p, ok := s.byName[c.Provider]
	if !ok || p.RevokeURL == "" || s.cfg.Sealer == nil || c.AccessToken == nil {
		return
	}
	tok, err := openTokens(s.cfg.Sealer, c)
	if err != nil {
		return
	}
	for _, t := range []string{tok.RefreshToken, tok.AccessToken} {
		if t == "" {
			continue
		}
		if err := alpaca.Revoke(ctx, s.cfg.HTTPClient, p.RevokeURL, p.OAuth.ClientID, p.OAuth.ClientSecret, t); err != nil {
			s.cfg.Logger.Warn("revoking a broker token failed", "connection_id", c.ID, "err", err)
		}
	}
}
