package paper

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
)

// The auctions of time in force opg (market or limit on open) and cls
// (market or limit on close), simulated on daily bars: an opg order fills
// at the open of its session's daily bar, a cls order at its close.

// Alpaca's acceptance rules, in New York time: an opg order is refused
// from opgCutoff before a session's open (09:28) until queueHour (19:00)
// on a trading day, a cls order from clsCutoff before its close (15:50,
// or 12:50 on an early close) until queueHour; after queueHour, or on a
// day without a session, an order joins the next session's auction.
const (
	opgCutoff = 2 * time.Minute
	clsCutoff = 10 * time.Minute
	queueHour = 19
)

// isAuction reports whether tif is opg or cls.
func isAuction(tif string) bool { return tif == "opg" || tif == "cls" }

// auction is the auction an opg or cls order joins: the session's day,
// the time of the auction (the session's open or close) and the time
// from which the auction's orders can no longer be placed, replaced or
// cancelled.
type auction struct {
	day        calendar.Date
	at, cutoff time.Time
}

// auctionOf returns the auction that an order with time in force tif
// (opg or cls) submitted at t joins, on NYSE's calendar as the clock: the
// session of t's day in New York before that session's cutoff, the next
// session from queueHour on or when t's day has no session. Between a
// session's cutoff and queueHour it answers Alpaca's refusal, a 422.
func auctionOf(tif string, t time.Time) (auction, error) {
	cal, loc, err := nyse()
	if err != nil {
		return auction{}, err
	}
	now := t.In(loc)
	d := calendar.NewDate(now.Year(), now.Month(), now.Day())
	if a, ok := sessionAuction(cal, loc, tif, d); ok {
		if now.Before(a.cutoff) {
			return a, nil
		}
		if now.Hour() < queueHour {
			return auction{}, &apiError{http.StatusUnprocessableEntity, codeInvalid, fmt.Sprintf(
				"%s orders submitted after %s but before 7:00pm ET are rejected: the %s auction's cutoff has passed",
				tif, a.cutoff.Format("3:04pm"), map[string]string{"opg": "opening", "cls": "closing"}[tif])}
		}
	}
	a, _ := sessionAuction(cal, loc, tif, cal.Next(d))
	return a, nil
}

// sessionAuction returns the opg or cls auction of the session on d, and
// whether d has a session.
func sessionAuction(cal *calendar.Calendar, loc *time.Location, tif string, d calendar.Date) (auction, bool) {
	open, close, ok := session(cal, loc, d)
	switch {
	case !ok:
		return auction{}, false
	case tif == "opg":
		return auction{day: d, at: open, cutoff: open.Add(-opgCutoff)}, true
	default:
		return auction{day: d, at: close, cutoff: close.Add(-clsCutoff)}, true
	}
}

// checkAuctionCancel refuses (422) to cancel or replace the open opg or
// cls order o at now, from its auction's cutoff until the auction, as
// Alpaca does; before the cutoff, and after the auction while the
// session's bar is not stored yet, o may be cancelled.
func checkAuctionCancel(o *order, now time.Time) error {
	if !isAuction(o.TimeInForce) || o.Status != statusNew {
		return nil
	}
	a, err := auctionOf(o.TimeInForce, o.SubmittedAt)
	if err != nil {
		return err
	}
	if !now.Before(a.cutoff) && now.Before(a.at) {
		return &apiError{http.StatusUnprocessableEntity, codeInvalid, "order is not cancelable: its auction's cutoff has passed"}
	}
	return nil
}

// matchAuction fills or cancels the open opg or cls order o once its
// auction has taken place (the clock is at or past its time) and the
// daily bar of its session is stored, and reports whether it filled o.
// The order fills at the bar's open (opg) or close (cls), rounded half
// away from zero to 9 places, without slippage, as every order of an
// auction gets the auction's one price; a limit order fills only when
// that price is at or better than its limit, and is cancelled otherwise,
// as is an order whose session has no stored bar once a later one is
// stored. An order the account can no longer pay for or deliver is
// rejected, as at any fill.
func (b *Broker) matchAuction(ctx context.Context, o *order) (bool, error) {
	a, err := auctionOf(o.TimeInForce, o.SubmittedAt)
	if err != nil {
		return false, err
	}
	if b.clock().Before(a.at) {
		return false, nil
	}
	bar, err := b.closes.get(ctx, b.db, *o.AssetID)
	if errors.Is(err, tradekit.ErrNotFound) || err == nil && bar.Date.Before(a.day) {
		return false, nil // the session's bar is not stored yet
	}
	if err != nil {
		return false, err
	}
	if bar.Date.After(a.day) {
		bars, err := b.md.Prices(ctx, *o.AssetID, a.day, a.day)
		if err != nil {
			return false, fmt.Errorf("paper: %w", err)
		}
		if len(bars) == 0 {
			return false, b.cancelOpen(ctx, o)
		}
		bar = bars[0]
	}
	price := bar.Open
	if o.TimeInForce == "cls" {
		price = bar.Close
	}
	price = price.Round(qtyScale)
	if l := o.LimitPrice; l != nil && (o.Side == string(brokers.Buy) && price.GreaterThan(*l) || o.Side == string(brokers.Sell) && price.LessThan(*l)) {
		return false, b.cancelOpen(ctx, o)
	}
	return b.fillOpen(ctx, o, price)
}

// cancelOpen cancels the open simple order o, if it is still open.
func (b *Broker) cancelOpen(ctx context.Context, o *order) error {
	now := b.clock()
	o.Status, o.CanceledAt, o.UpdatedAt = statusCanceled, &now, now
	_, err := closeOrder(ctx, b.db, o, "canceled_at")
	return err
}
