package profiledb

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/marketdata"
)

// Reads is the read-only side of [Store] for serving profiles: the same
// queries, each run where its ReadFunc sends it, typically a streaming
// replica (see marketdata.Reads), so that a profile may be as old as the
// replicas' bound on lag.
type Reads struct {
	read marketdata.ReadFunc
}

// NewReads returns the reads run through read.
func NewReads(read marketdata.ReadFunc) *Reads { return &Reads{read: read} }

// Profile is [Store.Profile].
func (r *Reads) Profile(ctx context.Context, assetID uuid.UUID) (Record, error) {
	var out Record
	err := r.read(ctx, func(db bun.IDB, _ bool) error {
		var err error
		out, err = NewStore(db).Profile(ctx, assetID)
		return err
	})
	return out, err
}

// Profiles is [Store.Profiles].
func (r *Reads) Profiles(ctx context.Context, ids []uuid.UUID) ([]Record, error) {
	var out []Record
	err := r.read(ctx, func(db bun.IDB, _ bool) error {
		var err error
		out, err = NewStore(db).Profiles(ctx, ids)
		return err
	})
	return out, err
}
