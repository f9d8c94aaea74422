package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
)

// Copy latency targets, for the copies made outside the fault windows.
const (
	targetP50 = 100 * time.Millisecond
	targetP99 = 500 * time.Millisecond
)

// claimTimeout is the copy engine's: how long a claimed copy event stays
// its instance's before another instance takes it over.
const claimTimeout = 30 * time.Second

// closedPaper lists the statuses of the paper broker's orders that are
// done; every other status is open.
const closedPaper = "('filled', 'canceled', 'expired', 'replaced', 'rejected', 'done_for_day')"

// checker reads the outcome of the run from the database and the
// recorder, waits for quiescence and checks the invariants.
type checker struct {
	db            *bun.DB
	users         *users
	load          *load
	rec           *recorder
	windows       []window
	strictLatency bool
	lastState     state // the last state settle saw
}

// state is what is still moving after the load.
type state struct {
	Pending  int `bun:"pending"`  // broker orders pending
	Open     int `bun:"open"`     // paper orders open
	Unsynced int `bun:"unsynced"` // leader's filled orders not among its portfolio's fills
	Untaken  int `bun:"untaken"`  // (fill, follow) pairs without a copy event
	Claimed  int `bun:"claimed"`  // copy events still claimed
}

// quiet reports whether nothing is left to happen.
func (s state) quiet() bool { return s == state{} }

// String implements fmt.Stringer.
func (s state) String() string {
	return fmt.Sprintf("%d broker orders pending, %d paper orders open, %d leader fills not in its portfolio, "+
		"%d (fill, follow) pairs not taken up, %d copy events claimed", s.Pending, s.Open, s.Unsynced, s.Untaken, s.Claimed)
}

// followIDs returns the followers' follow ids.
func (ck *checker) followIDs() []string {
	var ids []string
	for _, f := range ck.users.followers {
		ids = append(ids, f.follow)
	}
	return ids
}

// state reads what is still moving.
func (ck *checker) state(ctx context.Context) (state, error) {
	var s state
	err := ck.db.NewRaw(`SELECT
		(SELECT count(*) FROM broker_orders WHERE status = 'pending') AS pending,
		(SELECT count(*) FROM paper_orders WHERE status NOT IN `+closedPaper+`) AS open,
		(SELECT count(*) FROM broker_orders o WHERE o.connection_id = ? AND o.status = 'filled' AND NOT EXISTS
			(SELECT 1 FROM portfolio_fills f WHERE f.portfolio_id = ? AND f.broker_id = o.broker_order_id)) AS unsynced,
		(SELECT count(*) FROM follows fo JOIN portfolio_fills f ON f.portfolio_id = ? AND f.filled_at >= fo.copy_since
			WHERE fo.id IN (?) AND NOT EXISTS
			(SELECT 1 FROM copy_events e WHERE e.follow_id = fo.id AND e.fill_id = f.broker_id)) AS untaken,
		(SELECT count(*) FROM copy_events WHERE status = 'claimed') AS claimed`,
		ck.users.leader.conn, ck.users.leader.portfolio, ck.users.leader.portfolio, bun.In(ck.followIDs())).Scan(ctx, &s)
	return s, err
}

