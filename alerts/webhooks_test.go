package alerts_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
	"github.com/tradekit/tradekit/internal/testkit"
)

// receiver is a test webhook endpoint: it verifies each request's
// signature by recomputing the HMAC itself, and answers failFirst
// requests 503 before answering 204.
type receiver struct {
	*httptest.Server
	secret    string
	failFirst int

	mu       sync.Mutex
	requests int
	bodies   []map[string]any
	raw      []string // the accepted bodies as sent
	badSigs  int
	ids      []string
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	r := &receiver{failFirst: failFirst}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if !r.signed(req.Header.Get("Tradekit-Signature"), req.Header.Get("Tradekit-Delivery"), body) {
		r.badSigs++
	}
	r.ids = append(r.ids, req.Header.Get("Tradekit-Delivery"))
	if r.requests <= r.failFirst {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	r.bodies = append(r.bodies, m)
	r.raw = append(r.raw, string(body))
	w.WriteHeader(http.StatusNoContent)
}

// signed checks "t=<ts>,d=<id>,v1=<hex>" against
// HMAC-SHA256("<ts>.<id>.<body>"), independently of package webhook, and
// that id is the Tradekit-Delivery header's.
func (r *receiver) signed(header, delivery string, body []byte) bool {
	var ts, id, sig string
	for _, p := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "t":
			ts = v
		case "d":
			id = v
		case "v1":
			sig = v
		}
	}
	h := hmac.New(sha256.New, []byte(r.secret))
	h.Write([]byte(ts + "." + id + "." + string(body)))
	return ts != "" && id != "" && id == delivery && hmac.Equal([]byte(hex.EncodeToString(h.Sum(nil))), []byte(sig))
}

// mustWebhook creates a webhook of the fixture's user to r, which then
// checks signatures with its secret.
func (f *fixture) mustWebhook(t *testing.T, r *receiver) alerts.Webhook {
	t.Helper()
	w, err := f.svc.CreateWebhook(context.Background(), f.user, r.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.secret = w.Secret
	return w
}

// stats returns the requests received, the bad signatures and the bodies
// accepted.
func (r *receiver) stats() (int, int, []map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.badSigs, append([]map[string]any(nil), r.bodies...)
}

// deliverAll runs delivery passes until until holds, or fails after 10 s.
func deliverAll(t *testing.T, svc *alerts.Service, until func() bool) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() bool {
		if until() {
			return true
		}
		if _, err := svc.FanOut(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Deliver(context.Background()); err != nil {
			t.Fatal(err)
		}
		return false
	}, "the deliveries to finish")
}

