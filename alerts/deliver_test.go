package alerts_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// stall is a webhook receiver that never answers: each request waits
// until the test releases them or the sender gives up. It counts the
// requests in flight, the most seen at once, and all.
type stall struct {
	*httptest.Server
	release chan struct{}

	mu                  sync.Mutex
	now, peak, requests int
}

func newStall(t *testing.T) *stall {
	s := &stall{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.now++
		s.requests++
		s.peak = max(s.peak, s.now)
		s.mu.Unlock()
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(func() { s.Release(); s.Close() })
	return s
}

// Release answers every request, now and later.
func (s *stall) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// counts returns the requests in flight, the most seen at once, and all.
func (s *stall) counts() (now, peak, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now, s.peak, s.requests
}

// mustUser returns a new user on the plan.
func mustUser(t *testing.T, db *bun.DB, plan string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	bs := billing.NewStore(db)
	p, err := bs.Plan(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: uuid.NewString() + "@example.com", Name: "Test", PlanID: p.ID}
	if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// mustNotify writes n notifications of kind leader_trade for the user,
// created at, which FanOut delivers to each of the user's webhooks.
func mustNotify(t *testing.T, db *bun.DB, user uuid.UUID, n int, at time.Time) {
	t.Helper()
	ns := make([]alerts.Notification, n)
	for i := range ns {
		ns[i] = alerts.Notification{ID: uuid.New(), UserID: user, Kind: "leader_trade", Message: "a leader bought",
			Data: `{"n":` + strconv.Itoa(i) + `}`, CreatedAt: at.UTC()}
	}
	if _, err := db.NewInsert().Model(&ns).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// mustFanOut runs FanOut until it finds nothing new.
func mustFanOut(t *testing.T, svc *alerts.Service) {
	t.Helper()
	for {
		n, err := svc.FanOut(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// TestDeliveryAtMostTwoPerWebhook checks that a webhook never has more
// than two attempts in flight, whatever is due and however many
// instances deliver: a second Service finds nothing to claim while the
// first one's two attempts hang.
func TestDeliveryAtMostTwoPerWebhook(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 1)
		st := newStall(t)
		if _, err := f.svc.CreateWebhook(ctx, f.user, st.URL); err != nil {
			t.Fatal(err)
		}
		mustNotify(t, db, f.user, 6, time.Now())
		mustFanOut(t, f.svc)
		done := make(chan int)
		go func() {
			n, err := f.svc.Deliver(ctx)
			if err != nil {
				t.Error(err)
			}
			done <- n
		}()
		testkit.Eventually(t, 5*time.Second, func() bool { now, _, _ := st.counts(); return now == 2 },
			"the first instance to start two attempts")
		other := newService(db, alerts.Config{})
		if n, err := other.Deliver(ctx); n != 0 || err != nil {
			t.Errorf("a second instance's Deliver = %d, %v while two attempts hang; want 0", n, err)
		}
		st.Release()
		if n := <-done; n != 2 {
			t.Errorf("Deliver made %d attempts, want 2 (the bound of one webhook)", n)
		}
		if _, peak, total := st.counts(); peak != 2 || total != 2 {
			t.Errorf("the receiver saw %d requests, at most %d at once; want 2 and 2", total, peak)
		}
	})
}

// TestDeliveryFairAcrossAccounts gives one account 50 due deliveries to
// ten webhooks that never answer, due before another account's single
// delivery: the other account's is sent at once, in the same round, and
// the first account holds at most DeliverPerAccount slots.
func TestDeliveryFairAcrossAccounts(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 1) // the victim
		victim := newReceiver(t, 0)
		f.mustWebhook(t, victim)
		attacker := mustUser(t, db, "free")
		st := newStall(t)
		for i := range 10 {
			if _, err := f.svc.CreateWebhook(ctx, attacker, st.URL+"/"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		mustNotify(t, db, attacker, 5, time.Now())
		mustFanOut(t, f.svc)
		// Not a wait: the victim's notification is stamped after the
		// attacker's, so that its delivery is due last.
		time.Sleep(10 * time.Millisecond)
		mustNotify(t, db, f.user, 1, time.Now())
		mustFanOut(t, f.svc)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := f.svc.Deliver(ctx); err != nil {
				t.Error(err)
			}
		}()
		// Poll, not Eventually: the stalled attempts must be released
		// whatever happens.
		if testkit.Poll(5*time.Second, func() bool { _, _, b := victim.stats(); return len(b) == 1 }) != nil {
			t.Error("the victim's delivery waited behind the attacker's hanging ones")
		}
		now, _, _ := st.counts()
		st.Release()
		<-done
		if now > 4 {
			t.Errorf("the attacker held %d slots, want at most DeliverPerAccount (4)", now)
		}
	})
}

// leaseTransport is a Transport that checks, at each request, that the
// delivery's lease still has a full deliveryLease (a minute) to run,
// then moves the clock on by more than a lease, as a slow pass would.
type leaseTransport struct {
	db    *bun.DB
	clock *testkit.Clock

	mu    sync.Mutex
	short []string // "<delivery id>: <time left>"
	sent  []string
}

func (lt *leaseTransport) CheckURL(context.Context, string) error { return nil }

func (lt *leaseTransport) Post(ctx context.Context, _ string, h map[string]string, _ []byte) (int, error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	id := h["Tradekit-Delivery"]
	var until time.Time
	if err := lt.db.NewRaw("SELECT lease_until FROM webhook_deliveries WHERE id = ?", id).Scan(ctx, &until); err != nil {
		return 0, err
	}
	if left := until.Sub(lt.clock.Now()); left < 59*time.Second {
		lt.short = append(lt.short, id+": "+left.String())
	}
	lt.sent = append(lt.sent, id)
	lt.clock.Set(lt.clock.Now().Add(61 * time.Second))
	return http.StatusNoContent, nil
}

// TestDeliveryLeaseFromClaim runs the delivery loop with one slot on a
// clock that each request moves on by 61 s: every attempt must start
// with its lease a full minute from its end, since a lease runs from its
// claim, not from the start of a pass; otherwise another instance could
// send it again while it is being sent.
func TestDeliveryLeaseFromClaim(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, 1)
		clock := testkit.NewClock(time.Now().UTC())
		lt := &leaseTransport{db: db, clock: clock}
		f.svc = newService(db, alerts.Config{Now: clock.Now, Transport: lt, DeliverConcurrency: 1, DeliverEvery: time.Hour})
		for i := range 3 {
			if _, err := f.svc.CreateWebhook(context.Background(), f.user, "https://example.com/"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		mustNotify(t, db, f.user, 2, clock.Now())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { f.svc.Run(ctx); close(done) }()
		ok := testkit.Poll(10*time.Second, func() bool { lt.mu.Lock(); defer lt.mu.Unlock(); return len(lt.sent) >= 6 }) == nil
		cancel()
		<-done
		lt.mu.Lock()
		defer lt.mu.Unlock()
		if !ok {
			t.Fatalf("%d of 6 deliveries sent", len(lt.sent))
		}
		if len(lt.short) > 0 {
			t.Errorf("attempts started with less than a minute of lease left: %v", lt.short)
		}
		if slices.Sort(lt.sent); len(slices.Compact(lt.sent)) != 6 {
			t.Errorf("sent %v; want 6 distinct deliveries", lt.sent)
		}
	})
}

