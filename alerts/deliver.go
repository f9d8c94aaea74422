package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/alerts/webhook"
)

// Bounds of the delivery work.
const (
	deliveryLease  = time.Minute // a claim on a delivery, from when it is taken: longer than any attempt
	perWebhook     = 2           // attempts in flight to one webhook, across instances
	candidateLimit = 1000        // due deliveries the scheduler weighs per round (at most perWebhook per webhook)
	fanOutBatch    = 500         // notifications fanned out per pass
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
	return string(marshal(payload{ID: n.ID.String(), Kind: n.Kind, Message: n.Message, Data: data,
		CreatedAt: n.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")}))
}

// marshal returns v as JSON without HTML escaping, as the API writes it
// (GET /api/v1/notifications): "<", ">" and "&" stay as they are, never
// \u003c, \u003e and \u0026, so a webhook body carries the same text as
// the API. It has no trailing newline. What cannot be encoded (a NaN in
// a json.Number) gives nil, as json.Marshal's ignored error gave before.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
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
		Join("JOIN webhooks AS w ON w.user_id = notification.user_id AND w.deleted_at IS NULL AND w.disabled_at IS NULL AND notification.created_at >= w.created_at").
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

// Deliver sends the deliveries that are due now, as many as one round of
// [Service.Run]'s scheduler may start (see [Service.claimDue]), each
// claimed with a lease that starts when it is claimed, and waits for
// their attempts (see [Service.attempt]). It first cancels the pending
// deliveries of disabled webhooks. It returns the number of attempts
// made. Run does not call it: it starts an attempt whenever a slot frees.
func (s *Service) Deliver(ctx context.Context) (int, error) {
	if err := s.cancelDisabled(ctx); err != nil {
		return 0, err
	}
	claimed, err := s.claimDue(ctx, s.cfg.DeliverConcurrency)
	var wg sync.WaitGroup
	errs := make([]error, len(claimed))
	for i, c := range claimed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.attempt(ctx, c)
		}()
	}
	wg.Wait()
	if err != nil {
		return len(claimed), err
	}
	return len(claimed), errors.Join(errs...)
}

// candidate is a due delivery with what the scheduler weighs: its
// webhook's owner and health, and its rank among its webhook's due
// deliveries (1 for the oldest).
type candidate struct {
	Delivery     `bun:",extend"`
	OwnerID      uuid.UUID  `bun:"owner_id"`
	Failures     int        `bun:"hook_failures"`
	FailingSince *time.Time `bun:"hook_failing_since"`
	HookRank     int        `bun:"hook_rank"`
}

// inFlight counts the deliveries being attempted (pending and leased),
// per webhook and per account.
type inFlight struct {
	hooks, accounts map[uuid.UUID]int
}

// add counts one more attempt of c.
func (f inFlight) add(c candidate, n int) {
	f.hooks[c.WebhookID] += n
	f.accounts[c.OwnerID] += n
}

// claimDue claims up to free due deliveries, fairly, and returns them:
// at most perWebhook in flight to one webhook and Config.DeliverPerAccount
// to one account, counting those every instance holds, and the slots go
// round-robin to the accounts with the fewest in flight, oldest due
// delivery first (see [pick]). Webhooks that are paused after failures
// or disabled are skipped. Each claim's lease runs deliveryLease from the
// moment it is taken.
func (s *Service) claimDue(ctx context.Context, free int) ([]candidate, error) {
	if free <= 0 {
		return nil, nil
	}
	now := s.clock()
	busy, err := s.inFlight(ctx, now)
	if err != nil {
		return nil, err
	}
	due := s.db.NewSelect().TableExpr("webhook_deliveries AS d").
		ColumnExpr("d.*, w.url, w.secret, w.user_id AS owner_id, w.failures AS hook_failures, w.failing_since AS hook_failing_since").
		ColumnExpr("ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS hook_rank").
		Join("JOIN webhooks AS w ON w.id = d.webhook_id").
		Where("d.status = ? AND d.next_attempt_at <= ?", Pending, now).
		Where("(d.lease_until IS NULL OR d.lease_until < ?)", now).
		Where("w.deleted_at IS NULL AND w.disabled_at IS NULL AND (w.paused_until IS NULL OR w.paused_until <= ?)", now)
	var cs []candidate
	err = s.db.NewSelect().Model(&cs).ModelTableExpr("(?) AS delivery", due).ColumnExpr("delivery.*").
		Where("delivery.hook_rank <= ?", perWebhook).OrderExpr("delivery.next_attempt_at, delivery.id").
		Limit(candidateLimit).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: due deliveries: %w", err)
	}
	var claimed []candidate
	for _, c := range pick(cs, busy, free, s.cfg.DeliverPerAccount) {
		ok, err := s.claim(ctx, c)
		if err != nil {
			return claimed, err
		}
		if ok {
			claimed = append(claimed, c)
		}
	}
	return claimed, nil
}

