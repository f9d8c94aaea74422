package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts/webhook"
)

// Bounds of the delivery work.
const (
	deliveryLease   = time.Minute // a claim on a delivery: longer than any attempt
	deliveryBatch   = 100         // deliveries claimed per pass
	fanOutBatch     = 500         // notifications fanned out per pass
	sendConcurrency = 8           // requests in flight per Service
)

// payload is the JSON body of a delivery: the notification as GET
// /api/v1/notifications shows it.
type payload struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Message   string          `json:"message"`
	Data      json.RawMessage `json:"data"`
	CreatedAt string          `json:"createdAt"`
}

// payloadOf returns the body delivered for n.
func payloadOf(n Notification) string {
	data := json.RawMessage(n.Data)
	if !json.Valid(data) {
		data = json.RawMessage("{}")
	}
	b, _ := json.Marshal(payload{ID: n.ID.String(), Kind: n.Kind, Message: n.Message, Data: data,
		CreatedAt: n.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")})
	return string(b)
}

// insertDeliveries writes a pending delivery of n to each webhook, due
// now; one that exists already is left as it is.
func insertDeliveries(ctx context.Context, db bun.IDB, n Notification, hooks []uuid.UUID, now time.Time) error {
	if len(hooks) == 0 {
		return nil
	}
	ds := appendDeliveries(nil, n, hooks, now)
	_, err := db.NewInsert().Model(&ds).
		On("CONFLICT (webhook_id, notification_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: insert deliveries: %w", err)
	}
	return nil
}

// appendDeliveries appends to ds the pending deliveries of n to hooks.
func appendDeliveries(ds []Delivery, n Notification, hooks []uuid.UUID, now time.Time) []Delivery {
	if len(hooks) == 0 {
		return ds
	}
	body := payloadOf(n)
	for _, h := range hooks {
		ds = append(ds, Delivery{ID: uuid.New(), WebhookID: h, NotificationID: n.ID, Kind: n.Kind, Payload: body,
			Status: Pending, NextAttemptAt: now, CreatedAt: now})
	}
	return ds
}

// FanOut writes the deliveries of the notifications of every kind but
// alert (leader trades, copies, unpublishing, sync failures) to each of
// their user's webhooks that existed when the notification was made, for
// notifications of the last RetryFor. Alert notifications get theirs when
// they fire (see [Service.Evaluate]). It returns the number of
// notifications fanned out; the unique (webhook, notification) pair makes
// concurrent passes harmless.
func (s *Service) FanOut(ctx context.Context) (int, error) {
	now := s.clock()
	var rows []struct {
		Notification `bun:",extend"`
		WebhookID    uuid.UUID `bun:"webhook_id"`
	}
	err := s.db.NewSelect().Model((*Notification)(nil)).ColumnExpr("notification.*, w.id AS webhook_id").
		Join("JOIN webhooks AS w ON w.user_id = notification.user_id AND w.deleted_at IS NULL AND notification.created_at >= w.created_at").
		Where("notification.created_at >= ? AND notification.kind <> ?", now.Add(-s.cfg.RetryFor), KindAlert).
		Where("NOT EXISTS (SELECT 1 FROM webhook_deliveries AS d WHERE d.webhook_id = w.id AND d.notification_id = notification.id)").
		OrderExpr("notification.created_at").Limit(fanOutBatch).Scan(ctx, &rows)
	if err != nil {
		return 0, fmt.Errorf("alerts: fan out: %w", err)
	}
	for _, r := range rows {
		if err := insertDeliveries(ctx, s.db, r.Notification, []uuid.UUID{r.WebhookID}, now); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// Deliver sends the deliveries that are due, each claimed with a lease so
// that one instance sends it, and records each attempt's outcome (see
// [Service.attempt]). It returns the number of attempts made.
func (s *Service) Deliver(ctx context.Context) (int, error) {
	now := s.clock()
	var due []Delivery
	err := s.db.NewSelect().Model(&due).ColumnExpr("delivery.*, w.url, w.secret").
		Join("JOIN webhooks AS w ON w.id = delivery.webhook_id").
		Where("delivery.status = ? AND delivery.next_attempt_at <= ?", Pending, now).
		Where("(delivery.lease_until IS NULL OR delivery.lease_until < ?)", now).
		OrderExpr("delivery.next_attempt_at").Limit(deliveryBatch).Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("alerts: due deliveries: %w", err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		n     int
		first error
	)
	sem := make(chan struct{}, sendConcurrency)
	for _, d := range due {
		ok, err := s.claim(ctx, d, now)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := s.attempt(ctx, d)
			mu.Lock()
			defer mu.Unlock()
			n++
			if err != nil && first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	return n, first
}

// claim takes d for this instance for deliveryLease, unless another
// instance holds it or it is no longer pending.
func (s *Service) claim(ctx context.Context, d Delivery, now time.Time) (bool, error) {
	res, err := s.db.NewUpdate().Model((*Delivery)(nil)).Set("lease_until = ?", now.Add(deliveryLease)).
		Where("id = ? AND status = ? AND (lease_until IS NULL OR lease_until < ?)", d.ID, Pending, now).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("alerts: claim delivery %s: %w", d.ID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// attempt sends d once, signed at the time of sending, and records the
// outcome: a 2xx answer makes it succeeded; anything else, or a secret
// that does not open (no request is sent then), schedules the next
// attempt after [Service.backoff], or marks it failed once that would be
// more than RetryFor after its creation.
func (s *Service) attempt(ctx context.Context, d Delivery) error {
	body := []byte(d.Payload)
	start := time.Now()
	status := 0
	secret, err := s.openSecret(ctx, d.WebhookID, d.Secret)
	if err == nil {
		status, err = s.tr.Post(ctx, d.URL, map[string]string{
			webhook.SignatureHeader: webhook.Sign(secret, d.ID.String(), s.cfg.Now(), body),
			webhook.DeliveryHeader:  d.ID.String(),
			webhook.EventHeader:     d.Kind,
		}, body)
	}
	took := time.Since(start)
	latency := took.Milliseconds()
	if ctx.Err() != nil {
		return nil // shutting down: the lease lapses and the attempt is made again
	}
	now := s.clock()
	q := s.db.NewUpdate().Model((*Delivery)(nil)).
		Set("attempts = attempts + 1, last_attempt_at = ?, latency_ms = ?, lease_until = NULL", now, latency).
		Where("id = ? AND status = ?", d.ID, Pending)
	if err == nil {
		q = q.Set("response_status = ?", status)
	} else {
		q = q.Set("response_status = NULL")
	}
	outcome := DeliverySucceeded
	switch {
	case err == nil && status >= 200 && status < 300:
		q = q.Set("status = ?, delivered_at = ?, error = ''", Succeeded, now)
	default:
		outcome = DeliveryRetry
		msg := "the receiver answered " + strconv.Itoa(status)
		if err != nil {
			msg = err.Error()
		}
		next := now.Add(s.backoff(d.Attempts + 1))
		if next.After(d.CreatedAt.Add(s.cfg.RetryFor)) {
			outcome = DeliveryFailed
			q = q.Set("status = ?, error = ?", Failed, msg)
		} else {
			q = q.Set("next_attempt_at = ?, error = ?", next, msg)
		}
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("alerts: record delivery %s: %w", d.ID, err)
	}
	s.cfg.Observe.delivered(outcome, took)
	return nil
}

// backoff returns the wait after the attempts-th failed attempt:
//
//	min(RetryBase * 2^(attempts-1), RetryMax)
func (s *Service) backoff(attempts int) time.Duration {
	d := s.cfg.RetryBase
	for i := 1; i < attempts && d < s.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, s.cfg.RetryMax)
}