func TestWebhookDeliveryOfAlert(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 5)
		var mu sync.Mutex
		var outcomes []string
		passes, firings := 0, 0
		f.svc = newService(db, alerts.Config{RetryBase: 50 * time.Millisecond, Observe: alerts.Observer{
			Evaluated: func(fired int, _ time.Duration) { mu.Lock(); passes, firings = passes+1, firings+fired; mu.Unlock() },
			Delivered: func(outcome string, _ time.Duration) { mu.Lock(); outcomes = append(outcomes, outcome); mu.Unlock() },
		}})
		rcv := newReceiver(t, 2) // two failures, then success
		w, err := f.svc.CreateWebhook(ctx, f.user, rcv.URL+"/hook")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(w.Secret, webhook.SecretPrefix) {
			t.Fatalf("secret %q", w.Secret)
		}
		rcv.secret = w.Secret
		if list, _ := f.svc.Webhooks(ctx, f.user); len(list) != 1 || list[0].Secret != "" {
			t.Fatalf("Webhooks shows %+v; the secret must not be shown again", list)
		}
		a, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "up", Condition: "close > 100", WebhookID: &w.ID, Once: true})
		if err != nil {
			t.Fatal(err)
		}
		f.save(t, 150)
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("%d firings, want 1", n)
		}
		deliverAll(t, f.svc, func() bool { _, _, b := rcv.stats(); return len(b) == 1 })
		reqs, bad, bodies := rcv.stats()
		if reqs != 3 || bad != 0 {
			t.Errorf("%d requests, %d with a bad signature; want 3 (2 failures, 1 success), 0", reqs, bad)
		}
		data, _ := bodies[0]["data"].(map[string]any)
		if bodies[0]["kind"] != "alert" || data["alertId"] != a.ID.String() || data["symbol"] != "ALRT" {
			t.Errorf("body %v", bodies[0])
		}
		if rcv.ids[0] != rcv.ids[2] {
			t.Errorf("retries carry delivery ids %v; want the same id", rcv.ids)
		}
		ds, total, err := f.svc.Deliveries(ctx, f.user, w.ID, 1, 20)
		if err != nil || total != 1 || ds[0].Status != alerts.Succeeded || ds[0].Attempts != 3 ||
			ds[0].ResponseStatus == nil || *ds[0].ResponseStatus != 204 || ds[0].LatencyMS == nil {
			t.Fatalf("Deliveries = %+v (%d), %v", ds, total, err)
		}
		if _, _, err := f.svc.Deliveries(ctx, uuid.New(), w.ID, 1, 20); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("another user's Deliveries = %v, want ErrNotFound", err)
		}
		// The observer saw the pass, its firing and each attempt.
		mu.Lock()
		defer mu.Unlock()
		if passes != 1 || firings != 1 {
			t.Errorf("observed %d passes with %d firings, want 1 and 1", passes, firings)
		}
		if want := []string{alerts.DeliveryRetry, alerts.DeliveryRetry, alerts.DeliverySucceeded}; !slices.Equal(outcomes, want) {
			t.Errorf("observed deliveries %v, want %v", outcomes, want)
		}
	})
}

// TestWebhookBodyNotHTMLEscaped checks that a webhook body keeps "<", ">"
// and "&" as they are, as the API's GET /notifications writes them, and
// that its data is the stored notification's, byte for byte: the API
// serves those bytes, so both show the same text (issue 40, point 16).
func TestWebhookBodyNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 5)
		rcv := newReceiver(t, 0)
		w := f.mustWebhook(t, rcv)
		if _, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "a<b> & c",
			Condition: "close > 100", WebhookID: &w.ID, Once: true}); err != nil {
			t.Fatal(err)
		}
		f.save(t, 150)
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("%d firings, want 1", n)
		}
		deliverAll(t, f.svc, func() bool { _, _, b := rcv.stats(); return len(b) == 1 })
		rcv.mu.Lock()
		body := rcv.raw[0]
		rcv.mu.Unlock()
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(body, esc) {
				t.Errorf("the body escapes HTML (%s): %s", esc, body)
			}
		}
		var n alerts.Notification
		if err := db.NewSelect().Model(&n).Where("user_id = ?", f.user).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"message":"Alert \"a<b> & c\": close > 100 held for ALRT`, `"data":` + n.Data + `,`} {
			if !strings.Contains(body, want) {
				t.Errorf("the body lacks %s:\n%s", want, body)
			}
		}
		if !strings.Contains(n.Data, `"condition":"close > 100"`) {
			t.Errorf("stored data %s, want the condition unescaped", n.Data)
		}
	})
}

