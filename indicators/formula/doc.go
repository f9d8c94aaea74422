// Package formula is Tradekit's custom-indicator language: a small
// expression language over price series, parsed once into a syntax tree,
// checked, and evaluated over whole series at a time.
//
//	e, err := formula.Parse("(close - sma(close, 20)) / stddev(close, 20)")
//	if err != nil {
//		return err // a *formula.SyntaxError such as "1:12: sma expects 2 arguments, got 1"
//	}
//	z, err := e.Eval(ohlcv.Series{Close: closes}) // one value per bar, NaN where undefined
//
// # Grammar
//
// In EBNF (ISO 14977 style: [ ] optional, { } repeated, | alternatives).
// Operators are listed loosest first; all binary operators associate to the
// left except ^ and ?:, which associate to the right. Comparisons do not
// chain. Whitespace (space, tab, newline) separates tokens and is otherwise
// ignored.
//
//	formula    = ternary .
//	ternary    = or [ "?" ternary ":" ternary ] .
//	or         = and { "or" and } .
//	and        = not { "and" not } .
//	not        = "not" not | comparison .
//	comparison = sum [ ( "<" | "<=" | ">" | ">=" | "==" | "!=" ) sum ] .
//	sum        = term { ( "+" | "-" ) term } .
//	term       = unary { ( "*" | "/" ) unary } .
//	unary      = "-" unary | power .
//	power      = postfix [ "^" unary ] .
//	postfix    = primary { "[" ternary "]" } .
//	primary    = number | name | name "(" [ ternary { "," ternary } ] ")" | "(" ternary ")" .
//	name       = letter { letter | digit } .
//	number     = digit { digit } [ "." digit { digit } ] [ ( "e" | "E" ) [ "+" | "-" ] digit { digit } ] .
//	letter     = "a" … "z" | "A" … "Z" | "_" .
//	digit      = "0" … "9" .
//
// The words and, or and not are reserved. A number may not be followed
// directly by a letter or a dot. So -2^2 is -(2^2), 2^-1 is 0.5, and
// not a > b is not (a > b).
//
// # Values
//
// Every expression is a series (one float64 per bar) or a constant (the
// same value on every bar, folded when the formula is parsed). The series are
// open, high, low, close, volume, hl2 = (high+low)/2, hlc3 =
// (high+low+close)/3 and ohlc4 = (open+high+low+close)/4.
//
// Undefined values are NaN. They come from the warm-up of a window, a lag
// before the first bar, division by zero, log of zero, sqrt of a negative
// number, or an undefined input. Every operator and function gives NaN when
// one of its inputs is NaN, except na, nz and barssince; results are never
// ±Inf (an infinite result is NaN). Comparisons, and, or, not, crossover and
// crossunder give 1 for true and 0 for false; any non-zero value is true.
// if(c, a, b) and c ? a : b give NaN where c is NaN.
//
// Window functions (sma, ema, rsi, stddev, highest, ...) run over each
// maximal stretch of bars where their inputs are defined: an undefined
// input restarts the window, exactly as if the series began after it, so
// sma(close[1], 3) is defined from bar 3. Their length and the lag of x[n]
// and lag(x, n) must be constant integers, at most [MaxWindow]; they may be
// constant expressions such as 2*10.
//
// # Functions
//
//	sma(x, n) ema(x, n) wma(x, n) dema(x, n) tema(x, n)   moving averages (TA-Lib)
//	rsi(x, n)                     Wilder's RSI, n >= 2
//	stddev(x, n)                  population standard deviation over n bars
//	highest(x, n) lowest(x, n)    extremes over n bars, the current one included
//	sum(x, n)                     sum over n bars
//	roc(x, n)                     (x / x[n] - 1) * 100 (TA-Lib ROC: 0 when x[n] = 0)
//	mom(x, n)                     x - x[n]
//	atr(n)                        average true range of high, low, close
//	adx(n) plus_di(n) minus_di(n) Wilder's directional movement, n >= 2
//	cci(n) willr(n)               commodity channel index, Williams' %R
//	stoch_k() stoch_d()           slow stochastic 14, 3, 3; or (fastk, slowk, slowd)
//	mfi(n) obv()                  money flow index, on-balance volume
//	macd(x) macd_signal(x) macd_hist(x)   TA-Lib MACD 12, 26, 9; or (x, fast, slow, signal)
//	bb_upper(x, n) bb_middle(x, n) bb_lower(x, n)   Bollinger bands, 2 deviations; or (x, n, k)
//	lag(x, n), x[n]               x n bars ago (n >= 0)
//	change(x), change(x, n)       x - x[n], n = 1 by default
//	crossover(x, y)               1 at bar i when x[i] > y[i] and x[i-1] <= y[i-1]
//	crossunder(x, y)              1 at bar i when x[i] < y[i] and x[i-1] >= y[i-1]
//	barssince(c)                  bars since c was last true (0 on the bar); NaN before
//	na(x)                         1 where x is undefined, else 0
//	nz(x), nz(x, y)               x where defined, else y (0 by default)
//	if(c, a, b)                   a where c is true, b where false
//	abs log exp sqrt              element-wise, natural log
//	min(x, y, ...) max(x, y, ...) element-wise, two or more arguments
//
// # Evaluation
//
// [Expr.Eval] computes one []float64 per node of the tree, bottom-up, so
// the cost is one vectorised pass over the bars per node (plus the cost of
// each indicator) rather than a walk of the tree per bar. Buffers of
// finished nodes are reused.
//
// # Cost
//
// [Expr.Cost] is the static cost of a formula, its work per bar estimated
// from the syntax tree alone: every node (a number, a series, an
// operator, a call) counts 1, and a function whose work per bar grows with
// its window (cci, willr, highest, lowest, stoch_k and stoch_d) counts its
// window too:
//
//	cost = sum over nodes {1 + window(node)}, a folded constant counting 1
//
// Evaluating over n bars takes time roughly proportional to n × cost, so
// a server bounds the cost of the formulas it accepts ([Expr.CheckCost],
// [CostError]). close > sma(close, 50) costs 5; 99 terms cci(500) + ...
// cost 49,798.
//
// # Limits
//
// [Parse] refuses, with a [*SyntaxError], sources longer than [MaxLen]
// bytes, nesting deeper than [MaxDepth], trees of more than [MaxNodes]
// nodes and windows or lags longer than [MaxWindow] bars. Nothing panics on
// any input.
package formula
