package formula

import (
	"math"

	"github.com/tradekit/tradekit/indicators"
)

// argKind says what an argument of a function must be.
type argKind uint8

const (
	aSeries  argKind = iota // any value: a series, or a constant used on every bar
	aPeriod                 // a constant integer from 1 to MaxWindow
	aPeriod2                // a constant integer from 2 to MaxWindow
	aLag                    // a constant integer from 0 to MaxWindow
	aConst                  // a constant number
)

// param describes one argument of a function.
type param struct {
	name string
	kind argKind
	def  float64 // value when an optional argument is omitted
}

func (p param) min() int {
	switch p.kind {
	case aPeriod2:
		return 2
	case aLag:
		return 0
	}
	return 1
}

// builtin is a function of the language. Element-wise functions give f1,
// f2 or f3 (min and max fold f2 over their arguments); the others give eval,
// which receives the values of the aSeries arguments, in order, and reads
// the integer parameters from n.ints and a float parameter from n.k.
type builtin struct {
	params   []param
	counts   []int // accepted argument counts when some are optional; nil: len(params)
	variadic bool  // any number of arguments >= len(params), all like the last
	// scans is set on functions whose work per bar grows with their first
	// integer parameter (a window rescanned at each bar); see [Expr.Cost].
	scans bool
	reads seriesSet
	f1    func(a float64) float64
	f2    func(a, b float64) float64
	f3    func(a, b, c float64) float64
	eval  func(ev *evaluator, n *node, xs []value) value
}

// scalar is the value of an element-wise function on constants.
func (b *builtin) scalar(x []float64) float64 {
	switch {
	case b.f1 != nil:
		return b.f1(x[0])
	case b.f3 != nil:
		return b.f3(x[0], x[1], x[2])
	}
	if len(x) == 1 { // nz(x)
		return b.f2(x[0], b.params[1].def)
	}
	acc := x[0]
	for _, v := range x[1:] {
		acc = b.f2(acc, v)
	}
	return acc
}

var (
	pX      = param{name: "x", kind: aSeries}
	pY      = param{name: "y", kind: aSeries}
	pPeriod = param{name: "length", kind: aPeriod}
)

// window builds a function f(x, length) computed by an indicator; lookback
// is the number of leading bars it leaves undefined.
func window(ind func(in []float64, p int) []float64, lookback func(p int) int) *builtin {
	return &builtin{
		params: []param{pX, pPeriod},
		eval: func(ev *evaluator, n *node, xs []value) value {
			p := n.ints[0]
			return ev.windowed(xs, lookback(p)+1, func(in [][]float64) []float64 { return ind(in[0], p) })
		},
	}
}

// scanning marks b as a function whose work per bar grows with its
// window, for [Expr.Cost].
func scanning(b *builtin) *builtin {
	b.scans = true
	return b
}

func lookbackMinus1(p int) int { return p - 1 }
func lookbackP(p int) int      { return p }