// TestWebhookRetriesRunOut retries a delivery its receiver always
// refuses until RetryFor has passed, on a clock the test moves: each
// attempt is made when it is due and not before, with waits of 10, 20, 40
// and 80 s; the fifth, 150 s after the first, is the last, since the next
// wait (160 s) would end past RetryFor.
func TestWebhookRetriesRunOut(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	clock := testkit.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	f := newFixture(t, db, 5)
	f.svc = newService(db, alerts.Config{Now: clock.Now, RetryBase: 10 * time.Second, RetryFor: 150 * time.Second})
	rcv := newReceiver(t, 1000) // never succeeds
	w := f.mustWebhook(t, rcv)
	if _, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "up", Condition: "close > 100", Once: true}); err != nil {
		t.Fatal(err)
	}
	f.save(t, 150)
	if n := evaluate(t, f.svc); n != 1 {
		t.Fatalf("%d firings, want 1", n)
	}
	deliver := func() int {
		t.Helper()
		n, err := f.svc.Deliver(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	start := clock.Now()
	for i, at := range []time.Duration{0, 10 * time.Second, 30 * time.Second, 70 * time.Second, 150 * time.Second} {
		clock.Set(start.Add(at - time.Millisecond))
		if n := deliver(); n != 0 {
			t.Fatalf("attempt %d made before it was due (%v)", i+1, at)
		}
		clock.Set(start.Add(at))
		if n := deliver(); n != 1 {
			t.Fatalf("attempt %d at %v: %d attempts made, want 1", i+1, at, n)
		}
	}
	clock.Set(start.Add(time.Hour))
	if n := deliver(); n != 0 {
		t.Errorf("%d attempts after the retries ran out, want 0", n)
	}
	ds, _, err := f.svc.Deliveries(ctx, f.user, w.ID, 1, 20)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %+v, %v", ds, err)
	}
	reqs, bad, _ := rcv.stats()
	if d := ds[0]; d.Status != alerts.Failed || d.Attempts != 5 || reqs != 5 || bad != 0 || !strings.Contains(d.Error, "503") {
		t.Errorf("failed delivery: %+v; receiver saw %d requests, %d badly signed; want failed after 5 attempts", d, reqs, bad)
	}
}

func TestWebhookFanOutOfOtherNotifications(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	f := newFixture(t, db, 5)
	rcv := newReceiver(t, 0)
	w := f.mustWebhook(t, rcv)
	n := alerts.Notification{ID: uuid.New(), UserID: f.user, Kind: "leader_trade", Message: "a leader bought",
		Data: `{"symbol":"ALRT"}`, CreatedAt: time.Now().UTC()}
	if _, err := db.NewInsert().Model(&n).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	deliverAll(t, f.svc, func() bool { _, _, b := rcv.stats(); return len(b) == 1 })
	// A second fan-out finds nothing new.
	if k, err := f.svc.FanOut(ctx); err != nil || k != 0 {
		t.Errorf("FanOut again = %d, %v; want 0", k, err)
	}
	_, _, bodies := rcv.stats()
	if bodies[0]["kind"] != "leader_trade" || bodies[0]["id"] != n.ID.String() {
		t.Errorf("body %v", bodies[0])
	}
	if err := f.svc.DeleteWebhook(ctx, f.user, w.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteWebhook(ctx, f.user, w.ID); !errors.Is(err, tradekit.ErrNotFound) {
		t.Errorf("DeleteWebhook twice = %v, want ErrNotFound", err)
	}
}

func TestWebhookRefusesPrivateDestinations(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	f := newFixture(t, db, 1)
	svc := newService(db, alerts.Config{Transport: &webhook.Client{}})
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://localhost/x", "http://api.localhost./x", "http://10.1.2.3/", "http://192.168.0.1/",
		"http://169.254.169.254/latest/meta-data", "http://[::1]/", "http://[fd00::1]/", "http://100.64.0.1/", "http://[::ffff:127.0.0.1]/",
		"ftp://example.com/", "https://user:pw@example.com/", "not a url"} {
		_, err := svc.CreateWebhook(ctx, f.user, u)
		var pe *tradekit.ParamError
		if !errors.As(err, &pe) || pe.Param != "url" {
			t.Errorf("CreateWebhook(%q) = %v, want a ParamError naming url", u, err)
		}
	}
	// The dialler refuses too, whatever the URL was checked against.
	c := &webhook.Client{}
	rcv := newReceiver(t, 0)
	if _, err := c.Post(ctx, rcv.URL, nil, []byte("{}")); !errors.Is(err, webhook.ErrNotPublic) {
		t.Errorf("Post to loopback without AllowPrivate = %v, want ErrNotPublic", err)
	}
}

// specialPurpose are addresses of the IANA special-purpose registries
// that a filter of loopback, private and link-local ranges lets through;
// real deliveries reached several of them.
var specialPurpose = []struct{ url, addr string }{
	{"http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"}, // NAT64 of 169.254.169.254
	{"http://[2002:a9fe:a9fe::]/", "2002:a9fe:a9fe::"},     // 6to4 of 169.254.169.254
	{"http://198.18.0.1/", "198.18.0.1"},                   // benchmarking
	{"http://192.0.0.8/", "192.0.0.8"},                     // IETF protocol assignments
	{"http://240.0.0.1/", "240.0.0.1"},                     // reserved
	{"http://[fec0::1]/", "fec0::1"},                       // site-local
	{"http://0.0.0.1/", "0.0.0.1"},                         // "this network"
}

