package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// giveUp is how long an order is retried before the run counts it
// unanswered.
const giveUp = 90 * time.Second

// order is one order of the leader, as the run sent it and what became
// of it.
type order struct {
	clientID string
	side     string // "buy" or "sell"
	symbol   string
	qty      int64
	attempts int
	status   int    // the final answer's status; 0 when none came
	replayed bool   // the final answer carried Idempotent-Replayed: true
	rule     string // details.rule of a 422
	body     string // the final answer's body, when it is neither 200 nor 422
}

// load places the leader's orders.
type load struct {
	api    *api
	c      *cluster
	leader *trader
	assets map[string]string
	cfg    config
	runID  string           // makes the clientOrderIds unique to the run
	pace   <-chan time.Time // one tick per request, shared by the workers

	mu     sync.Mutex
	held   map[string]int64 // shares of each symbol bought and not sold, by the answers so far
	orders []*order
}

// newLoad returns the load of the leader's orders.
func newLoad(a *api, c *cluster, u *users, cfg config) *load {
	return &load{api: a, c: c, leader: u.leader, assets: u.assets, cfg: cfg, runID: fmt.Sprintf("%08x", rand.Uint32()), held: map[string]int64{}}
}

// run runs the workers until end, then waits for the orders in flight to
// be answered.
func (l *load) run(ctx context.Context, end time.Time) {
	t := time.NewTicker(time.Duration(float64(time.Second) / l.cfg.rate))
	defer t.Stop()
	l.pace = t.C
	var wg sync.WaitGroup
	for w := range l.cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
				o := l.next(fmt.Sprintf("fault-%s-w%d-%d", l.runID, w, n))
				l.place(ctx, o, (w+n)%2)
			}
		}()
	}
	wg.Wait()
}

// next chooses the next order: a buy of 1 to 10 shares, or, once a third
// of the holding of a symbol is at least one share, one time in three a
// sell of that third. The shares sold are taken off the holding at once,
// so that concurrent sells never sell the same shares.
func (l *load) next(clientID string) *order {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := &order{clientID: clientID, symbol: symbols[rand.IntN(len(symbols))], side: "buy", qty: 1 + rand.Int64N(10)}
	if third := l.held[o.symbol] / 3; third >= 1 && rand.IntN(3) == 0 {
		o.side, o.qty = "sell", third
		l.held[o.symbol] -= third
	}
	l.orders = append(l.orders, o)
	return o
}

// place sends o to instance inst until it is answered: after a network
// error or a 5xx it sends it again, with the same clientOrderId, to the
// other instance (or the same one, when the other is down); after a 429
// it waits as Retry-After says.
func (l *load) place(ctx context.Context, o *order, inst int) {
	q := url.Values{"connectionId": {l.leader.conn}, "assetId": {l.assets[o.symbol]}, "side": {o.side}, "type": {"market"},
		"quantity": {strconv.FormatInt(o.qty, 10)}, "clientOrderId": {o.clientID}}
	path := "/api/v1/brokers/orders?" + q.Encode()
	first := time.Now()
	for time.Since(first) < giveUp {
		if l.c.inst[inst].down.Load() {
			inst = 1 - inst
		}
		select {
		case <-ctx.Done():
			return
		case <-l.pace:
		}
		o.attempts++
		ans, err := l.api.do(ctx, inst, "POST", path, l.leader.key)
		switch {
		case err != nil || ans.status >= 500:
			inst = 1 - inst
			time.Sleep(100 * time.Millisecond)
			continue
		case ans.status == http.StatusTooManyRequests:
			wait, _ := strconv.Atoi(ans.header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		l.answered(o, ans)
		return
	}
}

// answered records the final answer to o and keeps the holding: a buy
// adds to it when accepted, a sell that was not accepted gives its
// shares back.
func (l *load) answered(o *order, ans answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o.status, o.replayed = ans.status, ans.header.Get("Idempotent-Replayed") == "true"
	switch {
	case ans.status == http.StatusOK && o.side == "buy":
		l.held[o.symbol] += o.qty
	case ans.status != http.StatusOK && o.side == "sell":
		l.held[o.symbol] += o.qty
	}
	if ans.status == http.StatusUnprocessableEntity {
		var e struct {
			Error struct {
				Details struct {
					Rule string `json:"rule"`
				} `json:"details"`
			} `json:"error"`
		}
		json.Unmarshal(ans.body, &e)
		o.rule = e.Error.Details.Rule
	}
	if ans.status != http.StatusOK && ans.status != http.StatusUnprocessableEntity {
		o.body = strings.TrimSpace(string(ans.body))
	}
}

// snapshot returns a copy of the orders, safe to read once the load is
// over.
func (l *load) snapshot() []order {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]order, len(l.orders))
	for i, o := range l.orders {
		out[i] = *o
	}
	return out
}

// summary describes the load's orders in one line.
func (l *load) summary() string {
	var buys, sells, retried, attempts int
	byStatus := map[int]int{}
	for _, o := range l.snapshot() {
		if o.side == "buy" {
			buys++
		} else {
			sells++
		}
		if o.attempts > 1 {
			retried++
		}
		attempts += o.attempts
		byStatus[o.status]++
	}
	var statuses []string
	for s, n := range byStatus {
		statuses = append(statuses, fmt.Sprintf("%d×%s", n, statusName(s)))
	}
	sort.Strings(statuses)
	return fmt.Sprintf("%d orders (%d buys, %d sells) in %d requests, %d retried; answers %s",
		buys+sells, buys, sells, attempts, retried, strings.Join(statuses, ", "))
}

// statusName returns the HTTP status code as text, "none" for 0.
func statusName(s int) string {
	if s == 0 {
		return "none"
	}
	return strconv.Itoa(s)
}