// builtins is the function table of the language. It is read-only.
var builtins = map[string]*builtin{
	"sma":     window(indicators.SMA, lookbackMinus1),
	"ema":     window(indicators.EMA, lookbackMinus1),
	"wma":     window(indicators.WMA, lookbackMinus1),
	"dema":    window(indicators.DEMA, func(p int) int { return 2 * (p - 1) }),
	"tema":    window(indicators.TEMA, func(p int) int { return 3 * (p - 1) }),
	"rsi":     {params: []param{pX, {name: "length", kind: aPeriod2}}, eval: evalRSI},
	"roc":     window(indicators.ROC, lookbackP),
	"mom":     window(indicators.Momentum, lookbackP),
	"stddev":  window(func(in []float64, p int) []float64 { return indicators.StdDev(in, p, 1) }, lookbackMinus1),
	"highest": scanning(window(indicators.Highest, lookbackMinus1)),
	"lowest":  scanning(window(indicators.Lowest, lookbackMinus1)),
	"sum":     window(indicators.Sum, lookbackMinus1),
	"atr": {params: []param{pPeriod}, reads: readHigh | readLow | readClose,
		eval: evalATR},
	"adx":         bars3(indicators.ADX, aPeriod2, func(p int) int { return 2*p - 1 }),
	"plus_di":     bars3(indicators.PlusDI, aPeriod2, lookbackP),
	"minus_di":    bars3(indicators.MinusDI, aPeriod2, lookbackP),
	"cci":         scanning(bars3(indicators.CCI, aPeriod, lookbackMinus1)),
	"willr":       scanning(bars3(indicators.WilliamsR, aPeriod, lookbackMinus1)),
	"mfi":         {params: []param{pPeriod}, reads: readHigh | readLow | readClose | readVolume, eval: evalMFI},
	"obv":         {reads: readClose | readVolume, eval: evalOBV},
	"stoch_k":     scanning(stochFunc(0)),
	"stoch_d":     scanning(stochFunc(1)),
	"macd":        macdFunc(0),
	"macd_signal": macdFunc(1),
	"macd_hist":   macdFunc(2),
	"bb_upper":    bbFunc(0),
	"bb_middle":   bbFunc(1),
	"bb_lower":    bbFunc(2),

	"lag":        {params: []param{pX, {name: "n", kind: aLag}}, eval: evalLag},
	"change":     {params: []param{pX, {name: "n", kind: aPeriod, def: 1}}, counts: []int{1, 2}, eval: evalChange},
	"crossover":  {params: []param{pX, pY}, eval: evalCross(1)},
	"crossunder": {params: []param{pX, pY}, eval: evalCross(-1)},
	"barssince":  {params: []param{{name: "cond", kind: aSeries}}, eval: evalBarsSince},

	"na":   {params: []param{pX}, f1: func(a float64) float64 { return bool01(a != a) }},
	"nz":   {params: []param{pX, {name: "fallback", kind: aSeries, def: 0}}, counts: []int{1, 2}, f2: nz},
	"if":   {params: []param{{name: "cond", kind: aSeries}, pX, pY}, f3: cond},
	"abs":  {params: []param{pX}, f1: math.Abs},
	"log":  {params: []param{pX}, f1: func(a float64) float64 { return finite(math.Log(a)) }},
	"exp":  {params: []param{pX}, f1: func(a float64) float64 { return finite(math.Exp(a)) }},
	"sqrt": {params: []param{pX}, f1: math.Sqrt},
	"min":  {params: []param{pX, pY}, variadic: true, f2: math.Min},
	"max":  {params: []param{pX, pY}, variadic: true, f2: math.Max},
}

func nz(a, fallback float64) float64 {
	if a != a {
		return fallback
	}
	return a
}

// evalLag is lag(x, n): x shifted n bars later, NaN on the first n bars.
func evalLag(ev *evaluator, n *node, xs []value) value { return ev.lag(xs[0], n.ints[0]) }

// evalChange is change(x, n) = x - x[n].
func evalChange(ev *evaluator, n *node, xs []value) value {
	x := xs[0]
	k := n.ints[0]
	if x.s == nil {
		out := ev.alloc()
		fill(out, 0)
		fill(out[:min(k, len(out))], math.NaN())
		return value{s: out, owned: true}
	}
	out := ev.alloc() // not in place: x[i-k] is still needed after x[i]
	for i := range out {
		if i < k {
			out[i] = math.NaN()
		} else {
			out[i] = finite(x.s[i] - x.s[i-k])
		}
	}
	ev.release(x)
	return value{s: out, owned: true}
}

func evalRSI(ev *evaluator, n *node, xs []value) value {
	p := n.ints[0]
	return ev.windowed(xs, p+1, func(in [][]float64) []float64 { return indicators.RSI(in[0], p) })
}

// bars3 builds a function f(length) of high, low and close computed by an
// indicator; min is aPeriod or aPeriod2, lookback the leading bars it leaves
// undefined.
func bars3(ind func(high, low, close []float64, p int) []float64, min argKind, lookback func(p int) int) *builtin {
	return &builtin{
		params: []param{{name: "length", kind: min}},
		reads:  readHigh | readLow | readClose,
		eval: func(ev *evaluator, n *node, _ []value) value {
			p, s := n.ints[0], ev.in
			xs := []value{{s: s.High}, {s: s.Low}, {s: s.Close}}
			return ev.windowed(xs, lookback(p)+1, func(in [][]float64) []float64 { return ind(in[0], in[1], in[2], p) })
		},
	}
}

func evalMFI(ev *evaluator, n *node, _ []value) value {
	p, s := n.ints[0], ev.in
	xs := []value{{s: s.High}, {s: s.Low}, {s: s.Close}, {s: s.Volume}}
	return ev.windowed(xs, p+1, func(in [][]float64) []float64 { return indicators.MFI(in[0], in[1], in[2], in[3], p) })
}

func evalOBV(ev *evaluator, _ *node, _ []value) value {
	s := ev.in
	xs := []value{{s: s.Close}, {s: s.Volume}}
	return ev.windowed(xs, 1, func(in [][]float64) []float64 { return indicators.OBV(in[0], in[1]) })
}

