package paper

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The bounds that keep one paper account from hurting the others, as
// Alpaca bounds its accounts: requests a minute per account
// (Config.RateLimit), open orders per account (Config.MaxOpenOrders, see
// [Broker.Place]) and concurrent trade-update streams per credential
// (Config.MaxStreams).

// rateWindow is the window of the rate limit: UTC clock minutes.
const rateWindow = time.Minute

// Alpaca's answer to a request over the rate limit.
const (
	codeRateLimited = 42910000
	msgRateLimited  = "rate limit exceeded"
)

// errRateLimited is the 429 of a request over the rate limit.
var errRateLimited = &apiError{http.StatusTooManyRequests, codeRateLimited, msgRateLimited}

// takeRequest counts a request of the account a (named by its access
// token when [Broker.authenticateLater] left it unread) against the rate
// limit, sets Alpaca's headers X-RateLimit-Limit, X-RateLimit-Remaining
// and X-RateLimit-Reset (Unix seconds), and returns errRateLimited, with
// Retry-After set, when the account's requests of the current minute are
// spent: the refused request is not counted. The error wraps
// [tradekit.ErrUnauthorized] for an unread account whose token is not
// valid.
//
// Requests are counted in the database, exact across every Broker on it,
// but not one round trip each: as billing's limiter does for the API, a
// Broker counts several requests of a credential at once when the
// minute has room for them (its lease: at most 64, and at most 1/16 of
// what is left, so close to the limit one at a time), and lets the next
// ones through from memory. So no more than the limit ever pass, and an
// account that makes a request every few milliseconds costs a round trip
// every dozen or so; the price is that a lease's unused requests are
// lost when the minute ends, and X-RateLimit-Remaining is this Broker's
// view. A refusal is remembered until the minute ends.
func (b *Broker) takeRequest(ctx context.Context, w http.ResponseWriter, a account) error {
	if b.rateLimit < 0 {
		return nil
	}
	now := b.clock()
	start := now.Truncate(rateWindow)
	l := b.leases.of(a, start)
	defer l.mu.Unlock()
	reset := start.Add(rateWindow)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.rateLimit))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if l.tokens == 0 && !l.refused {
		n := max(1, min(maxLease, (b.rateLimit-l.counted)/leaseShare))
		counted, ok, err := b.countRequests(ctx, a, start, now, n)
		if err == nil && !ok && n > 1 {
			n = 1
			counted, ok, err = b.countRequests(ctx, a, start, now, n)
		}
		if err != nil {
			return err
		}
		if ok {
			l.tokens, l.counted = n, counted
		} else {
			l.refused = true
		}
	}
	if l.tokens > 0 {
		l.tokens--
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(b.rateLimit-l.counted+l.tokens, 0)))
		return nil
	}
	if a.token != "" {
		if _, err := b.resolve(ctx, a); err != nil {
			h.Del("X-RateLimit-Limit")
			h.Del("X-RateLimit-Reset")
			return err // no such token: a 401, not a 429
		}
	}
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("Retry-After", strconv.Itoa(int(reset.Sub(now).Seconds()+0.999)))
	return errRateLimited
}

// The leases of [Broker.takeRequest]: at most maxLease requests, and at
// most 1/leaseShare of what the minute has left.
const (
	maxLease   = 64
	leaseShare = 16
)

// countRequests counts n requests of the account a in the minute that
// starts at start, unless that would pass the limit, and reports the
// minute's count after it and whether it counted them: one upsert.
func (b *Broker) countRequests(ctx context.Context, a account, start, now time.Time, n int) (int, bool, error) {
	const upsert = ` ON CONFLICT (account_id) DO UPDATE SET
		count = CASE WHEN paper_request_counts.window_start = excluded.window_start THEN paper_request_counts.count + excluded.count ELSE excluded.count END,
		window_start = excluded.window_start
		WHERE paper_request_counts.window_start <> excluded.window_start OR paper_request_counts.count + excluded.count <= ?
		RETURNING count`
	var counts []int
	var err error
	if a.token == "" {
		err = b.db.NewRaw(`INSERT INTO paper_request_counts (account_id, window_start, count) VALUES (?, ?, ?)`+upsert,
			a.ID, start.Unix(), n, b.rateLimit).Scan(ctx, &counts)
	} else {
		err = b.db.NewRaw(`INSERT INTO paper_request_counts (account_id, window_start, count)
			SELECT account_id, ?, ? FROM paper_tokens WHERE token_hash = ? AND kind = ? AND revoked_at IS NULL AND expires_at > ?`+upsert,
			start.Unix(), n, a.token, TokenAccess, now, b.rateLimit).Scan(ctx, &counts)
	}
	if err != nil {
		return 0, false, fmt.Errorf("paper: count a request: %w", err)
	}
	if len(counts) != 1 {
		return 0, false, nil
	}
	return counts[0], true, nil
}

// rateLeases are a Broker's leases of counted requests, by credential:
// an account's id, or an access token's hash.
type rateLeases struct {
	mu     sync.Mutex
	minute time.Time // of every lease held; older ones are dropped
	byKey  map[string]*rateLease
}

// rateLease is one credential's requests of the current minute: counted
// in the database and not used yet (tokens), the minute's count there
// after the last count, and whether the limit refused it.
type rateLease struct {
	mu      sync.Mutex
	tokens  int
	counted int
	refused bool
}

// of returns the lease of a's credential in the minute that starts at
// start, locked: the caller unlocks it.
func (ls *rateLeases) of(a account, start time.Time) *rateLease {
	key := a.token
	if key == "" {
		key = a.ID.String()
	}
	ls.mu.Lock()
	if !ls.minute.Equal(start) {
		ls.minute, ls.byKey = start, map[string]*rateLease{}
	}
	l := ls.byKey[key]
	if l == nil {
		l = &rateLease{}
		ls.byKey[key] = l
	}
	ls.mu.Unlock()
	l.mu.Lock()
	return l
}

// errTooManyStreams is the 429 of a trade-update stream over the limit of
// its credential.
func (b *Broker) errTooManyStreams() error {
	return &apiError{http.StatusTooManyRequests, codeRateLimited,
		fmt.Sprintf("too many trade-update streams: at most %d at once per API key or access token", b.maxStreams)}
}

// credential names the credential of an authenticated request for the
// stream limit: its API key id, or the hash of its access token.
func credential(r *http.Request) string {
	if hasKeyHeaders(r) {
		return "key " + r.Header.Get(keyIDHeader)
	}
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return "token " + HashSecret(tok)
}

// openStream takes one of the cred's stream slots and returns the
// function that frees it, or false when all Config.MaxStreams are taken.
// The slots are counted in this Broker's process.
func (b *Broker) openStream(cred string) (release func(), ok bool) {
	b.streamsMu.Lock()
	defer b.streamsMu.Unlock()
	if b.streams[cred] >= b.maxStreams {
		return nil, false
	}
	b.streams[cred]++
	return func() {
		b.streamsMu.Lock()
		defer b.streamsMu.Unlock()
		if b.streams[cred]--; b.streams[cred] <= 0 {
			delete(b.streams, cred)
		}
	}, true
}
