package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// mustDashboardTrader stores a pro-plan user with a password, signs them
// in with a new visitor, connects a paper account for them through the
// API and returns the visitor, the user's API key and the connection id.
func mustDashboardTrader(t *testing.T, ts tradingServer, db bun.IDB, email string) (v *visitor, key, conn string) {
	t.Helper()
	mustDashboardUser(t, db, email, false, email+" password")
	_, key, err := billing.NewStore(db).CreateKey(context.Background(), mustUserID(t, db, email), "dashboard test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn = connectPaper(t, ts, key)
	v = newVisitor(t, ts.url)
	v.signIn(email, email+" password")
	return v, key, conn
}

// asSentence is how the dashboard shows the API's error message msg:
// capitalised, with a full stop, and without the name of the parameter
// param ("param: what is wrong"), when not empty, whose field it is beside.
func asSentence(param, msg string) string {
	msg = strings.TrimPrefix(msg, param+": ")
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

// TestDashboardGuardrails covers the guardrails page over HTTP on both
// databases: the user's guardrails in the form; each field refused as
// the API refuses the same value, in the same words, beside the field,
// with every bad field reported at once; a refused form changes nothing;
// a good one is what the API then reads.
func TestDashboardGuardrails(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts := startTrading(t, db)
		v, key, _ := mustDashboardTrader(t, ts, db, "guarded@example.com")
		const path = "/dashboard/guardrails"

		_, _, page := v.do(path, nil)
		token := v.csrf(page)
		for _, want := range []string{`name="maxDailyTrades" type="text" inputmode="numeric" value="25"`,
			`name="maxPositionSizePct" type="text" inputmode="decimal" value="20"`, `name="maxPortfolioRiskPct" type="text" inputmode="decimal" value="10"`,
			`<input name="stopLossRequired" type="checkbox">`, "Last changed", `<a href="/dashboard/guardrails">Guardrails</a>`} {
			if !strings.Contains(page, want) {
				t.Errorf("the defaults' page lacks %s:\n%s", want, mainOf(page))
			}
		}
		if n := strings.Count(page, `name="allowedAssetTypes" type="checkbox"`); n != 5 || strings.Count(page, " checked>") != 5 {
			t.Errorf("%d asset type boxes, %d checked; want 5 of 5", n, strings.Count(page, " checked>"))
		}

		good := url.Values{"csrf": {token}, "maxDailyTrades": {"10"}, "maxPositionSizePct": {"12.5"}, "maxPortfolioRiskPct": {"2.25"},
			"stopLossRequired": {"on"}, "allowedAssetTypes": {"etf", "stock"}}
		with := func(field string, value ...string) url.Values {
			f := url.Values{}
			for k, v := range good {
				f[k] = v
			}
			f[field] = value
			return f
		}
		if s, _, _ := v.do(path, with("csrf")); s != http.StatusForbidden {
			t.Errorf("save without the form token: %d, want 403", s)
		}
		// Each bad value, also sent to the API: the same words, beside the
		// field.
		for _, c := range []struct{ field, value string }{
			{"maxDailyTrades", "0"}, {"maxDailyTrades", "2.5"}, {"maxDailyTrades", "abc"}, {"maxDailyTrades", "100001"},
			{"maxPositionSizePct", "0"}, {"maxPositionSizePct", "100.01"}, {"maxPositionSizePct", "abc"},
			{"maxPortfolioRiskPct", "-1"}, {"maxPortfolioRiskPct", "1.00001"}, {"allowedAssetTypes", "bonds"},
		} {
			api := ts.call(t, "PATCH", "/api/v1/brokers/guardrails?"+query(c.field, c.value), key)
			if api.status != http.StatusBadRequest {
				t.Fatalf("the API takes %s=%s: %s", c.field, c.value, api.raw)
			}
			want := `<p class="error" id="` + c.field + `-error">` + asSentence(c.field, api.errorMessage()) + `</p>`
			s, _, p := v.do(path, with(c.field, c.value))
			if p = html.UnescapeString(p); s != http.StatusBadRequest || !strings.Contains(p, want) || strings.Count(p, `class="error"`) != 1 {
				t.Errorf("%s=%s: %d, want 400 with only %s\n%s", c.field, c.value, s, want, mainOf(p))
			}
			if c.field != "allowedAssetTypes" && !strings.Contains(p, fmt.Sprintf(`id="%s" name="%s" type="text" inputmode=`, c.field, c.field)) {
				t.Errorf("%s=%s: no field %s", c.field, c.value, c.field)
			}
			if c.field != "allowedAssetTypes" && !regexp.MustCompile(`name="`+c.field+`"[^>]*value="`+regexp.QuoteMeta(c.value)+
				`" aria-describedby="`+c.field+`-hint `+c.field+`-error" aria-invalid="true">`).MatchString(p) {
				t.Errorf("%s=%s: the field does not keep the value, or is not marked invalid", c.field, c.value)
			}
		}
		// No asset type: a form can say so, the API cannot.
		s, _, p := v.do(path, with("allowedAssetTypes"))
		if s != http.StatusBadRequest || !strings.Contains(p, `<p class="error" id="allowedAssetTypes-error">Give at least one asset type: stock, etf, fx, crypto, commodity.</p>`) {
			t.Errorf("no asset type: %d\n%s", s, mainOf(p))
		}
		// Every bad field at once, the others kept as posted.
		bad := with("maxDailyTrades", "0")
		bad.Set("maxPortfolioRiskPct", "lots")
		bad.Del("stopLossRequired")
		s, _, p = v.do(path, bad)
		if s != http.StatusBadRequest || !strings.Contains(p, `id="maxDailyTrades-error"`) || !strings.Contains(p, `id="maxPortfolioRiskPct-error"`) ||
			!strings.Contains(p, `value="12.5"`) || !strings.Contains(p, `<input name="stopLossRequired" type="checkbox">`) ||
			!strings.Contains(p, `value="etf" checked>`) || strings.Contains(p, `value="fx" checked>`) {
			t.Errorf("two bad fields: %d\n%s", s, mainOf(p))
		}
		defaults := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t)
		if defaults["maxDailyTrades"] != 25.0 {
			t.Errorf("refused forms changed the guardrails: %v", defaults)
		}

		// A good form: saved, and what the API reads.
		s, h, _ := v.do(path, good)
		if s != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), path+"?notice=") {
			t.Fatalf("save: %d to %q", s, h.Get("Location"))
		}
		got := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t)
		delete(got, "updatedAt")
		want := map[string]any{"maxDailyTrades": 10.0, "maxPositionSizePct": 12.5, "maxPortfolioRiskPct": 2.25, "stopLossRequired": true,
			"allowedAssetTypes": []any{"stock", "etf"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the API after saving (-want +got):\n%s", diff)
		}
		_, _, page = v.do(h.Get("Location"), nil)
		if !strings.Contains(page, "Saved your guardrails") || !strings.Contains(page, `value="12.5"`) || !strings.Contains(page, `value="2.25"`) ||
			!strings.Contains(page, `<input name="stopLossRequired" type="checkbox" checked>`) || strings.Count(page, " checked>") != 3 {
			t.Errorf("the page after saving:\n%s", mainOf(page))
		}
		// An unchecked box turns its guardrail off.
		off := with("stopLossRequired")
		if s, _, _ := v.do(path, off); s != http.StatusSeeOther {
			t.Fatalf("save without the stop-loss box: %d", s)
		}
		if g := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t); g["stopLossRequired"] != false {
			t.Errorf("stopLossRequired after unchecking: %v", g["stopLossRequired"])
		}
	})
}
