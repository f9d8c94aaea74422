package paper

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
// spent: the refused request is not counted. The count is one upsert,
// exact across every Broker on the database. The error wraps
// [tradekit.ErrUnauthorized] for an unread account whose token is not
// valid.
func (b *Broker) takeRequest(ctx context.Context, w http.ResponseWriter, a account) error {
	if b.rateLimit < 0 {
		return nil
	}
	now := b.clock()
	start := now.Truncate(rateWindow)
	var counts []int
	var err error
	const upsert = ` ON CONFLICT (account_id) DO UPDATE SET
		count = CASE WHEN paper_request_counts.window_start = excluded.window_start THEN paper_request_counts.count + 1 ELSE 1 END,
		window_start = excluded.window_start
		WHERE paper_request_counts.window_start <> excluded.window_start OR paper_request_counts.count < ?
		RETURNING count`
	if a.token == "" {
		err = b.db.NewRaw(`INSERT INTO paper_request_counts (account_id, window_start, count) VALUES (?, ?, 1)`+upsert,
			a.ID, start.Unix(), b.rateLimit).Scan(ctx, &counts)
	} else {
		err = b.db.NewRaw(`INSERT INTO paper_request_counts (account_id, window_start, count)
			SELECT account_id, ?, 1 FROM paper_tokens WHERE token_hash = ? AND kind = ? AND revoked_at IS NULL AND expires_at > ?`+upsert,
			start.Unix(), a.token, kindAccess, now, b.rateLimit).Scan(ctx, &counts)
	}
	if err != nil {
		return fmt.Errorf("paper: count a request: %w", err)
	}
	reset := start.Add(rateWindow)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.rateLimit))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if len(counts) == 1 {
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(b.rateLimit-counts[0], 0)))
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
	return "token " + hashSecret(tok)
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
