package dashboard

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

// guardrailsData is the guardrails page's: its form's fields, filled
// with the user's guardrails or with what they posted.
type guardrailsData struct {
	Fields           []guardrailField
	StopLossRequired bool
	AssetTypes       []assetTypeBox
	UpdatedAt        time.Time // when the guardrails were last set; zero on a refused post
}

// guardrailField is a number field of the guardrails form, named as the
// API's parameter.
type guardrailField struct {
	Name, Label, Hint, Value string
	Mode                     string // the inputmode: numeric or decimal
}

// assetTypeBox is an asset type's checkbox.
type assetTypeBox struct {
	Type, Label string
	Checked     bool
}

// assetTypeLabels name the asset types of [brokers.AssetTypes] for people.
var assetTypeLabels = map[string]string{"stock": "Stocks", "etf": "ETFs", "fx": "Currencies (fx)",
	"crypto": "Crypto", "commodity": "Commodities"}

// newGuardrailsData returns the form's fields holding the texts
// maxDailyTrades, maxPositionSizePct and maxPortfolioRiskPct, the box
// stopLoss, and the asset types allowed.
func newGuardrailsData(maxDailyTrades, maxPositionSizePct, maxPortfolioRiskPct string, stopLoss bool, allowed []string) guardrailsData {
	d := guardrailsData{StopLossRequired: stopLoss, Fields: []guardrailField{
		{"maxDailyTrades", "Most orders a day", fmt.Sprintf("Orders accepted in a UTC day, from 1 to %d.", brokers.MaxDailyTradesLimit), maxDailyTrades, "numeric"},
		{"maxPositionSizePct", "Largest position, % of equity", "One position's value after an order.", maxPositionSizePct, "decimal"},
		{"maxPortfolioRiskPct", "Most at risk, % of equity", "What the portfolio loses if every position and the order hit their stop-loss.", maxPortfolioRiskPct, "decimal"},
	}}
	for _, t := range brokers.AssetTypes() {
		d.AssetTypes = append(d.AssetTypes, assetTypeBox{Type: t, Label: assetTypeLabels[t], Checked: slices.Contains(allowed, t)})
	}
	return d
}

// guardrailsPage shows the user's guardrails in their form.
func (h *Handler) guardrailsPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		g, at, err := h.cfg.Brokers.Guardrails(r.Context(), v.u.ID)
		if err != nil {
			h.fail(w, err)
			return
		}
		d := newGuardrailsData(strconv.Itoa(g.MaxDailyTrades), g.MaxPositionSizePct.String(), g.MaxPortfolioRiskPct.String(),
			g.StopLossRequired, g.AllowedAssetTypes)
		d.UpdatedAt = at
		h.show(v, http.StatusOK, "guardrails", "Guardrails", page{Notice: notice(r), Data: d})
	})
}

// saveGuardrails sets the user's guardrails to the form's, every field
// checked by [brokers.GuardrailsPatch.Check] as the API checks its
// parameters; errors show beside their fields.
func (h *Handler) saveGuardrails(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		p, errs := readGuardrails(r)
		if len(errs) == 0 {
			_, _, err := h.cfg.Brokers.PatchGuardrails(r.Context(), v.u.ID, p.Apply)
			var ok bool
			if errs, ok = formErrors(err); !ok && err != nil {
				h.fail(w, err)
				return
			}
		}
		if len(errs) > 0 {
			f := r.PostForm
			d := newGuardrailsData(f.Get("maxDailyTrades"), f.Get("maxPositionSizePct"), f.Get("maxPortfolioRiskPct"),
				p.StopLossRequired != nil && *p.StopLossRequired, f["allowedAssetTypes"])
			h.show(v, http.StatusBadRequest, "guardrails", "Guardrails", page{Errors: errs, Data: d})
			return
		}
		back(v, "/dashboard/guardrails", noticeGuardrailsSaved)
	})
}

// readGuardrails reads the guardrails form into a patch of every field,
// and returns the errors of the fields that do not parse or are out of
// bounds, each field's own, worded as the API words them.
func readGuardrails(r *http.Request) (brokers.GuardrailsPatch, map[string]string) {
	errs := map[string]string{}
	stop := r.PostFormValue("stopLossRequired") == "on"
	p := brokers.GuardrailsPatch{StopLossRequired: &stop, AllowedAssetTypes: append([]string{}, r.PostForm["allowedAssetTypes"]...)}
	s := strings.TrimSpace(r.PostFormValue("maxDailyTrades"))
	if n, err := strconv.Atoi(s); err != nil {
		// The API's words for a parameter that does not parse.
		errs["maxDailyTrades"] = sentence(fmt.Sprintf("must be an integer from 1 to %d, got %s", brokers.MaxDailyTradesLimit, tradekit.Quote(s)))
	} else {
		p.MaxDailyTrades = &n
	}
	for _, f := range []struct {
		name string
		to   **decimal.Decimal
	}{{"maxPositionSizePct", &p.MaxPositionSizePct}, {"maxPortfolioRiskPct", &p.MaxPortfolioRiskPct}} {
		s := strings.TrimSpace(r.PostFormValue(f.name))
		d, err := decimal.NewFromString(s)
		if err != nil {
			errs[f.name] = sentence("must be a number above 0 and at most 100, got " + tradekit.Quote(s))
			continue
		}
		*f.to = &d
	}
	// Each field on its own, so that every field's error shows.
	for _, one := range []brokers.GuardrailsPatch{{MaxDailyTrades: p.MaxDailyTrades}, {MaxPositionSizePct: p.MaxPositionSizePct},
		{MaxPortfolioRiskPct: p.MaxPortfolioRiskPct}, {AllowedAssetTypes: p.AllowedAssetTypes}} {
		if e, ok := formErrors(one.Check()); ok {
			maps.Copy(errs, e)
		}
	}
	return p, errs
}
