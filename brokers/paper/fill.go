package paper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/marketdata"
)

// holding is a position's quantity and average entry price.
type holding struct {
	Qty decimal.Decimal
	Avg decimal.Decimal
}

// apply returns the cash and the holding after a fill of qty at price on
// the given side, charged commission:
//
//	buy:  cash − qty×price − commission,  Qty + qty,  Avg = (Qty×Avg + qty×price) / (Qty + qty)
//	sell: cash + qty×price − commission,  Qty − qty,  Avg unchanged
//
// Avg is rounded to avgScale places. The error wraps
// [tradekit.ErrRejected] for a buy that costs more than the cash and a
// sell of more than the holding. [Broker.Fill] and the replay behind the
// portfolio history share it, so that they cannot disagree.
func apply(cash decimal.Decimal, h holding, symbol string, side brokers.Side, qty, price, commission decimal.Decimal) (decimal.Decimal, holding, error) {
	notional := qty.Mul(price)
	switch side {
	case brokers.Buy:
		if cost := notional.Add(commission); cost.GreaterThan(cash) {
			return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrRejected,
				"buying %s %s at %s costs %s, more than the cash of %s", qty, symbol, price, cost, cash))
		}
		q := h.Qty.Add(qty)
		avg := h.Qty.Mul(h.Avg).Add(notional).DivRound(q, avgScale)
		return cash.Sub(notional).Sub(commission), holding{Qty: q, Avg: avg}, nil
	case brokers.Sell:
		if qty.GreaterThan(h.Qty) {
			return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrRejected,
				"selling %s %s is more than the position of %s", qty, symbol, h.Qty))
		}
		return cash.Add(notional).Sub(commission), holding{Qty: h.Qty.Sub(qty), Avg: h.Avg}, nil
	}
	return cash, h, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrInvalid, "side %s is neither buy nor sell", tradekit.Quote(string(side))))
}

// maxSymbol is the longest symbol Fill accepts.
const maxSymbol = 32

// Fill records a market order for qty of symbol that filled at once at
// price, at time at (the current time when zero), in the account with the
// given id, and returns the order as GET /v2/orders lists it. In one
// transaction it updates the cash and the position:
//
//	buy:  cash −= qty×price; the position's average entry price becomes
//	      (qty₀×avg₀ + qty×price) / (qty₀ + qty), rounded to 18 places
//	sell: cash += qty×price; the quantity drops, the average is unchanged,
//	      and a position that reaches 0 is removed
//
// Short sales and margin are not offered. Fills are recorded in time
// order: the history replays them so.
//
// The error wraps [tradekit.ErrNotFound] for an unknown account;
// [tradekit.ErrInvalid] for an empty or malformed symbol, a side other
// than [brokers.Buy] and [brokers.Sell], a qty or price that is not
// positive or has more than 9 decimal places, a time before the account
// was opened or before its latest order, or amounts too large to store;
// and [tradekit.ErrRejected] for a buy that costs more than the cash or a
// sell of more than the position.
func (b *Broker) Fill(ctx context.Context, accountID string, symbol string, side brokers.Side, qty, price decimal.Decimal, at time.Time) (alpaca.OrderJSON, error) {
	id, err := uuid.Parse(accountID)
	if err != nil {
		return alpaca.OrderJSON{}, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "account %s not found", tradekit.Quote(accountID)))
	}
	symbol = marketdata.NormalizeSymbol(symbol)
	switch {
	case symbol == "" || len(symbol) > maxSymbol || strings.IndexFunc(symbol, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return alpaca.OrderJSON{}, invalid("symbol %s is empty, longer than %d bytes or not printable", tradekit.Quote(symbol), maxSymbol)
	case side != brokers.Buy && side != brokers.Sell:
		return alpaca.OrderJSON{}, invalid("side %s is neither buy nor sell", tradekit.Quote(string(side)))
	case !qty.IsPositive() || !fits(qty, qtyScale):
		return alpaca.OrderJSON{}, invalid("quantity %s is not positive, has more than %d decimal places or is too large", qty, qtyScale)
	case !price.IsPositive() || !fits(price, qtyScale):
		return alpaca.OrderJSON{}, invalid("price %s is not positive, has more than %d decimal places or is too large", price, qtyScale)
	}
	if at.IsZero() {
		at = b.clock()
	}
	at = at.UTC().Truncate(time.Microsecond)

	var assetID *uuid.UUID
	class := "us_equity"
	if a, err := b.md.AssetBySymbol(ctx, symbol); err == nil {
		assetID, class = &a.ID, assetClass(a.Type)
	} else if !errors.Is(err, tradekit.ErrNotFound) {
		return alpaca.OrderJSON{}, fmt.Errorf("paper: fill: %w", err)
	}

	var o order
	err = b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, err := lockAccount(ctx, tx, account{ID: id}, 1, at)
		if err != nil {
			return err
		}
		if at.Before(a.CreatedAt) {
			return invalid("fill time %s is before the account was opened, %s", at.Format(time.RFC3339Nano), a.CreatedAt.Format(time.RFC3339Nano))
		}
		last, hasLast, err := lastOrder(ctx, tx, id)
		if err != nil {
			return err
		}
		if hasLast && at.Before(last.SubmittedAt) {
			return invalid("fill time %s is before the account's latest order, %s", at.Format(time.RFC3339Nano), last.SubmittedAt.Format(time.RFC3339Nano))
		}
		p, _, err := positionOf(ctx, tx, id, symbol)
		if err != nil {
			return err
		}
		cash, h, err := apply(a.Cash, holding{Qty: p.Qty, Avg: p.AvgEntryPrice}, symbol, side, qty, price, decimal.Zero)
		if err != nil {
			return err
		}
		if !fits(cash, avgScale) || !fits(h.Qty, avgScale) || !fits(h.Avg, avgScale) {
			return invalid("the fill's amounts are too large to store")
		}
		if err := updateCash(ctx, tx, id, cash); err != nil {
			return err
		}
		p = position{AccountID: id, Symbol: symbol, Qty: h.Qty, AvgEntryPrice: h.Avg, UpdatedAt: at}
		if err := savePosition(ctx, tx, p); err != nil {
			return err
		}
		oid := uuid.New()
		o = order{
			ID: oid, AccountID: id, ClientOrderID: oid.String(),
			AssetID: assetID, Symbol: symbol, AssetClass: class,
			Side: string(side), Type: "market", TimeInForce: "day", Status: "filled",
			Qty: qty, FilledQty: qty, FilledAvgPrice: &price,
			CreatedAt: at, UpdatedAt: at, SubmittedAt: at, FilledAt: &at,
		}
		return insertOrders(ctx, tx, a.OrderSeq, &o)
	})
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	return orderJSON(o), nil
}

// invalid returns an error wrapping [tradekit.ErrInvalid] with a message
// for end users.
func invalid(format string, args ...any) error {
	return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrInvalid, format, args...))
}

// assetClass returns Alpaca's asset class of an asset of type t.
func assetClass(t marketdata.AssetType) string {
	if t == marketdata.Crypto {
		return "crypto"
	}
	return "us_equity"
}
