package brokers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

// TestCheckRuleOrder checks that Check runs every rule of its table once,
// in the order Result.Rules documents.
func TestCheckRuleOrder(t *testing.T) {
	o := Order{Symbol: "ACME", AssetType: "stock", Side: Buy, Type: Market, Quantity: decimal.New(1, 0)}
	r, err := Check(o, DefaultGuardrails(), Context{Price: decimal.New(10, 0), Equity: decimal.New(1000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rc := range r.Rules {
		got = append(got, rc.Rule)
	}
	want := []string{RuleMaxDailyTrades, RuleMaxPositionSizePct, RuleMaxPortfolioRiskPct,
		RuleStopLossRequired, RuleAllowedAssetTypes, RuleHeldQuantity}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check rules mismatch (-want +got):\n%s", diff)
	}
}