// TestWebhookBackoffAndDisable follows a webhook that always fails on a
// clock the test moves: after each failure, nothing is sent to it until
// its pause (10 s, 20 s, 40 s, then 40 s: RetryMax) has passed, whichever
// of its deliveries is due; after DisableAfter of failures without a
// break it is disabled, its pending deliveries are cancelled, its owner
// gets a notification (delivered to the owner's other webhook), and no
// new delivery is made to it. A webhook that answers after a failure is
// no longer paused.
func TestWebhookBackoffAndDisable(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 1)
		clock := testkit.NewClock(time.Now().UTC().Truncate(time.Second))
		f.svc = newService(db, alerts.Config{Now: clock.Now, RetryBase: 10 * time.Second, RetryMax: 40 * time.Second,
			DisableAfter: 10 * time.Minute})
		failing, healthy, flaky := newReceiver(t, 1<<30), newReceiver(t, 0), newReceiver(t, 1)
		hook := f.mustWebhook(t, failing)
		f.mustWebhook(t, healthy)
		f.mustWebhook(t, flaky)
		start := clock.Now()
		mustNotify(t, db, f.user, 3, start)
		mustFanOut(t, f.svc)
		deliver := func() {
			t.Helper()
			if _, err := f.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// Step a second at a time; note when the failing webhook is tried.
		var tried []time.Duration
		seen := 0
		for at := time.Duration(0); at <= 11*time.Minute; at += time.Second {
			clock.Set(start.Add(at))
			deliver()
			if reqs, _, _ := failing.stats(); reqs > seen {
				tried = append(tried, at)
				seen = reqs
			}
		}
		var gaps []time.Duration
		for i := 1; i < len(tried); i++ {
			gaps = append(gaps, tried[i]-tried[i-1])
		}
		want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}
		if len(gaps) < 4 || !slices.Equal(gaps[:3], want) || slices.ContainsFunc(gaps[3:], func(g time.Duration) bool { return g != 40*time.Second }) {
			t.Errorf("the failing webhook was tried after waits of %v; want %v, then 40s each", gaps, want)
		}
		if last := tried[len(tried)-1]; last < 10*time.Minute-40*time.Second || last > 10*time.Minute+40*time.Second {
			t.Errorf("last try at %v; want it disabled about 10m after the first failure", last)
		}
		var w alerts.Webhook
		if err := db.NewSelect().Model(&w).Where("id = ?", hook.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if w.DisabledAt == nil {
			t.Fatalf("webhook %+v not disabled after 11 minutes of failures", w)
		}
		if n := countRows(t, db, "webhook_deliveries", "webhook_id = ? AND status = ?", hook.ID, alerts.Pending); n != 0 {
			t.Errorf("%d deliveries to the disabled webhook still pending", n)
		}
		if n := countRows(t, db, "notifications", "user_id = ? AND kind = ?", f.user, alerts.KindWebhookDisabled); n != 1 {
			t.Errorf("%d webhook_disabled notifications, want 1", n)
		}
		// The notice reaches the owner's other webhooks; nothing new goes
		// to the disabled one.
		mustNotify(t, db, f.user, 1, clock.Now())
		mustFanOut(t, f.svc)
		deliver()
		if n := countRows(t, db, "webhook_deliveries", "webhook_id = ? AND status = ?", hook.ID, alerts.Pending); n != 0 {
			t.Errorf("%d new deliveries to the disabled webhook", n)
		}
		_, _, bodies := healthy.stats()
		if !slices.ContainsFunc(bodies, func(b map[string]any) bool { return b["kind"] == alerts.KindWebhookDisabled }) {
			t.Errorf("the healthy webhook got no %s notification: %v", alerts.KindWebhookDisabled, bodies)
		}
		// The flaky one failed once, then answered: it is not paused and
		// counts no failure.
		var fl alerts.Webhook
		if err := db.NewSelect().Model(&fl).Where("url = ?", flaky.URL).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if fl.Failures != 0 || fl.FailingSince != nil || fl.PausedUntil != nil || fl.DisabledAt != nil {
			t.Errorf("flaky webhook after answering: %+v; want no failures, no pause", fl)
		}
	})
}