// inFlight returns the deliveries being attempted at now, per webhook and
// per account.
func (s *Service) inFlight(ctx context.Context, now time.Time) (inFlight, error) {
	var rows []struct {
		WebhookID uuid.UUID `bun:"webhook_id"`
		UserID    uuid.UUID `bun:"user_id"`
		N         int       `bun:"n"`
	}
	err := s.db.NewSelect().TableExpr("webhook_deliveries AS d").ColumnExpr("d.webhook_id, w.user_id, count(*) AS n").
		Join("JOIN webhooks AS w ON w.id = d.webhook_id").
		Where("d.status = ? AND d.lease_until IS NOT NULL AND d.lease_until >= ?", Pending, now).
		GroupExpr("d.webhook_id, w.user_id").Scan(ctx, &rows)
	if err != nil {
		return inFlight{}, fmt.Errorf("alerts: deliveries in flight: %w", err)
	}
	f := inFlight{hooks: map[uuid.UUID]int{}, accounts: map[uuid.UUID]int{}}
	for _, r := range rows {
		f.hooks[r.WebhookID] += r.N
		f.accounts[r.UserID] += r.N
	}
	return f, nil
}

// pick returns up to free of the candidates cs (oldest due first) to
// attempt now, given those in flight: none to a webhook with perWebhook
// in flight or an account with perAccount, and each next slot to the
// account with the fewest in flight (the one whose oldest candidate is
// older on a tie), so that one account's many or slow deliveries delay
// only its own.
func pick(cs []candidate, busy inFlight, free, perAccount int) []candidate {
	var accounts []uuid.UUID
	queues := map[uuid.UUID][]candidate{}
	for _, c := range cs {
		if _, ok := queues[c.OwnerID]; !ok {
			accounts = append(accounts, c.OwnerID)
		}
		queues[c.OwnerID] = append(queues[c.OwnerID], c)
	}
	var out []candidate
	for len(out) < free {
		best := -1
		for i, a := range accounts {
			if len(queues[a]) == 0 || busy.accounts[a] >= perAccount {
				continue
			}
			if best < 0 || busy.accounts[a] < busy.accounts[accounts[best]] {
				best = i
			}
		}
		if best < 0 {
			break
		}
		a := accounts[best]
		q := queues[a]
		for len(q) > 0 && busy.hooks[q[0].WebhookID] >= perWebhook {
			q = q[1:]
		}
		if len(q) == 0 {
			queues[a] = nil
			continue
		}
		busy.add(q[0], 1)
		out = append(out, q[0])
		queues[a] = q[1:]
	}
	return out
}

// claim takes c for this instance for deliveryLease from now, unless
// another instance holds it, it is no longer pending, or its webhook has
// perWebhook attempts in flight. The webhook's row is locked for the
// count on PostgreSQL, so concurrent instances never pass the bound.
func (s *Service) claim(ctx context.Context, c candidate) (bool, error) {
	ok := false
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if s.db.Dialect().Name() == dialect.PG {
			var id uuid.UUID
			err := tx.NewSelect().Model((*Webhook)(nil)).Column("id").Where("id = ?", c.WebhookID).For("UPDATE").Scan(ctx, &id)
			if err != nil {
				return err
			}
		}
		now := s.clock()
		n, err := tx.NewSelect().Model((*Delivery)(nil)).
			Where("webhook_id = ? AND status = ? AND lease_until IS NOT NULL AND lease_until >= ?", c.WebhookID, Pending, now).Count(ctx)
		if err != nil || n >= perWebhook {
			return err
		}
		res, err := tx.NewUpdate().Model((*Delivery)(nil)).Set("lease_until = ?", now.Add(deliveryLease)).
			Where("id = ? AND status = ? AND (lease_until IS NULL OR lease_until < ?)", c.ID, Pending, now).Exec(ctx)
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		ok = k == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("alerts: claim delivery %s: %w", c.ID, err)
	}
	return ok, nil
}

// cancelDisabled cancels the pending deliveries of disabled webhooks
// (written by evaluations that read the webhook before it was disabled).
func (s *Service) cancelDisabled(ctx context.Context) error {
	_, err := s.db.NewUpdate().Model((*Delivery)(nil)).
		Set("status = ?, lease_until = NULL, error = ?", Cancelled, disabledMsg).
		Where("status = ? AND webhook_id IN (SELECT id FROM webhooks WHERE disabled_at IS NOT NULL)", Pending).Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: cancel the deliveries of disabled webhooks: %w", err)
	}
	return nil
}

