package paper

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/alpaca"
)

// orderJSON returns o as Alpaca sends it: a notional order has a null
// qty, as on Alpaca, and its filled_qty once it fills.
func orderJSON(o order) alpaca.OrderJSON {
	out := alpaca.OrderJSON{
		ID: o.ID.String(), ClientOrderID: o.ClientOrderID,
		CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), SubmittedAt: o.SubmittedAt.UTC(),
		FilledAt: utc(o.FilledAt), CanceledAt: utc(o.CanceledAt), ReplacedAt: utc(o.ReplacedAt),
		Symbol: o.Symbol, AssetClass: o.AssetClass, OrderClass: o.OrderClass, Type: o.Type, OrderType: o.Type, Side: o.Side,
		TimeInForce: o.TimeInForce, Status: o.Status,
		Qty: &o.Qty, Notional: o.Notional, FilledQty: o.FilledQty, FilledAvgPrice: o.FilledAvgPrice,
		LimitPrice: o.LimitPrice, StopPrice: o.StopPrice, ExtendedHours: o.ExtendedHours,
		TrailPrice: o.TrailPrice, TrailPercent: o.TrailPercent, HWM: o.HWM,
		Commission: o.Commission,
	}
	if o.legs != nil {
		out.Legs = make([]alpaca.OrderJSON, len(o.legs))
		for i, l := range o.legs {
			out.Legs[i] = orderJSON(l)
		}
	}
	if o.Notional != nil {
		out.Qty = nil
	}
	if out.OrderClass == "" {
		out.OrderClass = "simple"
	}
	if o.AssetID != nil {
		out.AssetID = o.AssetID.String()
	}
	if o.ReplacedBy != nil {
		s := o.ReplacedBy.String()
		out.ReplacedBy = &s
	}
	if o.Replaces != nil {
		s := o.Replaces.String()
		out.Replaces = &s
	}
	return out
}

// ordersJSON returns the orders as Alpaca's JSON; with nested, each
// bracket, OTO or OCO order with its legs (one more read).
func ordersJSON(ctx context.Context, db bun.IDB, os []order, nested bool) ([]alpaca.OrderJSON, error) {
	if nested {
		var parents []uuid.UUID
		for _, o := range os {
			if o.ParentID == nil && o.OrderClass != "" && o.OrderClass != "simple" {
				parents = append(parents, o.ID)
			}
		}
		legs, err := legsOf(ctx, db, parents)
		if err != nil {
			return nil, err
		}
		for i := range os {
			os[i].legs = legs[os[i].ID]
		}
	}
	out := make([]alpaca.OrderJSON, len(os))
	for i, o := range os {
		out[i] = orderJSON(o)
	}
	return out, nil
}

// utc returns a copy of *t in UTC, or nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