// TestWebhookDeliveryUnderAttack measures how long after an import
// another account's delivery arrives while a free account's ten webhooks
// never answer and its five alerts (once=false) fire on every import, on
// both databases, with the production defaults (10 s per request, 16
// slots, 4 per account). It is a measured run, not a test of the normal
// suite: set TRADEKIT_MEASURE_WEBHOOKS=1.
//
//	TRADEKIT_MEASURE_WEBHOOKS=1 go test ./alerts -run TestWebhookDeliveryUnderAttack -v
func TestWebhookDeliveryUnderAttack(t *testing.T) {
	if os.Getenv("TRADEKIT_MEASURE_WEBHOOKS") == "" {
		t.Skip("a measured run: set TRADEKIT_MEASURE_WEBHOOKS=1")
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 5)
		f.svc = newService(db, alerts.Config{Transport: &webhook.Client{AllowPrivate: true}}) // 10 s per request
		victim := newReceiver(t, 0)
		f.mustWebhook(t, victim)
		f.mustAlert(t, alerts.AlertInput{Name: "victim", Condition: "close > 0"})
		attacker := mustUser(t, db, "free")
		st := newStall(t)
		for i := range 10 {
			if _, err := f.svc.CreateWebhook(ctx, attacker, st.URL+"/"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			if _, err := f.svc.CreateAlert(ctx, attacker, alerts.AlertInput{AssetID: f.asset, Name: "a" + strconv.Itoa(i), Condition: "close > 0"}); err != nil {
				t.Fatal(err)
			}
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { f.svc.Run(runCtx); close(done) }()
		defer func() { cancel(); st.Release(); <-done }()
		var lat []time.Duration
		for i := range 20 {
			start := time.Now()
			f.save(t, 200+float64(i))
			f.svc.Wake()
			testkit.Eventually(t, 60*time.Second, func() bool { _, _, b := victim.stats(); return len(b) == i+1 },
				"import %d: the victim's delivery", i+1)
			lat = append(lat, time.Since(start))
			time.Sleep(500 * time.Millisecond) // not a wait: the imports come half a second apart
		}
		_, peak, total := st.counts()
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[(len(lat)*99+99)/100-1]
		t.Logf("%s: victim's delivery after an import over 20 imports: p50 %v, p99 %v, max %v; attacker: %d requests, at most %d at once",
			db.Dialect().Name(), p50.Round(time.Millisecond), p99.Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), total, peak)
		if p99 > 5*time.Second {
			t.Errorf("p99 %v, want at most 5 s", p99)
		}
	})
}
