package brokers

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

func TestGuardrailsPatchCheck(t *testing.T) {
	n := func(v int) *int { return &v }
	// Parsing stops at exponents of 10000; computing builds any.
	huge, big := decimal.New(1, -999999999), decimal.New(1, 999999999)
	tests := []struct {
		name      string
		in        GuardrailsPatch
		wantParam string // "" for no error
		wantMsg   string
	}{
		{"empty", GuardrailsPatch{}, "", ""},
		{"within bounds", GuardrailsPatch{MaxDailyTrades: n(1), MaxPositionSizePct: ptr("100"), MaxPortfolioRiskPct: ptr("0.0001"),
			AllowedAssetTypes: []string{"crypto", "stock", "crypto"}}, "", ""},
		{"trailing zeros are no places", GuardrailsPatch{MaxPositionSizePct: ptr("12.500000")}, "", ""},
		{"most trades", GuardrailsPatch{MaxDailyTrades: n(100000)}, "", ""},
		{"no trades", GuardrailsPatch{MaxDailyTrades: n(0)}, "maxDailyTrades", `must be an integer from 1 to 100000, got "0"`},
		{"too many trades", GuardrailsPatch{MaxDailyTrades: n(100001)}, "maxDailyTrades", `must be an integer from 1 to 100000, got "100001"`},
		{"zero percent", GuardrailsPatch{MaxPositionSizePct: ptr("0")}, "maxPositionSizePct", `must be a number above 0 and at most 100, got "0"`},
		{"negative", GuardrailsPatch{MaxPortfolioRiskPct: ptr("-1")}, "maxPortfolioRiskPct", `must be a number above 0 and at most 100, got "-1"`},
		{"above 100", GuardrailsPatch{MaxPositionSizePct: ptr("100.01")}, "maxPositionSizePct", `must be a number above 0 and at most 100, got "100.01"`},
		{"thousands", GuardrailsPatch{MaxPositionSizePct: ptr("2500")}, "maxPositionSizePct", `must be a number above 0 and at most 100, got "2500"`},
		{"five places", GuardrailsPatch{MaxPortfolioRiskPct: ptr("1.00001")}, "maxPortfolioRiskPct", `must have at most 4 decimal places, got "1.00001"`},
		{"a billion places", GuardrailsPatch{MaxPortfolioRiskPct: &huge}, "maxPortfolioRiskPct", `must have at most 4 decimal places, got "1e-999999999"`},
		{"a billion digits", GuardrailsPatch{MaxPortfolioRiskPct: &big}, "maxPortfolioRiskPct", `must be a number above 0 and at most 100, got "1e999999999"`},
		{"the first field first", GuardrailsPatch{MaxDailyTrades: n(0), MaxPositionSizePct: ptr("0")}, "maxDailyTrades", `must be an integer from 1 to 100000, got "0"`},
		{"unknown asset type", GuardrailsPatch{AllowedAssetTypes: []string{"stock", "bonds"}}, "allowedAssetTypes",
			`unknown asset type "bonds"; the types are stock, etf, fx, crypto, commodity`},
		{"no asset type", GuardrailsPatch{AllowedAssetTypes: []string{}}, "allowedAssetTypes",
			"give at least one asset type: stock, etf, fx, crypto, commodity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := tt.in.Check()
			if d := time.Since(start); d > time.Second {
				t.Errorf("Check() took %v", d)
			}
			if tt.wantParam == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			var pe *tradekit.ParamError
			if !errors.As(err, &pe) || !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("Check() = %v, want a *tradekit.ParamError wrapping ErrInvalid", err)
			}
			if pe.Param != tt.wantParam || pe.Msg != tt.wantMsg {
				t.Errorf("Check() = %s: %s\nwant %s: %s", pe.Param, pe.Msg, tt.wantParam, tt.wantMsg)
			}
		})
	}
}

func TestGuardrailsPatchApply(t *testing.T) {
	n, yes := 7, true
	g := DefaultGuardrails()
	GuardrailsPatch{}.Apply(&g)
	if diff := cmp.Diff(DefaultGuardrails(), g); diff != "" {
		t.Errorf("an empty patch changed the guardrails (-want +got):\n%s", diff)
	}
	if !(GuardrailsPatch{}).IsEmpty() || (GuardrailsPatch{AllowedAssetTypes: []string{}}).IsEmpty() {
		t.Error("IsEmpty: want true for no field and false for an empty, given list")
	}
	GuardrailsPatch{MaxDailyTrades: &n, MaxPortfolioRiskPct: ptr("2.5"), StopLossRequired: &yes,
		AllowedAssetTypes: []string{"crypto", "stock", "crypto"}}.Apply(&g)
	want := Guardrails{MaxDailyTrades: 7, MaxPositionSizePct: dec("20"), MaxPortfolioRiskPct: dec("2.5"), StopLossRequired: true,
		AllowedAssetTypes: []string{"stock", "crypto"}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
	}
}
