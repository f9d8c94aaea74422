package formula

import (
	"errors"
	"strings"
	"testing"

	"github.com/tradekit/tradekit"
)

// costTests are formulas with their cost counted by hand from the rule of
// Expr.Cost.
var costTests = []struct {
	src  string
	want int
}{
	{"1", 1},
	{"2 * 10 + 1", 1}, // folded
	{"close", 1},
	{"close > 130", 3},
	{"close > sma(close, 50)", 5},
	{"sma(close, 2*100)", 3},                // the folded length counts 1; sma's window does not
	{"cci(20) > 100", 1 + (1 + 20 + 1) + 1}, // cci scans its window; its length is a node
	{"willr(14)", 1 + 14 + 1},
	{"highest(high, 20)[1]", 1 + (1 + 20 + 1 + 1) + 1}, // [1]: the index node and its constant
	{"lowest(low, 5)", 1 + 5 + 1 + 1},
	{"stoch_k()", 15}, // fastk 14 by default
	{"stoch_d(5, 3, 3)", 1 + 5 + 3},
	{"(close - sma(close, 20)) / stddev(close, 20) < -2", 1 + 1 + 1 + 1 + 3 + 3 + 1},
	{"crossover(sma(close, 50), sma(close, 200))", 1 + 3 + 3},
	{strings.Repeat("cci(500)+", 98) + "cci(500) > 0", 99*502 + 98 + 1 + 1},
}

func TestCost(t *testing.T) {
	for _, tt := range costTests {
		e := mustParse(t, tt.src)
		if got := e.Cost(); got != tt.want {
			t.Errorf("Parse(%q).Cost() = %d, want %d", tt.src, got, tt.want)
		}
	}
}

func TestCheckCost(t *testing.T) {
	e := mustParse(t, "cci(20) > 100") // costs 24
	for _, tt := range []struct {
		max  int
		want string
	}{
		{0, ""}, {-1, ""}, {24, ""}, {1000, ""},
		{23, "costs 24, the plan allows 23"},
		{1, "costs 24, the plan allows 1"},
	} {
		err := e.CheckCost(tt.max)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckCost(%d) = %v, want nil", tt.max, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("CheckCost(%d) = %v, want %q", tt.max, err, tt.want)
		case tt.want != "":
			var ce *CostError
			if !errors.As(err, &ce) || ce.Cost != 24 || ce.Max != tt.max || !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("CheckCost(%d) = %#v, want a *CostError{24, %d} wrapping ErrInvalid", tt.max, err, tt.max)
			}
		}
	}
}
