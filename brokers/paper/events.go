package paper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// The trade-update stream, GET /v2/events/trades. Its events are not
// stored: they are derived from the times stored on the paper orders
// (submitted_at, filled_at, canceled_at, replaced_at, and updated_at of a
// rejected order, which never changes again), so that a replay and a
// live stream tell the same story. See [Broker.handleTradeEvents].

// The kinds of trade-update event, in the order in which the events of
// one order at one instant are numbered.
const (
	eventNew = iota
	eventFill
	eventCanceled
	eventReplaced
	eventRejected
)

// eventNames are Alpaca's names of the kinds of event.
var eventNames = [...]string{"new", "fill", "canceled", "replaced", "rejected"}

// The tuning of a live trade-update stream.
const (
	// streamLookback is how far behind the latest event sent a live
	// stream keeps looking for events that committed late (a transaction
	// takes its time before it commits), and remembers what it sent.
	streamLookback = 10 * time.Second
	// streamWriteWait bounds each write of a stream: the write deadline
	// is moved this far ahead before every write, so that the server's
	// WriteTimeout, meant for ordinary answers, does not cut the stream.
	streamWriteWait = 30 * time.Second
)

// tradeEvent is one trade-update event of an order.
type tradeEvent struct {
	id          string
	at          time.Time
	kind        int
	o           order           // the order as of the event
	positionQty decimal.Decimal // after a fill
}

// eventID returns the id of the event of kind of the order numbered seq
// at at: a ULID (26 characters of Crockford's base32, 128 bits) whose 48
// leading bits are at's Unix milliseconds, as in any ULID, and whose
// other 80 bits, where a ULID has random bits, are at's microseconds
// within the millisecond (10 bits), seq (64) and kind (3), then 3 zero
// bits. Ids of one account are thus unique, stable and ordered as the
// events: by time, then by order, then by kind.
func eventID(at time.Time, seq int64, kind int) string {
	ms := max(at.UnixMilli(), 0)
	us := uint64(at.Nanosecond()/1000) % 1000
	hi := uint64(ms)<<16 | us<<6 | uint64(seq)>>58
	lo := uint64(seq)<<6 | uint64(kind)<<3
	return encodeULID(hi, lo)
}

// crockford is the alphabet of Crockford's base32, as ULIDs use it.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// encodeULID returns the 128 bits hi, lo as a ULID's 26 characters.
func encodeULID(hi, lo uint64) string {
	var b [26]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(b[:])
}

// decodeULID returns the 128 bits of a ULID, whose letters may be in
// either case, and whether s is one.
func decodeULID(s string) (hi, lo uint64, ok bool) {
	if len(s) != 26 {
		return 0, 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		v := strings.IndexByte(crockford, c)
		if v < 0 || i == 0 && v > 7 {
			return 0, 0, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	return hi, lo, true
}

// idTime returns the millisecond of an event id: its ULID time.
func idTime(hi uint64) time.Time {
	return time.UnixMilli(int64(hi >> 16)).UTC()
}

// eventFilter is the range of a trade-update stream: events at or after
// since and at or before until, with an id after sinceID and at or
// before untilID; zero values do not filter.
type eventFilter struct {
	since, until     time.Time
	sinceID, untilID string // canonical (upper case)
}

// parseEventFilter reads the query of GET /v2/events/trades. The error
// wraps [tradekit.ErrInvalid] for a time that is not RFC 3339 (or a
// date) and an id that is not a ULID.
func parseEventFilter(q url.Values) (eventFilter, error) {
	var f eventFilter
	var err error
	if f.since, err = parseTime("since", q.Get("since")); err != nil {
		return f, err
	}
	if f.until, err = parseTime("until", q.Get("until")); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"since_id", &f.sinceID}, {"until_id", &f.untilID}} {
		s := q.Get(p.name)
		if s == "" {
			continue
		}
		hi, lo, ok := decodeULID(s)
		if !ok {
			return f, &tradekit.ParamError{Param: p.name, Msg: "must be an event id (a ULID)"}
		}
		*p.dst = encodeULID(hi, lo)
	}
	return f, nil
}

// bounded reports whether the stream ends once it has sent the stored
// events: with until or until_id.
func (f eventFilter) bounded() bool { return !f.until.IsZero() || f.untilID != "" }

// from returns a time at or before which every event f selects happens
// (zero: any time).
func (f eventFilter) from() time.Time {
	t := f.since
	if hi, _, ok := decodeULID(f.sinceID); ok && idTime(hi).After(t) {
		t = idTime(hi)
	}
	return t
}

