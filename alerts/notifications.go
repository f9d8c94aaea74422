package alerts

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Notifications is the store of the notifications table, which this
// package owns: the messages users read at GET /api/v1/notifications and
// that webhooks carry. Other packages (copytrading) write and read their
// notifications through it, so that their rows are the ones [Service]
// fans out to webhooks.
type Notifications struct {
	db bun.IDB
}

// NewNotifications returns the store of the notifications on db, a
// database or a transaction: built on a transaction, a notification is
// stored with the rest of the transaction's work or not at all.
func NewNotifications(db bun.IDB) *Notifications {
	return &Notifications{db: db}
}

// Insert stores a notification of the given kind for the user, created
// at at. Its data is encoded as the API writes JSON, without HTML
// escaping, so that GET /notifications and a webhook show "<", ">" and
// "&" as they are.
func (s *Notifications) Insert(ctx context.Context, userID uuid.UUID, kind, message string, at time.Time, data map[string]any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return fmt.Errorf("alerts: encode a notification: %w", err)
	}
	n := Notification{ID: uuid.New(), UserID: userID, Kind: kind, Message: message,
		Data: strings.TrimSuffix(b.String(), "\n"), CreatedAt: at}
	if _, err := s.db.NewInsert().Model(&n).Exec(ctx); err != nil {
		return fmt.Errorf("alerts: notify: %w", err)
	}
	return nil
}

// List returns a page of the user's notifications of the given kinds
// (nil: every kind), newest first, and how many there are; with unread,
// only those not read.
func (s *Notifications) List(ctx context.Context, userID uuid.UUID, kinds []string, unread bool, page, limit int) ([]Notification, int, error) {
	list := []Notification{}
	if kinds != nil && len(kinds) == 0 {
		return list, 0, nil
	}
	q := s.db.NewSelect().Model(&list).Where("user_id = ?", userID)
	if kinds != nil {
		q = q.Where("kind IN (?)", bun.In(kinds))
	}
	if unread {
		q = q.Where("read_at IS NULL")
	}
	total, err := q.Order("created_at DESC", "id DESC").Limit(limit).Offset((page - 1) * limit).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("alerts: notifications: %w", err)
	}
	return list, total, nil
}

// MarkRead marks the user's notification id read at at, once: marking it
// again keeps the first time. The error wraps [tradekit.ErrNotFound] for
// a notification that is not the user's.
func (s *Notifications) MarkRead(ctx context.Context, userID, id uuid.UUID, at time.Time) (Notification, error) {
	_, err := s.db.NewUpdate().Model((*Notification)(nil)).Set("read_at = ?", at).
		Where("id = ? AND user_id = ? AND read_at IS NULL", id, userID).Exec(ctx)
	if err != nil {
		return Notification{}, fmt.Errorf("alerts: mark read: %w", err)
	}
	var n Notification
	err = s.db.NewSelect().Model(&n).Where("id = ? AND user_id = ?", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Notification{}, notFound("notification %s not found", id)
	}
	if err != nil {
		return Notification{}, fmt.Errorf("alerts: notification %s: %w", id, err)
	}
	return n, nil
}
