package formula

import (
	"fmt"

	"github.com/tradekit/tradekit"
)

// Cost returns the static cost of the formula: an estimate, known before
// any bar is read, of the work its evaluation does per bar. It is
// cost(root), summed over the nodes of the syntax tree:
//
//	cost(node) = 1                                     for a constant (folded when parsed)
//	cost(node) = 1 + window(node) + sum_args cost(arg) otherwise
//
// where window(node) is the window length of the functions whose work per
// bar grows with their window (cci, willr, highest, lowest, and stoch_k and
// stoch_d through fastk), and 0 for every other node: an operator, a
// series, and the functions computed from running sums or recurrences
// (sma, ema, rsi, stddev, ...), whose work per bar does not depend on their
// length. Evaluating a formula over n bars takes time roughly proportional
// to n × Cost.
//
// So close > sma(close, 50) costs 5 and cci(20) > 100 costs 24.
func (e *Expr) Cost() int { return cost(e.root) }

func cost(n *node) int {
	if n.isConst {
		return 1
	}
	c := 1
	if n.kind == nCall && n.fn.scans {
		c += n.ints[0]
	}
	for _, a := range n.args {
		c += cost(a)
	}
	return c
}

// CostError reports a formula whose [Expr.Cost] is over a budget, such as
// the one a plan allows. It wraps [tradekit.ErrInvalid].
type CostError struct {
	Cost int // the formula's cost
	Max  int // the budget it is over
}

// Error returns "costs N, the plan allows M".
func (e *CostError) Error() string {
	return fmt.Sprintf("costs %d, the plan allows %d", e.Cost, e.Max)
}

// Unwrap returns [tradekit.ErrInvalid].
func (e *CostError) Unwrap() error { return tradekit.ErrInvalid }

// CheckCost returns a [*CostError] when the formula costs more than max
// (see [Expr.Cost]), else nil. A max of 0 or less allows any cost.
func (e *Expr) CheckCost(max int) error {
	if c := e.Cost(); max > 0 && c > max {
		return &CostError{Cost: c, Max: max}
	}
	return nil
}