// settle waits, at most limit, until nothing is left to happen, and
// returns how long it waited and whether that was reached.
func (ck *checker) settle(ctx context.Context, limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		s, err := ck.state(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("settle: %w", err)
		}
		ck.lastState = s
		if s.quiet() {
			return time.Since(start), true, nil
		}
		if time.Since(start) > limit {
			return time.Since(start), false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// result is one invariant's outcome.
type result struct {
	name     string
	pass     bool
	advisory bool // printed, but does not decide the exit status
	lines    []string
}

// add appends a line of numbers to the result.
func (r *result) add(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// fail appends a line and marks the result failed.
func (r *result) fail(format string, args ...any) {
	r.pass = false
	r.add("FAIL: "+format, args...)
}

// report checks every invariant, prints each with its numbers, and
// reports whether those that decide the exit status hold.
func (ck *checker) report(ctx context.Context, w io.Writer, quiet bool) (bool, error) {
	var results []*result
	for _, check := range []func(context.Context) (*result, error){
		ck.ordersOnce, ck.copiesOnce, ck.accountsReplay, ck.no5xx, ck.copyLatency,
	} {
		r, err := check(ctx)
		if err != nil {
			return false, err
		}
		results = append(results, r)
	}
	ok := quiet
	fmt.Fprintln(w, "== fault windows")
	for _, win := range ck.windows {
		fmt.Fprintf(w, "   %-20s %s – %s (%.1f s)\n", win.name, win.start.Format("15:04:05.000"), win.end.Format("15:04:05.000"),
			win.end.Sub(win.start).Seconds())
	}
	fmt.Fprintln(w, "== invariants")
	for i, r := range results {
		verdict := "PASS"
		switch {
		case !r.pass && r.advisory:
			verdict = "FAIL (advisory)"
		case !r.pass:
			verdict = "FAIL"
			ok = false
		}
		fmt.Fprintf(w, "%d. %s: %s\n", i+1, r.name, verdict)
		for _, l := range r.lines {
			fmt.Fprintf(w, "   %s\n", l)
		}
	}
	if !quiet {
		fmt.Fprintf(w, "FAIL: the run never became quiescent: %s\n", ck.lastState)
	}
	return ok, nil
}

// ordersOnce checks invariant 1: every order answered 200 exists exactly
// once in broker_orders, every order got an answer (200, or 422 for a
// refusal), no market order is left pending, and the paper broker holds
// exactly the orders Tradekit sent it, filled as Tradekit recorded.
func (ck *checker) ordersOnce(ctx context.Context) (*result, error) {
	r := &result{name: "every accepted order is recorded exactly once", pass: true}
	var rows []struct {
		ClientOrderID string `bun:"client_order_id"`
		N             int    `bun:"n"`
		Status        string `bun:"status"`
	}
	err := ck.db.NewRaw(`SELECT client_order_id, count(*) AS n, min(status) AS status FROM broker_orders
		WHERE user_id = (SELECT id FROM users WHERE email = ?) AND client_order_id LIKE 'fault-%'
		GROUP BY client_order_id`, ck.users.leader.email).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("invariant 1: %w", err)
	}
	recorded := map[string]int{}
	statusOf := map[string]string{}
	for _, x := range rows {
		recorded[x.ClientOrderID], statusOf[x.ClientOrderID] = x.N, x.Status
	}

	orders := ck.load.snapshot()
	var accepted, replayed, once, missing, doubled, laterRejected, refused, refusedOnce, unanswered int
	rules := map[string]int{}
	other := map[int]int{}
	var examples []string
	for _, o := range orders {
		switch o.status {
		case http.StatusOK:
			accepted++
			if o.replayed {
				replayed++
			}
			switch n := recorded[o.clientID]; {
			case n == 0:
				missing++
				examples = append(examples, o.clientID+" missing")
			case n > 1:
				doubled++
				examples = append(examples, fmt.Sprintf("%s recorded %d times", o.clientID, n))
			default:
				once++
				if statusOf[o.clientID] == "rejected" {
					laterRejected++
				}
			}
		case http.StatusUnprocessableEntity:
			refused++
			rules[o.rule]++
			if recorded[o.clientID] == 1 && statusOf[o.clientID] == "rejected" {
				refusedOnce++
			}
		case 0:
			unanswered++
		default:
			other[o.status]++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%s: %d %s", o.clientID, o.status, o.body))
			}
		}
	}
	r.add("%d orders sent: %d accepted (200, %d of them replayed after a retry), %d refused (422: %s), %d other answers, %d unanswered",
		len(orders), accepted, replayed, refused, countsText(rules), sum(other), unanswered)
	r.add("accepted orders in broker_orders: %d once, %d missing, %d more than once; %d accepted then rejected by the broker",
		once, missing, doubled, laterRejected)
	r.add("refused orders recorded once as rejected: %d of %d", refusedOnce, refused)
	if missing > 0 || doubled > 0 {
		r.fail("accepted orders not recorded exactly once")
	}
	if unanswered > 0 || len(other) > 0 {
		r.fail("orders not answered 200 or 422: %d unanswered, %s", unanswered, countsText(other))
	}
	for _, e := range examples[:min(len(examples), 5)] {
		r.add("  %s", e)
	}

	var b struct {
		PendingMarket int `bun:"pending_market"`
		Phantom       int `bun:"phantom"`
		NotSent       int `bun:"not_sent"`
		Disagree      int `bun:"disagree"`
		Total         int `bun:"total"`
		PaperTotal    int `bun:"paper_total"`
	}
	err = ck.db.NewRaw(`SELECT
		(SELECT count(*) FROM broker_orders WHERE type = 'market' AND status = 'pending') AS pending_market,
		(SELECT count(*) FROM paper_orders p JOIN paper_accounts a ON a.id = p.account_id
			WHERE a.client_id <> '' AND NOT EXISTS
			(SELECT 1 FROM broker_orders o WHERE o.id::text = p.client_order_id)) AS phantom,
		(SELECT count(*) FROM broker_orders o WHERE o.status IN ('pending', 'filled') AND NOT EXISTS
			(SELECT 1 FROM paper_orders p WHERE p.client_order_id = o.id::text)) AS not_sent,
		(SELECT count(*) FROM broker_orders o JOIN paper_orders p ON p.client_order_id = o.id::text
			WHERE (o.status = 'filled') <> (p.status = 'filled') OR (o.status = 'filled' AND
			(o.filled_quantity <> p.filled_qty OR o.filled_price <> p.filled_avg_price OR o.broker_order_id <> p.id::text))) AS disagree,
		(SELECT count(*) FROM broker_orders) AS total,
		(SELECT count(*) FROM paper_orders) AS paper_total`).Scan(ctx, &b)
	if err != nil {
		return nil, fmt.Errorf("invariant 1: %w", err)
	}
	r.add("all users: %d broker orders, %d paper broker orders; %d market orders pending", b.Total, b.PaperTotal, b.PendingMarket)
	// The orders of accounts no client reaches (the demo leaders', which
	// Broker.Fill records as their history) are no orders Tradekit sent.
	r.add("paper orders (of accounts a client reaches) Tradekit never recorded: %d; accepted orders the broker never got: %d; fills Tradekit recorded otherwise: %d",
		b.Phantom, b.NotSent, b.Disagree)
	if b.PendingMarket > 0 {
		r.fail("%d market orders left pending", b.PendingMarket)
	}
	if b.Phantom > 0 || b.NotSent > 0 || b.Disagree > 0 {
		r.fail("Tradekit and the paper broker disagree on some orders")
	}
	return r, nil
}

// copiesOnce checks invariant 2: every fill of the leader's portfolio
// since a follow began is taken up exactly once for that follow (one
// copy_events row, none left claimed), every filled order of the leader
// reached its portfolio's fills, and every copy order exists once,
// referenced by one copy event.
func (ck *checker) copiesOnce(ctx context.Context) (*result, error) {
	r := &result{name: "every leader fill is copied exactly once per follow", pass: true}
	var unsynced, fills int
	err := ck.db.NewRaw(`SELECT count(*) FROM broker_orders o WHERE o.connection_id = ? AND o.status = 'filled' AND NOT EXISTS
		(SELECT 1 FROM portfolio_fills f WHERE f.portfolio_id = ? AND f.broker_id = o.broker_order_id)`,
		ck.users.leader.conn, ck.users.leader.portfolio).Scan(ctx, &unsynced)
	if err != nil {
		return nil, fmt.Errorf("invariant 2: %w", err)
	}
	if err := ck.db.NewRaw(`SELECT count(*) FROM portfolio_fills WHERE portfolio_id = ?`, ck.users.leader.portfolio).Scan(ctx, &fills); err != nil {
		return nil, fmt.Errorf("invariant 2: %w", err)
	}
	r.add("leader: %d fills in its portfolio (what the copy engine copies); %d filled orders missing from them", fills, unsynced)
	syncs, err := ck.syncText(ctx, ck.users.leader.conn)
	if err != nil {
		return nil, err
	}
	r.add("leader: %s", syncs)
	if unsynced > 0 {
		r.fail("%d leader fills never reached the copy engine (a fill reaches it through a sync of the leader's connection)", unsynced)
	}

	for _, f := range ck.users.followers {
		var c struct {
			Expected int `bun:"expected"`
			Events   int `bun:"events"`
			Distinct int `bun:"distinct_fills"`
			Missing  int `bun:"missing"`
			Foreign  int `bun:"foreign"`
			Claimed  int `bun:"claimed"`
		}
		err := ck.db.NewRaw(`SELECT
			(SELECT count(*) FROM portfolio_fills pf JOIN follows fo ON fo.id = ? WHERE pf.portfolio_id = ? AND pf.filled_at >= fo.copy_since) AS expected,
			(SELECT count(*) FROM copy_events WHERE follow_id = ?) AS events,
			(SELECT count(DISTINCT fill_id) FROM copy_events WHERE follow_id = ?) AS distinct_fills,
			(SELECT count(*) FROM portfolio_fills pf JOIN follows fo ON fo.id = ? WHERE pf.portfolio_id = ? AND pf.filled_at >= fo.copy_since
				AND NOT EXISTS (SELECT 1 FROM copy_events e WHERE e.follow_id = fo.id AND e.fill_id = pf.broker_id)) AS missing,
			(SELECT count(*) FROM copy_events e WHERE e.follow_id = ? AND NOT EXISTS
				(SELECT 1 FROM portfolio_fills pf WHERE pf.portfolio_id = ? AND pf.broker_id = e.fill_id)) AS foreign,
			(SELECT count(*) FROM copy_events WHERE follow_id = ? AND status = 'claimed') AS claimed`,
			f.follow, ck.users.leader.portfolio, f.follow, f.follow, f.follow, ck.users.leader.portfolio,
			f.follow, ck.users.leader.portfolio, f.follow).Scan(ctx, &c)
		if err != nil {
			return nil, fmt.Errorf("invariant 2: %w", err)
		}
		var statuses []struct {
			Status string `bun:"status"`
			Reason string `bun:"reason"`
			N      int    `bun:"n"`
		}
		err = ck.db.NewRaw(`SELECT status, reason, count(*) AS n FROM copy_events WHERE follow_id = ? GROUP BY status, reason ORDER BY n DESC`,
			f.follow).Scan(ctx, &statuses)
		if err != nil {
			return nil, fmt.Errorf("invariant 2: %w", err)
		}
		var parts []string
		for _, s := range statuses {
			p := fmt.Sprintf("%d %s", s.N, s.Status)
			if s.Reason != "" {
				p += fmt.Sprintf(" (%q)", s.Reason)
			}
			parts = append(parts, p)
		}
		r.add("%s: %d fills since the follow began, %d copy events for %d fills: %d fills missing, %d events for no leader fill, %d left claimed",
			f.name, c.Expected, c.Events, c.Distinct, c.Missing, c.Foreign, c.Claimed)
		r.add("%s: %s", f.name, strings.Join(parts, ", "))
		syncs, err := ck.syncText(ctx, f.conn)
		if err != nil {
			return nil, err
		}
		r.add("%s: %s", f.name, syncs)
		if c.Missing > 0 || c.Events != c.Distinct || c.Events != c.Expected || c.Foreign > 0 || c.Claimed > 0 {
			r.fail("%s: fills not taken up exactly once", f.name)
		}
	}

	var o struct {
		Copies        int `bun:"copies"`
		Doubled       int `bun:"doubled"`
		Unreferenced  int `bun:"unreferenced"`
		MultiRef      int `bun:"multi_ref"`
		MissingOrders int `bun:"missing_orders"`
		Filled        int `bun:"filled"`
	}
	err = ck.db.NewRaw(`SELECT
		(SELECT count(*) FROM broker_orders WHERE client_order_id LIKE 'copy-%') AS copies,
		(SELECT count(*) FROM (SELECT 1 FROM broker_orders WHERE client_order_id LIKE 'copy-%'
			GROUP BY user_id, client_order_id HAVING count(*) > 1) AS d) AS doubled,
		(SELECT count(*) FROM broker_orders o WHERE o.client_order_id LIKE 'copy-%' AND NOT EXISTS
			(SELECT 1 FROM copy_events e WHERE e.order_id = o.id)) AS unreferenced,
		(SELECT count(*) FROM (SELECT 1 FROM copy_events WHERE order_id IS NOT NULL GROUP BY order_id HAVING count(*) > 1) AS m) AS multi_ref,
		(SELECT count(*) FROM copy_events e WHERE e.order_id IS NOT NULL AND NOT EXISTS
			(SELECT 1 FROM broker_orders o WHERE o.id = e.order_id)) AS missing_orders,
		(SELECT count(*) FROM broker_orders WHERE client_order_id LIKE 'copy-%' AND status = 'filled') AS filled`).Scan(ctx, &o)
	if err != nil {
		return nil, fmt.Errorf("invariant 2: %w", err)
	}
	r.add("copy orders: %d (%d filled); %d client ids used twice, %d not referenced by a copy event, %d referenced twice, %d events naming no order",
		o.Copies, o.Filled, o.Doubled, o.Unreferenced, o.MultiRef, o.MissingOrders)
	if o.Doubled > 0 || o.Unreferenced > 0 || o.MultiRef > 0 || o.MissingOrders > 0 {
		r.fail("copy orders not recorded exactly once")
	}

	// Every take of a (fill, follow) notifies the follower first: two
	// leader_trade notifications of one pair mean the copy engine took it
	// up twice. The copy order's client id keeps the order single, so
	// this is reported, not failed.
	var twice []struct {
		N     int       `bun:"n"`
		First time.Time `bun:"first"`
		Last  time.Time `bun:"last"`
	}
	err = ck.db.NewRaw(`SELECT count(*) AS n, min(created_at) AS first, max(created_at) AS last FROM notifications
		WHERE kind = 'leader_trade' GROUP BY data::json->>'followId', data::json->>'fillId' HAVING count(*) > 1`).Scan(ctx, &twice)
	if err != nil {
		return nil, fmt.Errorf("invariant 2: %w", err)
	}
	var gaps []time.Duration
	for _, t := range twice {
		gaps = append(gaps, t.Last.Sub(t.First))
	}
	if len(twice) == 0 {
		r.add("(fill, follow) pairs taken up more than once (two leader_trade notifications): none")
	} else {
		r.add("(fill, follow) pairs taken up more than once (two leader_trade notifications): %d; between the takes: %s", len(twice), latencyText(gaps))
	}
	return r, nil
}

// syncText describes the syncs of a connection: how many completed and
// how long they took, which failed and why, and the one still marked
// syncing, if any.
func (ck *checker) syncText(ctx context.Context, conn string) (string, error) {
	var logs []struct {
		Status      string     `bun:"status"`
		Error       string     `bun:"error"`
		StartedAt   time.Time  `bun:"started_at"`
		CompletedAt *time.Time `bun:"completed_at"`
	}
	err := ck.db.NewRaw(`SELECT status, error, started_at, completed_at FROM broker_sync_logs WHERE connection_id = ? ORDER BY started_at`,
		conn).Scan(ctx, &logs)
	if err != nil {
		return "", fmt.Errorf("sync logs: %w", err)
	}
	var took []time.Duration
	failed := map[string]int{}
	var running []string
	for _, l := range logs {
		switch {
		case l.Status == "completed" && l.CompletedAt != nil:
			took = append(took, l.CompletedAt.Sub(l.StartedAt))
		case l.Status == "syncing":
			running = append(running, "since "+l.StartedAt.Local().Format("15:04:05.000")+ck.windowOf(l.StartedAt))
		default:
			failed[l.Error]++
		}
	}
	s := fmt.Sprintf("%d syncs: %d completed (%s), %d failed", len(logs), len(took), latencyText(took), sum(failed))
	if len(failed) > 0 {
		s += " (" + countsText(failed) + ")"
	}
	if len(running) > 0 {
		s += fmt.Sprintf(", %d still marked syncing: %s", len(running), strings.Join(running, ", "))
	}
	return s, nil
}

// windowOf names the fault window t falls in, as ", in the window of the
// …", or returns "".
func (ck *checker) windowOf(t time.Time) string {
	for _, w := range ck.windows {
		if w.contains(t, t) {
			return ", in the window of the " + w.name
		}
	}
	return ""
}

// accountsReplay checks invariant 3: for every paper account, the
// starting cash plus the sells' proceeds less the buys' costs and the
// commissions of its filled orders is its cash, and for every symbol the
// filled buys less the filled sells are its position.
func (ck *checker) accountsReplay(ctx context.Context) (*result, error) {
	r := &result{name: "every paper account equals the replay of its fills", pass: true}
	var accounts []struct {
		ID           string          `bun:"id"`
		StartingCash decimal.Decimal `bun:"starting_cash"`
		Cash         decimal.Decimal `bun:"cash"`
		Name         string          `bun:"name"`
	}
	err := ck.db.NewRaw(`SELECT a.id::text AS id, a.starting_cash, a.cash, coalesce(u.email, a.number) AS name FROM paper_accounts a
		LEFT JOIN broker_connections c ON c.account_id = a.id::text LEFT JOIN users u ON u.id = c.user_id ORDER BY name`).Scan(ctx, &accounts)
	if err != nil {
		return nil, fmt.Errorf("invariant 3: %w", err)
	}
	var fills []struct {
		AccountID  string          `bun:"account_id"`
		Symbol     string          `bun:"symbol"`
		Side       string          `bun:"side"`
		Qty        decimal.Decimal `bun:"filled_qty"`
		Price      decimal.Decimal `bun:"filled_avg_price"`
		Commission decimal.Decimal `bun:"commission"`
	}
	err = ck.db.NewRaw(`SELECT account_id::text, symbol, side, filled_qty, filled_avg_price, coalesce(commission, 0) AS commission
		FROM paper_orders WHERE status = 'filled'`).Scan(ctx, &fills)
	if err != nil {
		return nil, fmt.Errorf("invariant 3: %w", err)
	}
	var positions []struct {
		AccountID string          `bun:"account_id"`
		Symbol    string          `bun:"symbol"`
		Qty       decimal.Decimal `bun:"qty"`
	}
	if err := ck.db.NewRaw(`SELECT account_id::text, symbol, qty FROM paper_positions`).Scan(ctx, &positions); err != nil {
		return nil, fmt.Errorf("invariant 3: %w", err)
	}

	type replay struct {
		cash   decimal.Decimal
		fills  int
		held   map[string]decimal.Decimal // by the replay
		actual map[string]decimal.Decimal // paper_positions
	}
	byAccount := map[string]*replay{}
	for _, a := range accounts {
		byAccount[a.ID] = &replay{cash: a.StartingCash, held: map[string]decimal.Decimal{}, actual: map[string]decimal.Decimal{}}
	}
	for _, f := range fills {
		x := byAccount[f.AccountID]
		notional := f.Qty.Mul(f.Price)
		if f.Side == "buy" {
			x.cash, x.held[f.Symbol] = x.cash.Sub(notional), x.held[f.Symbol].Add(f.Qty)
		} else {
			x.cash, x.held[f.Symbol] = x.cash.Add(notional), x.held[f.Symbol].Sub(f.Qty)
		}
		x.cash = x.cash.Sub(f.Commission)
		x.fills++
	}
	for _, p := range positions {
		byAccount[p.AccountID].actual[p.Symbol] = p.Qty
	}
	for _, a := range accounts {
		x := byAccount[a.ID]
		var wrong []string
		symbols := map[string]bool{}
		for s := range x.held {
			symbols[s] = true
		}
		for s := range x.actual {
			symbols[s] = true
		}
		var held []string
		for s := range symbols {
			if !x.held[s].Equal(x.actual[s]) {
				wrong = append(wrong, fmt.Sprintf("%s replayed %s, held %s", s, x.held[s], x.actual[s]))
			}
			if !x.actual[s].IsZero() {
				held = append(held, fmt.Sprintf("%s %s", s, x.actual[s]))
			}
		}
		sort.Strings(held)
		r.add("%s: %d fills; cash %s, replayed %s; positions %s", a.Name, x.fills, a.Cash, x.cash, strings.Join(held, ", "))
		if !x.cash.Equal(a.Cash) {
			r.fail("%s: the cash is %s, the replay of its fills gives %s", a.Name, a.Cash, x.cash)
		}
		if len(wrong) > 0 {
			sort.Strings(wrong)
			r.fail("%s: positions differ from the replay: %s", a.Name, strings.Join(wrong, "; "))
		}
	}
	return r, nil
}

// no5xx checks invariant 4: no API request the run made, setup and load,
// was answered with a 5xx or failed to connect outside the fault
// windows.
func (ck *checker) no5xx(ctx context.Context) (*result, error) {
	r := &result{name: "no 5xx and no failed connection outside the fault windows", pass: true}
	log := ck.rec.exchanges()
	var inside, outside, fiveInside, netInside int
	statuses := map[int]int{}
	var examples []string
	for _, e := range log {
		statuses[e.Status]++
		if e.Err == nil && e.Status < 500 {
			continue
		}
		if inWindow(ck.windows, e.Start, e.End) {
			inside++
			if e.Err != nil {
				netInside++
			} else {
				fiveInside++
			}
			continue
		}
		outside++
		if len(examples) < 5 {
			what := statusName(e.Status)
			if e.Err != nil {
				what = e.Err.Error()
			}
			examples = append(examples, fmt.Sprintf("%s %s %s on %s: %s", e.Start.Format("15:04:05.000"), e.Method, e.Path,
				ck.users.instanceName(e.Inst), what))
		}
	}
	r.add("%d API requests (health probes not counted); answers %s", len(log), countsText(statuses))
	r.add("inside the fault windows: %d failed (%d 5xx, %d without an answer); outside: %d", inside, fiveInside, netInside, outside)
	if outside > 0 {
		r.fail("%d requests failed outside the fault windows", outside)
		for _, e := range examples {
			r.add("  %s", e)
		}
	}
	return r, nil
}

// instanceName names the instance of index i.
func (u *users) instanceName(i int) string {
	if i < 0 || i > 1 {
		return "?"
	}
	return []string{"A", "B"}[i]
}

// copyLatency checks invariant 5: from the leader's fill (its order's
// filled_at) to the copy order's creation, p50 and p99 over the copies
// made outside the fault windows, against targetP50 and targetP99. It
// also prints the longest time a copy event stayed claimed: after the
// SIGKILL, the time another instance took to take over a claim the dead
// one held.
func (ck *checker) copyLatency(ctx context.Context) (*result, error) {
	r := &result{name: fmt.Sprintf("copy latency p50 ≤ %s, p99 ≤ %s outside the fault windows", targetP50, targetP99),
		pass: true, advisory: !ck.strictLatency}
	var rows []struct {
		Side      string    `bun:"side"`
		Type      string    `bun:"type"`
		PlacedAt  time.Time `bun:"placed_at"`
		FilledAt  time.Time `bun:"filled_at"`
		Recorded  time.Time `bun:"recorded_at"`
		TakenUpAt time.Time `bun:"taken_up_at"`
		CopiedAt  time.Time `bun:"copied_at"`
	}
	err := ck.db.NewRaw(`SELECT l.side, l.type, l.created_at AS placed_at, l.filled_at, l.updated_at AS recorded_at,
		e.created_at AS taken_up_at, c.created_at AS copied_at FROM broker_orders c
		JOIN copy_events e ON e.order_id = c.id
		JOIN broker_orders l ON l.connection_id = ? AND l.broker_order_id = e.fill_id
		WHERE c.client_order_id LIKE 'copy-%' AND l.filled_at IS NOT NULL`, ck.users.leader.conn).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("invariant 5: %w", err)
	}
	var all, clean []time.Duration
	slowest := -1
	for i, x := range rows {
		d := x.CopiedAt.Sub(x.FilledAt)
		all = append(all, d)
		if !inWindow(ck.windows, x.FilledAt, x.CopiedAt) {
			clean = append(clean, d)
			if slowest < 0 || d > rows[slowest].CopiedAt.Sub(rows[slowest].FilledAt) {
				slowest = i
			}
		}
	}
	r.add("all copies:              %s", latencyText(all))
	r.add("outside the fault windows: %s", latencyText(clean))
	if slowest >= 0 {
		// Where the slowest copy's time went: the leader's order last
		// updated (its fill recorded, as a rule), the copy pass that took
		// the fill up (a sell waits while the follower's copies in its
		// symbol are open), and the copy order, each after the broker's
		// fill.
		x := rows[slowest]
		r.add("slowest, a %s %s order placed at %s, filled by the broker %s later: recorded +%s, taken up +%s, copied +%s",
			x.Type, x.Side, x.PlacedAt.Local().Format("15:04:05.000"), ms(x.FilledAt.Sub(x.PlacedAt)),
			ms(x.Recorded.Sub(x.FilledAt)), ms(x.TakenUpAt.Sub(x.FilledAt)), ms(x.CopiedAt.Sub(x.FilledAt)))
	}
	if len(clean) == 0 {
		r.fail("no copy outside the fault windows to measure")
	} else if p50, p99 := percentile(clean, 0.50), percentile(clean, 0.99); p50 > targetP50 || p99 > targetP99 {
		r.fail("p50 %s (target %s), p99 %s (target %s)", ms(p50), ms(targetP50), ms(p99), ms(targetP99))
	}

	// A copy event is created claimed, stamped with the start of the
	// copy pass that claims it (not the moment of the claim), and
	// stamped again when it is taken up; a claim whose stamp is older
	// than the claim timeout may be taken over by another instance.
	var events []struct {
		CreatedAt time.Time `bun:"created_at"`
		UpdatedAt time.Time `bun:"updated_at"`
	}
	if err := ck.db.NewRaw(`SELECT created_at, updated_at FROM copy_events`).Scan(ctx, &events); err != nil {
		return nil, fmt.Errorf("invariant 5: %w", err)
	}
	var longest time.Duration
	var at time.Time
	stale := 0
	for _, e := range events {
		d := e.UpdatedAt.Sub(e.CreatedAt)
		if d > longest {
			longest, at = d, e.CreatedAt
		}
		if d >= claimTimeout {
			stale++
		}
	}
	line := fmt.Sprintf("takeover: the longest a copy event stayed claimed is %s", ms(longest))
	if longest > 0 {
		line += fmt.Sprintf(" (from its pass at %s%s)", at.Local().Format("15:04:05.000"), ck.windowOf(at))
	}
	r.add("%s; %d of %d events were taken up %s or more after their pass began (their claims open to takeover meanwhile)",
		line, stale, len(events), claimTimeout)
	return r, nil
}

// latencyText describes a set of latencies.
func latencyText(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no copies"
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s, count %d", ms(percentile(ds, 0.50)), ms(percentile(ds, 0.99)), ms(percentile(ds, 1)), len(ds))
}

// percentile returns the p-quantile of ds by the nearest rank (p = 1 is
// the maximum). It sorts ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// countsText lists counts as "n×key", most frequent first.
func countsText[K comparable](m map[K]int) string {
	type kv struct {
		k string
		n int
	}
	var list []kv
	for k, n := range m {
		s := fmt.Sprint(k)
		if i, ok := any(k).(int); ok {
			s = statusName(i)
		}
		if s == "" {
			s = "-"
		}
		list = append(list, kv{s, n})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].n > list[j].n || list[i].n == list[j].n && list[i].k < list[j].k })
	if len(list) == 0 {
		return "none"
	}
	var parts []string
	for _, x := range list {
		parts = append(parts, fmt.Sprintf("%d×%s", x.n, x.k))
	}
	return strings.Join(parts, ", ")
}

// sum adds up the counts of m.
func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