// to returns a time after which no event f selects happens (zero: none).
func (f eventFilter) to() time.Time {
	t := f.until
	if hi, _, ok := decodeULID(f.untilID); ok {
		if end := idTime(hi).Add(time.Millisecond); t.IsZero() || end.Before(t) {
			t = end
		}
	}
	return t
}

// match reports whether f selects e.
func (f eventFilter) match(e tradeEvent) bool {
	return (f.since.IsZero() || !e.at.Before(f.since)) && (f.until.IsZero() || !e.at.After(f.until)) &&
		(f.sinceID == "" || e.id > f.sinceID) && (f.untilID == "" || e.id <= f.untilID)
}

// tradeEvents returns the trade-update events of the account's orders
// updated at or after from and submitted at or before to (zero times:
// no bound), ordered by id. Every event happens between its order's
// submission and its last update, so the bounds lose none in between.
//
// An order has a new event when submitted, or, for a leg of a bracket or
// OTO order, held until its parent fills, when the parent fills; then a
// fill, canceled, replaced or rejected event when it closes. Each
// carries the order as of the event: the new event's order is open, with
// nothing filled and updated_at the event's time.
func tradeEvents(ctx context.Context, db bun.IDB, accountID uuid.UUID, from, to time.Time) ([]tradeEvent, error) {
	var rows []order
	q := db.NewSelect().Model(&rows).Where("account_id = ?", accountID)
	if !from.IsZero() {
		q = q.Where("updated_at >= ?", from.UTC())
	}
	if !to.IsZero() {
		q = q.Where("submitted_at <= ?", to.UTC())
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: trade events of %s: %w", accountID, err)
	}
	held := func(o *order) bool { return o.ParentID != nil && (o.OrderClass == "bracket" || o.OrderClass == "oto") }
	var parentIDs []uuid.UUID
	for i := range rows {
		if held(&rows[i]) && !slices.Contains(parentIDs, *rows[i].ParentID) {
			parentIDs = append(parentIDs, *rows[i].ParentID)
		}
	}
	parents := map[uuid.UUID]order{}
	if len(parentIDs) > 0 {
		var ps []order
		if err := db.NewSelect().Model(&ps).Where("id IN (?)", bun.In(parentIDs)).Scan(ctx); err != nil {
			return nil, fmt.Errorf("paper: trade events of %s: %w", accountID, err)
		}
		for _, p := range ps {
			parents[p.ID] = p
		}
	}
	var out []tradeEvent
	add := func(o *order, kind int, at time.Time) {
		out = append(out, tradeEvent{id: eventID(at, o.Seq, kind), at: at, kind: kind, o: o.asOf(kind, at)})
	}
	for i := range rows {
		o := &rows[i]
		switch p, ok := parents[ptrOr(o.ParentID)]; {
		case !held(o):
			add(o, eventNew, o.SubmittedAt)
		case ok && p.Status == statusFilled && p.FilledAt != nil && o.Status != statusHeld:
			add(o, eventNew, *p.FilledAt) // activated in the transaction of the parent's fill
		}
		switch {
		case o.Status == statusFilled && o.FilledAt != nil:
			add(o, eventFill, *o.FilledAt)
		case o.Status == statusCanceled && o.CanceledAt != nil:
			add(o, eventCanceled, *o.CanceledAt)
		case o.Status == statusReplaced && o.ReplacedAt != nil:
			add(o, eventReplaced, *o.ReplacedAt)
		case o.Status == statusRejected:
			add(o, eventRejected, o.UpdatedAt) // a rejected order never changes again
		}
	}
	if err := positionsAfter(ctx, db, accountID, out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b tradeEvent) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

// ptrOr returns *id, or uuid.Nil when id is nil.
func ptrOr(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

// asOf returns o as it was at its event of kind, at at: for a new event
// open, with nothing filled, cancelled or replaced; for the others o as
// stored, since an order closes once. It carries no legs: each leg has
// events of its own. Fields that a paper order changes while it is open
// (a trailing stop's hwm and stop_price) keep their latest values.
func (o order) asOf(kind int, at time.Time) order {
	o.legs, o.UpdatedAt = nil, at
	if kind == eventNew {
		o.Status, o.FilledQty = statusNew, decimal.Zero
		o.FilledAvgPrice, o.FilledAt, o.Commission = nil, nil, nil
		o.CanceledAt, o.ReplacedAt, o.ReplacedBy = nil, nil, nil
		if o.Notional != nil {
			o.Qty = decimal.Zero
		}
	}
	return o
}

// positionsAfter sets the position quantity after each fill of evs: the
// account's filled orders in its symbol, replayed in the order they
// filled (then of seq), as the portfolio history replays them.
func positionsAfter(ctx context.Context, db bun.IDB, accountID uuid.UUID, evs []tradeEvent) error {
	var symbols []string
	var last time.Time
	for _, e := range evs {
		if e.kind == eventFill {
			if !slices.Contains(symbols, e.o.Symbol) {
				symbols = append(symbols, e.o.Symbol)
			}
			if e.at.After(last) {
				last = e.at
			}
		}
	}
	if len(symbols) == 0 {
		return nil
	}
	var fills []order
	err := db.NewSelect().Model(&fills).Column("id", "symbol", "side", "filled_qty").
		Where("account_id = ? AND status = ? AND symbol IN (?) AND filled_at <= ?", accountID, statusFilled, bun.In(symbols), last.UTC()).
		Order("filled_at", "seq").Scan(ctx)
	if err != nil {
		return fmt.Errorf("paper: positions of %s: %w", accountID, err)
	}
	held, after := map[string]decimal.Decimal{}, map[uuid.UUID]decimal.Decimal{}
	for _, f := range fills {
		q := f.FilledQty
		if f.Side == string(brokers.Sell) {
			q = q.Neg()
		}
		held[f.Symbol] = held[f.Symbol].Add(q)
		after[f.ID] = held[f.Symbol]
	}
	for i := range evs {
		if evs[i].kind == eventFill {
			evs[i].positionQty = after[evs[i].o.ID]
		}
	}
	return nil
}

// json returns e as Alpaca's trade update.
func (e tradeEvent) json() alpaca.TradeUpdateJSON {
	out := alpaca.TradeUpdateJSON{Event: eventNames[e.kind], EventID: e.id, At: e.at.UTC(), Order: orderJSON(e.o)}
	if e.kind == eventFill {
		at, qty, pos := e.at.UTC(), e.o.FilledQty, e.positionQty
		out.ExecutionID = uuid.NewSHA1(e.o.ID, []byte("fill")).String()
		out.Timestamp, out.Price, out.Qty, out.PositionQty = &at, e.o.FilledAvgPrice, &qty, &pos
	}
	return out
}

// EndStreams ends every trade-update stream (GET /v2/events/trades) open
// on b, and any opened later, as a broken connection would: the client
// sees the response cut short, so that Alpaca's SDKs reconnect, to
// another instance or once the server is back, and resume. A server calls
// it when it shuts down, through [http.Server.RegisterOnShutdown]:
// Shutdown waits for the requests in flight, and a live stream never
// finishes of itself.
func (b *Broker) EndStreams() {
	b.endOnce.Do(func() { close(b.streamsEnd) })
}

// errStreamsEnded ends a live stream once [Broker.EndStreams] is called.
var errStreamsEnded = errors.New("paper: trade-update streams ended")

// handleTradeEvents answers GET /v2/events/trades with the account's
// trade updates as Server-Sent Events, one "data: <JSON>" line each (see
// [alpaca.TradeUpdateJSON]), ordered by event id. since and until
// (RFC 3339, inclusive) bound the events' times, since_id (exclusive)
// and until_id (inclusive) their ids. With until or until_id the stream
// sends the stored events in range and ends; without, it stays open and
// sends each event as the orders change, through this Broker or another
// on the database (see [Broker.streamLive]), with a keep-alive comment
// after Config.StreamKeepAlive of silence, until the client goes away or
// [Broker.EndStreams] is called.
func (b *Broker) handleTradeEvents(w http.ResponseWriter, r *http.Request, a account) error {
	f, err := parseEventFilter(r.URL.Query())
	if err != nil {
		return err
	}
	release, ok := b.openStream(credential(r))
	if !ok {
		return b.errTooManyStreams()
	}
	defer release()
	ctx := r.Context()
	s := &eventWriter{w: w, rc: http.NewResponseController(w)}
	if f.bounded() {
		evs, err := tradeEvents(ctx, b.db, a.ID, f.from(), f.to())
		if err != nil {
			return err
		}
		evs = slices.DeleteFunc(evs, func(e tradeEvent) bool { return !f.match(e) })
		if err := s.start(); err != nil {
			return nil // the client is gone
		}
		_ = s.send(evs) // an error means the client is gone, and nothing more is to be sent
		return nil
	}
	// The server's ReadTimeout needs no care: net/http clears the read
	// deadline once the request is read, while it waits in the
	// background for the client to go away (which cancels ctx).
	if err := s.start(); err != nil {
		return nil
	}
	err = b.streamLive(ctx, s, a.ID, f)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	if !errors.Is(err, errStreamsEnded) {
		b.logError(r, err)
	}
	// Cut the response short, as a network failure would, so that the
	// client reconnects and resumes rather than take the stream for done.
	panic(http.ErrAbortHandler)
}

// errClientGone is a write of a stream that failed: the client went away,
// or stopped reading.
var errClientGone = errors.New("paper: the stream's client is gone")

// eventWriter writes a trade-update stream.
type eventWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	last time.Time // when it last wrote
}

// start writes the stream's headers, at once, so that the client knows
// the request succeeded before any event.
func (s *eventWriter) start() error {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies such as nginx: do not buffer
	s.w.WriteHeader(http.StatusOK)
	return s.write(nil)
}

// send writes the events, one "data:" line and a blank line each.
func (s *eventWriter) send(evs []tradeEvent) error {
	if len(evs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, e := range evs {
		buf.WriteString("data: ")
		if err := json.NewEncoder(&buf).Encode(e.json()); err != nil { // Encode ends the line
			return fmt.Errorf("paper: %w", err)
		}
		buf.WriteByte('\n')
	}
	return s.write(buf.Bytes())
}

// write writes p and flushes it, with the write deadline moved
// streamWriteWait ahead first.
func (s *eventWriter) write(p []byte) error {
	if err := s.rc.SetWriteDeadline(time.Now().Add(streamWriteWait)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return errClientGone
	}
	if _, err := s.w.Write(p); err != nil {
		return errClientGone
	}
	if err := s.rc.Flush(); err != nil {
		return errClientGone
	}
	s.last = time.Now()
	return nil
}

// streamLive sends the events f selects as they happen, until ctx is
// done (nil), the client goes away (nil), [Broker.EndStreams] is called
// ([errStreamsEnded]) or the database fails.
//
// Every Config.StreamPoll it reads the account's events from the orders
// updated since the latest event sent, less streamLookback. An event is
// sent once it has been seen by two reads, with every unsent event of a
// smaller id, in the order of ids: an event whose transaction took a
// little longer to commit than a later one's then still goes out in
// order, so that a client resuming from the last id it got misses
// nothing. One that commits later still (by more than a poll interval,
// and within streamLookback) is sent when seen, after events of greater
// ids: the open stream misses nothing, but a client that resumed from
// one of those ids would not get it.
func (b *Broker) streamLive(ctx context.Context, s *eventWriter, accountID uuid.UUID, f eventFilter) error {
	type seen struct {
		e    tradeEvent
		poll int
	}
	sent := map[string]time.Time{} // the ids sent at or after from, with their times
	pending := map[string]seen{}
	from := f.from()
	t := time.NewTicker(b.streamPoll)
	defer t.Stop()
	for poll := 0; ; poll++ {
		evs, err := tradeEvents(ctx, b.db, accountID, from, time.Time{})
		if err != nil {
			return err
		}
		for _, e := range evs {
			_, done := sent[e.id]
			_, waiting := pending[e.id]
			if !done && !waiting && f.match(e) && !e.at.Before(from) {
				pending[e.id] = seen{e, poll}
			}
		}
		ripe := ""
		for id, p := range pending {
			if p.poll < poll && id > ripe {
				ripe = id
			}
		}
		var out []tradeEvent
		for id, p := range pending {
			if id <= ripe {
				out = append(out, p.e)
				delete(pending, id)
			}
		}
		slices.SortFunc(out, func(a, b tradeEvent) int { return strings.Compare(a.id, b.id) })
		if err := s.send(out); err != nil {
			return nil
		}
		for _, e := range out {
			sent[e.id] = e.at
			if lb := e.at.Add(-streamLookback); lb.After(from) {
				from = lb
			}
		}
		for id, at := range sent {
			if at.Before(from) {
				delete(sent, id)
			}
		}
		if time.Since(s.last) >= b.keepAlive {
			if err := s.write([]byte(": keep-alive\n\n")); err != nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-b.streamsEnd:
			return errStreamsEnded
		case <-t.C:
		}
	}
}