// disabledMsg is the error of the deliveries cancelled when their webhook
// was disabled.
const disabledMsg = "cancelled: the webhook was disabled after failing for days; create it again once it answers"

// attempt sends c once, signed at the time of sending, and records the
// outcome: a 2xx answer makes it succeeded; anything else, or a secret
// that does not open (no request is sent then), schedules the next
// attempt after [Service.backoff], or marks it failed once that would be
// more than RetryFor after its creation. The receiver's health is
// recorded too (see [Service.recordHealth]).
func (s *Service) attempt(ctx context.Context, c candidate) error {
	d := c.Delivery
	body := []byte(d.Payload)
	start := time.Now()
	status := 0
	secret, err := s.openSecret(ctx, d.WebhookID, d.Secret)
	sent := err == nil
	if sent {
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
	msg := ""
	switch {
	case err == nil && status >= 200 && status < 300:
		q = q.Set("status = ?, delivered_at = ?, error = ''", Succeeded, now)
	default:
		outcome = DeliveryRetry
		msg = "the receiver answered " + strconv.Itoa(status)
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
	if !sent {
		return nil // the server could not sign: not the receiver's failure
	}
	return s.recordHealth(ctx, c, outcome == DeliverySucceeded, msg, now)
}

// recordHealth records an attempt's outcome on c's webhook: an answer
// clears its failures; a failure counts one more and pauses the webhook
// for the backoff of its failure count, unless it is paused already, and
// disables it when it has failed
// without a break for Config.DisableAfter, which cancels its pending
// deliveries and notifies its owner (kind [KindWebhookDisabled]).
func (s *Service) recordHealth(ctx context.Context, c candidate, ok bool, msg string, now time.Time) error {
	if ok {
		if c.Failures == 0 && c.FailingSince == nil {
			return nil
		}
		_, err := s.db.NewUpdate().Model((*Webhook)(nil)).Set("failures = 0, failing_since = NULL, paused_until = NULL").
			Where("id = ?", c.WebhookID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: record the health of webhook %s: %w", c.WebhookID, err)
		}
		return nil
	}
	since := now
	if c.FailingSince != nil {
		since = *c.FailingSince
	}
	// An attempt that ends while the webhook is paused started before the
	// pause (at most perWebhook run at once): the failure that paused it
	// counts for both.
	_, err := s.db.NewUpdate().Model((*Webhook)(nil)).
		Set("failures = CASE WHEN paused_until IS NOT NULL AND paused_until > ? THEN failures ELSE failures + 1 END", now).
		Set("paused_until = CASE WHEN paused_until IS NOT NULL AND paused_until > ? THEN paused_until ELSE ? END", now, now.Add(s.backoff(c.Failures+1))).
		Set("failing_since = COALESCE(failing_since, ?)", now).
		Where("id = ?", c.WebhookID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: record the health of webhook %s: %w", c.WebhookID, err)
	}
	if now.Sub(since) < s.cfg.DisableAfter {
		return nil
	}
	return s.disable(ctx, c, since, msg, now)
}

// disable disables c's webhook, failing since since, cancels its pending
// deliveries and notifies its owner, in one transaction; a webhook
// disabled or deleted meanwhile is left as it is.
func (s *Service) disable(ctx context.Context, c candidate, since time.Time, msg string, now time.Time) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Webhook)(nil)).Set("disabled_at = ?", now).
			Where("id = ? AND disabled_at IS NULL AND deleted_at IS NULL", c.WebhookID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: disable webhook %s: %w", c.WebhookID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.NewUpdate().Model((*Delivery)(nil)).Set("status = ?, lease_until = NULL, error = ?", Cancelled, disabledMsg).
			Where("webhook_id = ? AND status = ?", c.WebhookID, Pending).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: cancel the deliveries of webhook %s: %w", c.WebhookID, err)
		}
		data := marshal(map[string]string{"webhookId": c.WebhookID.String(), "url": c.URL,
			"failingSince": since.UTC().Format("2006-01-02T15:04:05.000Z"), "lastError": msg})
		n := Notification{ID: uuid.New(), UserID: c.OwnerID, Kind: KindWebhookDisabled, Data: string(data), CreatedAt: now,
			Message: fmt.Sprintf("Webhook %s was disabled: its deliveries failed without a break since %s (last: %s). "+
				"Its pending deliveries were cancelled; delete it and create it again once it answers.",
				c.URL, since.UTC().Format(time.RFC3339), msg)}
		if _, err := tx.NewInsert().Model(&n).Exec(ctx); err != nil {
			return fmt.Errorf("alerts: notify the disabling of webhook %s: %w", c.WebhookID, err)
		}
		s.log.Warn("alerts: webhook disabled after failing without a break", "webhook", c.WebhookID, "since", since, "last_error", msg)
		return nil
	})
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
