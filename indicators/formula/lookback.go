package formula

// Lookback returns how many bars before a bar the formula's value at that
// bar depends on, and whether that number is finite: the value at bar i
// is a function of bars i-bars through i alone, so that evaluating the
// formula over the last bars+k bars of a series gives its values at the
// last k bars. It is, summed along each path of the syntax tree and the
// greatest over the paths:
//
//	0                 for a number or a price series
//	the window - 1    for sma, wma, stddev, highest, lowest, sum,
//	                  bb_upper, bb_middle, bb_lower, cci, willr
//	the window        for roc, mom, mfi
//	fastk+slowk+slowd-3 for stoch_k, stoch_d
//	n                 for lag(x, n), change(x, n) and x[n]
//	1                 for crossover and crossunder
//	0                 for operators and element-wise functions
//
// plus the arguments' own lookbacks. Functions whose value carries every
// earlier bar (ema, dema, tema, rsi, atr, adx, plus_di, minus_di, macd,
// macd_signal, macd_hist, obv, barssince: recurrences and running totals)
// have no finite lookback: ok is false, and only the whole series gives
// their values.
//
// Over such a tail the values are the same up to the rounding of the
// running sums that windows use (sma's sum of the last n closes is kept
// by adding the new close and taking the oldest away, so its last bits
// depend on where the series starts): within about 1e-15 of each other,
// relatively.
func (e *Expr) Lookback() (bars int, ok bool) { return lookback(e.root) }

func lookback(n *node) (int, bool) {
	if n.isConst {
		return 0, true
	}
	args := 0
	for _, a := range n.args {
		k, ok := lookback(a)
		if !ok {
			return 0, false
		}
		args = max(args, k)
	}
	switch n.kind {
	case nIndex:
		return args + n.ints[0], true
	case nCall:
		own, ok := callLookback(n)
		return args + own, ok
	}
	return args, true
}

// callLookback returns the lookback of the function call n itself, its
// arguments' aside.
func callLookback(n *node) (int, bool) {
	switch n.name {
	case "sma", "wma", "stddev", "highest", "lowest", "sum", "bb_upper", "bb_middle", "bb_lower", "cci", "willr":
		return n.ints[0] - 1, true
	case "roc", "mom", "mfi", "lag", "change":
		return n.ints[0], true
	case "stoch_k", "stoch_d":
		return n.ints[0] + n.ints[1] + n.ints[2] - 3, true
	case "crossover", "crossunder":
		return 1, true
	case "ema", "dema", "tema", "rsi", "atr", "adx", "plus_di", "minus_di", "macd", "macd_signal", "macd_hist", "obv", "barssince":
		return 0, false
	}
	if b := builtins[n.name]; b != nil && b.eval == nil {
		return 0, true // element-wise
	}
	return 0, false // a function this table does not know: the whole series
}