// stochFunc builds stoch_k (which 0) or stoch_d (1): the slow stochastic
// of high, low and close with periods 14, 3, 3, or f(fastk, slowk, slowd).
func stochFunc(which int) *builtin {
	return &builtin{
		params: []param{{name: "fastk", kind: aPeriod, def: 14}, {name: "slowk", kind: aPeriod, def: 3}, {name: "slowd", kind: aPeriod, def: 3}},
		counts: []int{0, 3},
		reads:  readHigh | readLow | readClose,
		eval: func(ev *evaluator, n *node, _ []value) value {
			fk, sk, sd := n.ints[0], n.ints[1], n.ints[2]
			s := ev.in
			xs := []value{{s: s.High}, {s: s.Low}, {s: s.Close}}
			return ev.windowed(xs, fk+sk+sd-2, func(in [][]float64) []float64 {
				k, d := indicators.Stochastic(in[0], in[1], in[2], fk, sk, sd)
				return [...][]float64{k, d}[which]
			})
		},
	}
}

func evalATR(ev *evaluator, n *node, _ []value) value {
	p := n.ints[0]
	s := ev.in
	xs := []value{{s: s.High}, {s: s.Low}, {s: s.Close}}
	return ev.windowed(xs, p+1, func(in [][]float64) []float64 { return indicators.ATR(in[0], in[1], in[2], p) })
}

// macdFunc builds macd (which 0), macd_signal (1) or macd_hist (2):
// f(x) with TA-Lib's default periods 12, 26, 9, or f(x, fast, slow, signal).
func macdFunc(which int) *builtin {
	return &builtin{
		params: []param{pX, {name: "fast", kind: aPeriod, def: 12}, {name: "slow", kind: aPeriod, def: 26}, {name: "signal", kind: aPeriod, def: 9}},
		counts: []int{1, 4},
		eval: func(ev *evaluator, n *node, xs []value) value {
			fast, slow, sig := n.ints[0], n.ints[1], n.ints[2]
			need := max(fast, slow) - 1 + sig - 1 + 1
			return ev.windowed(xs, need, func(in [][]float64) []float64 {
				m, s, h := indicators.MACD(in[0], fast, slow, sig)
				return [...][]float64{m, s, h}[which]
			})
		},
	}
}

// bbFunc builds bb_upper (which 0), bb_middle (1) or bb_lower (2):
// f(x, length) with 2 standard deviations, or f(x, length, k).
func bbFunc(which int) *builtin {
	return &builtin{
		params: []param{pX, pPeriod, {name: "k", kind: aConst, def: 2}},
		counts: []int{2, 3},
		eval: func(ev *evaluator, n *node, xs []value) value {
			p, k := n.ints[0], n.k
			return ev.windowed(xs, p, func(in [][]float64) []float64 {
				u, m, l := indicators.BollingerBands(in[0], p, k)
				return [...][]float64{u, m, l}[which]
			})
		},
	}
}

// evalCross is crossover (dir 1) or crossunder (dir -1), bar by bar over
// the whole series: x crosses over y at bar i when x[i] > y[i] and
// x[i-1] <= y[i-1]; under when x[i] < y[i] and x[i-1] >= y[i-1]. The value
// is NaN at bar 0 and wherever one of the four values is NaN.
func evalCross(dir float64) func(ev *evaluator, n *node, xs []value) value {
	return func(ev *evaluator, _ *node, xs []value) value {
		x, y := ev.materialize(xs[0]), ev.materialize(xs[1])
		out := ev.alloc()
		out[0] = math.NaN()
		for i := 1; i < len(out); i++ {
			d, d0 := (x.s[i]-y.s[i])*dir, (x.s[i-1]-y.s[i-1])*dir
			switch {
			case d != d || d0 != d0:
				out[i] = math.NaN()
			case d > 0 && d0 <= 0:
				out[i] = 1
			default:
				out[i] = 0
			}
		}
		ev.release(x, y)
		return value{s: out, owned: true}
	}
}

// evalBarsSince is barssince(cond): the number of bars since cond was last
// true (non-zero and defined); 0 on a bar where it is true, NaN before the
// first such bar.
func evalBarsSince(ev *evaluator, _ *node, xs []value) value {
	c := ev.materialize(xs[0])
	out := ev.dst(c)
	last := -1
	for i, v := range c.s {
		if v == v && v != 0 {
			last = i
		}
		if last < 0 {
			out[i] = math.NaN()
		} else {
			out[i] = float64(i - last)
		}
	}
	return value{s: out, owned: true}
}