// TestWebhookRefusesSpecialPurposeAddresses checks each address at
// creation and at dial time: the refusal names serve
// --allow-private-webhooks and no address.
func TestWebhookRefusesSpecialPurposeAddresses(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	f := newFixture(t, db, 1)
	svc := newService(db, alerts.Config{Transport: &webhook.Client{}})
	c := &webhook.Client{Timeout: 2 * time.Second}
	for _, sp := range specialPurpose {
		_, err := svc.CreateWebhook(ctx, f.user, sp.url)
		var pe *tradekit.ParamError
		if !errors.As(err, &pe) || pe.Param != "url" || !strings.Contains(err.Error(), "serve --allow-private-webhooks") {
			t.Errorf("CreateWebhook(%q) = %v, want a ParamError naming url and serve --allow-private-webhooks", sp.url, err)
		}
		// At dial time (a name resolving to it would be checked so).
		_, err = c.Post(ctx, sp.url, nil, []byte("{}"))
		if !errors.Is(err, webhook.ErrNotPublic) || strings.Contains(err.Error(), sp.addr) {
			t.Errorf("Post(%q) = %v, want ErrNotPublic without the address", sp.url, err)
		}
		if webhook.Public(netip.MustParseAddr(sp.addr)) {
			t.Errorf("Public(%s) = true", sp.addr)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if !webhook.Public(netip.MustParseAddr(a)) {
			t.Errorf("Public(%s) = false, want true", a)
		}
	}
}

// TestWebhookCreationRevealsNoAddress checks that creating a webhook
// resolves no name, so it cannot be used to look up the server's internal
// names, and that a name resolving to a private address is refused at
// delivery time with an error, shown in the delivery log, that names
// neither the address nor a resolver.
func TestWebhookCreationRevealsNoAddress(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 5)
		f.svc = newService(db, alerts.Config{Transport: &webhook.Client{Timeout: 2 * time.Second}})
		// A name that does not resolve is accepted: creation looks no name up.
		w, err := f.svc.CreateWebhook(ctx, f.user, "http://vm.invalid/")
		if err != nil {
			t.Fatalf("CreateWebhook(http://vm.invalid/) = %v; names are not resolved at creation", err)
		}
		// A name that resolved publicly at creation and now resolves to
		// loopback (DNS rebinding): stored as creation would have.
		rcv := newReceiver(t, 0) // on 127.0.0.1
		rebound := alerts.Webhook{ID: uuid.New(), UserID: f.user, URL: strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1),
			Secret: webhook.NewSecret(), CreatedAt: time.Now().UTC()}
		if _, err := db.NewInsert().Model(&rebound).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		hooks := map[string]string{w.URL: w.ID.String(), rebound.URL: rebound.ID.String()}
		f.mustAlert(t, alerts.AlertInput{Name: "up", Condition: "close > 100", Once: true})
		f.save(t, 150)
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("%d firings, want 1", n)
		}
		if n, err := f.svc.Deliver(ctx); n != 2 || err != nil {
			t.Fatalf("Deliver = %d, %v; want 2 attempts", n, err)
		}
		if reqs, _, _ := rcv.stats(); reqs != 0 {
			t.Errorf("the loopback receiver got %d requests", reqs)
		}
		for u, id := range hooks {
			ds, _, err := f.svc.Deliveries(ctx, f.user, uuid.MustParse(id), 1, 1)
			if err != nil || len(ds) != 1 || ds[0].Status != alerts.Pending || ds[0].Error == "" {
				t.Fatalf("%s: deliveries %+v, %v; want one pending after a failed attempt", u, ds, err)
			}
			for _, leak := range []string{"127.0.0.1", "::1", ":53", "lookup", "dial tcp"} {
				if strings.Contains(ds[0].Error, leak) {
					t.Errorf("%s: the delivery's error %q shows %q", u, ds[0].Error, leak)
				}
			}
		}
	})
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"x"}`)
	const id = "5b0e7b4e-1c51-4a35-9f7e-2f1f0c9f3a10"
	sig := webhook.Sign("whsec_test", id, now, body)
	comma := strings.LastIndex(sig, ",")
	tests := []struct {
		name, secret, header string
		body                 []byte
		at                   time.Time
		tolerance            time.Duration
		ok                   bool
	}{
		{"valid", "whsec_test", sig, body, now, 5 * time.Minute, true},
		{"within tolerance", "whsec_test", sig, body, now.Add(4 * time.Minute), 5 * time.Minute, true},
		{"replayed late", "whsec_test", sig, body, now.Add(6 * time.Minute), 5 * time.Minute, false},
		{"tolerance 0: within the default", "whsec_test", sig, body, now.Add(4 * time.Minute), 0, true},
		{"tolerance 0: replayed a day later", "whsec_test", sig, body, now.Add(24 * time.Hour), 0, false},
		{"other secret", "whsec_other", sig, body, now, 0, false},
		{"body changed", "whsec_test", sig, []byte(`{"id":"y"}`), now, 0, false},
		{"delivery id changed", "whsec_test", strings.Replace(sig, id, "00000000-0000-0000-0000-000000000000", 1), body, now, 0, false},
		{"delivery id removed", "whsec_test", strings.Replace(sig, ",d="+id, "", 1), body, now, 0, false},
		{"no header", "whsec_test", "", body, now, 0, false},
		{"rotated: second v1 matches", "whsec_test", sig[:comma] + ",v1=00" + sig[comma:], body, now, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secret, tt.header, tt.body, tt.at, tt.tolerance)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, webhook.ErrSignature)) {
				t.Errorf("Verify = %v, want ok %v", err, tt.ok)
			}
		})
	}
	t.Run("VerifyRequest", func(t *testing.T) {
		h := http.Header{}
		h.Set(webhook.SignatureHeader, sig)
		h.Set(webhook.DeliveryHeader, id)
		if got, err := webhook.VerifyRequest("whsec_test", h, body, now, 0); got != id || err != nil {
			t.Errorf("VerifyRequest = %q, %v; want %q", got, err, id)
		}
		h.Set(webhook.DeliveryHeader, "another-delivery")
		if _, err := webhook.VerifyRequest("whsec_test", h, body, now, 0); !errors.Is(err, webhook.ErrSignature) {
			t.Errorf("VerifyRequest with a Tradekit-Delivery that is not the signed id = %v, want ErrSignature", err)
		}
	})
}

// TestWebhookSecretsSealed checks that the database never holds a
// webhook's signing secret in plaintext: a new webhook's is sealed, and
// those stored in plaintext before secrets were sealed are sealed by the
// first delivery that reads them or by SealSecrets, whichever comes
// first. Every table is searched for the secrets, and every delivery is
// signed with the plaintext secret, which the receiver checks.
func TestWebhookSecretsSealed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 5)
		fresh := newReceiver(t, 0)
		w := f.mustWebhook(t, fresh)
		if stored := mustStoredSecret(t, db, w.ID); !seal.IsSealed(stored) || strings.Contains(stored, w.Secret) {
			t.Errorf("new webhook: the database holds %q", stored)
		}
		// Two webhooks stored before secrets were sealed: one an alert
		// delivers to, one nothing delivers to.
		legacy := newReceiver(t, 0)
		legacy.secret = webhook.NewSecret()
		idle := webhook.NewSecret()
		old := []alerts.Webhook{
			{ID: uuid.New(), UserID: f.user, URL: legacy.URL, Secret: legacy.secret, CreatedAt: time.Now().UTC()},
			{ID: uuid.New(), UserID: f.user, URL: legacy.URL + "/idle", Secret: idle, CreatedAt: time.Now().UTC()},
		}
		if _, err := db.NewInsert().Model(&old).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, h := range []alerts.Webhook{w, old[0]} {
			f.mustAlert(t, alerts.AlertInput{Name: "up", Condition: "close > 100", WebhookID: &h.ID, Once: true})
		}
		f.save(t, 150)
		if n := evaluate(t, f.svc); n != 2 {
			t.Fatalf("%d firings, want 2", n)
		}
		if n, err := f.svc.Deliver(ctx); n != 2 || err != nil {
			t.Fatalf("Deliver = %d, %v; want 2 attempts", n, err)
		}
		for name, r := range map[string]*receiver{"new": fresh, "legacy": legacy} {
			if reqs, bad, bodies := r.stats(); reqs != 1 || bad != 0 || len(bodies) != 1 {
				t.Errorf("%s webhook: %d requests, %d badly signed, %d accepted; want 1, 0, 1", name, reqs, bad, len(bodies))
			}
		}
		if stored := mustStoredSecret(t, db, old[0].ID); !seal.IsSealed(stored) {
			t.Errorf("a delivery left the legacy secret in plaintext: %q", stored)
		}
		if n, err := f.svc.SealSecrets(ctx); n != 1 || err != nil {
			t.Errorf("SealSecrets = %d, %v; want 1 (the idle webhook's)", n, err)
		}
		if n, err := f.svc.SealSecrets(ctx); n != 0 || err != nil {
			t.Errorf("SealSecrets again = %d, %v; want 0", n, err)
		}
		for _, secret := range []string{w.Secret, legacy.secret, idle} {
			mustNotHold(t, db, secret)
		}

		// Without the key, no webhook is made, and a sealed secret is not
		// sent anywhere: the attempt fails and is retried.
		keyless := alerts.New(db, alerts.Config{Transport: &webhook.Client{AllowPrivate: true}})
		if _, err := keyless.CreateWebhook(ctx, f.user, fresh.URL); !errors.Is(err, tradekit.ErrUnavailable) {
			t.Errorf("CreateWebhook without a Sealer = %v, want ErrUnavailable", err)
		}
		other, _ := seal.New([]byte("another key, 32 bytes long......"))
		for name, svc := range map[string]*alerts.Service{"no key": keyless, "another key": newService(db, alerts.Config{Sealer: other})} {
			f.save(t, 151)
			f.mustAlert(t, alerts.AlertInput{Name: name, Condition: "close > 100", WebhookID: &w.ID, Once: true})
			f.save(t, 152)
			if n := evaluate(t, svc); n != 1 {
				t.Fatalf("%s: %d firings, want 1", name, n)
			}
			if n, err := svc.Deliver(ctx); n != 1 || err != nil {
				t.Fatalf("%s: Deliver = %d, %v; want 1 attempt", name, n, err)
			}
			if reqs, _, _ := fresh.stats(); reqs != 1 {
				t.Errorf("%s: the receiver saw %d requests, want still 1", name, reqs)
			}
			ds, _, err := f.svc.Deliveries(ctx, f.user, w.ID, 1, 1)
			if err != nil || ds[0].Status != alerts.Pending || ds[0].Attempts != 1 || !strings.Contains(ds[0].Error, "signing secret") {
				t.Errorf("%s: latest delivery %+v, %v; want pending after a failed attempt naming the secret", name, ds, err)
			}
		}
	})
}

// mustStoredSecret returns the secret column of the webhook id.
func mustStoredSecret(t *testing.T, db *bun.DB, id uuid.UUID) string {
	t.Helper()
	var s string
	if err := db.NewRaw("SELECT secret FROM webhooks WHERE id = ?", id).Scan(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// mustNotHold fails the test if any value of any table of db contains s.
func mustNotHold(t *testing.T, db *bun.DB, s string) {
	t.Helper()
	ctx := context.Background()
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if db.Dialect().Name() == dialect.PG {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	var tables []string
	if err := db.NewRaw(q).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables found: %v", len(tables), tables)
	}
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				var text string
				switch v := v.(type) {
				case []byte:
					text = string(v)
				case string:
					text = v
				}
				if strings.Contains(text, s) {
					t.Errorf("%s.%s holds the secret in plaintext", table, cols[i])
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
}
