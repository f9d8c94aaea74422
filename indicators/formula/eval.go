package formula

import (
	"fmt"
	"math"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/ohlcv"
)

// Eval evaluates the formula over every bar of s at once and returns one
// value per bar, in a new slice of length s.Len(). Bars where the value is
// undefined (warm-up of a window, division by zero, the log of a negative
// number, a lag before the first bar, ...) hold NaN; the result never holds
// ±Inf, and ±Inf in the input counts as undefined. Eval does not modify s.
//
// Eval returns an error wrapping [tradekit.ErrInvalid] when the non-nil
// fields of s differ in length, or when the formula reads a field that is
// nil while s has bars.
func (e *Expr) Eval(s ohlcv.Series) ([]float64, error) {
	n := s.Len()
	fields := [...]struct {
		name string
		bit  seriesSet
		data []float64
	}{
		{"open", readOpen, s.Open}, {"high", readHigh, s.High}, {"low", readLow, s.Low},
		{"close", readClose, s.Close}, {"volume", readVolume, s.Volume},
	}
	for _, f := range fields {
		if f.data != nil && len(f.data) != n {
			return nil, fmt.Errorf("formula: series %s has %d bars, want %d: %w", f.name, len(f.data), n, tradekit.ErrInvalid)
		}
		if e.reads&f.bit != 0 && len(f.data) != n {
			return nil, fmt.Errorf("formula: the formula reads %s but the series has none: %w", f.name, tradekit.ErrInvalid)
		}
	}
	if n == 0 {
		return []float64{}, nil
	}
	ev := &evaluator{n: n, in: s}
	v := ev.eval(e.root)
	if v.s == nil {
		out := make([]float64, n)
		fill(out, finite(v.c))
		return out, nil
	}
	if v.owned && v.clean {
		return v.s, nil
	}
	out := v.s
	if !v.owned {
		out = make([]float64, n)
	}
	for i, x := range v.s { // ±Inf from the input becomes NaN too
		out[i] = finite(x)
	}
	return out, nil
}

// value is the result of one node: a whole series, or a constant that
// stands for the same number on every bar.
type value struct {
	s     []float64 // nil for a constant
	c     float64   // the constant when s is nil
	owned bool      // s belongs to the evaluator and may be overwritten
	clean bool      // s holds no ±Inf
}

// evaluator evaluates a syntax tree bottom-up, one []float64 per node.
// Buffers of finished nodes are recycled, so memory stays proportional to
// the depth of the tree rather than to its size.
type evaluator struct {
	n    int
	in   ohlcv.Series
	free [][]float64
}

// alloc returns a buffer of n values with unspecified contents.
func (ev *evaluator) alloc() []float64 {
	if k := len(ev.free); k > 0 {
		b := ev.free[k-1]
		ev.free = ev.free[:k-1]
		return b
	}
	return make([]float64, ev.n)
}

// release recycles v's buffer if the evaluator owns it.
func (ev *evaluator) release(vs ...value) {
	for _, v := range vs {
		if v.owned {
			ev.free = append(ev.free, v.s)
		}
	}
}

// dst returns the buffer an element-wise result over vs is written to: the
// buffer of an owned operand (writing element i after reading element i is
// safe), or a new one.
func (ev *evaluator) dst(vs ...value) []float64 {
	for _, v := range vs {
		if v.owned {
			return v.s
		}
	}
	return ev.alloc()
}

// consume releases every owned operand in vs except the one whose buffer is
// out.
func (ev *evaluator) consume(out []float64, vs ...value) {
	for _, v := range vs {
		if v.owned && &v.s[0] != &out[0] {
			ev.free = append(ev.free, v.s)
		}
	}
}

// materialize returns v as a series, filling a buffer for a constant.
func (ev *evaluator) materialize(v value) value {
	if v.s != nil {
		return v
	}
	b := ev.alloc()
	fill(b, v.c)
	return value{s: b, owned: true}
}

func (ev *evaluator) eval(n *node) value {
	if n.isConst {
		return value{c: n.cval}
	}
	switch n.kind {
	case nSeries:
		return ev.series(n.name)
	case nUnary:
		x := ev.eval(n.args[0])
		op := n.op
		return ev.map1(x, func(a float64) float64 { return unaryOp(op, a) })
	case nBinary:
		x := ev.eval(n.args[0])
		y := ev.eval(n.args[1])
		v := ev.binary(n.op, x, y)
		v.clean = true // every binary operator maps ±Inf to NaN
		return v
	case nTernary:
		return ev.map3(ev.eval(n.args[0]), ev.eval(n.args[1]), ev.eval(n.args[2]), cond)
	case nIndex:
		return ev.lag(ev.eval(n.args[0]), n.ints[0])
	case nCall:
		b := n.fn
		var xs []value
		for i, a := range n.args {
			if b.param(i).kind == aSeries {
				xs = append(xs, ev.eval(a))
			}
		}
		switch {
		case b.eval != nil:
			return b.eval(ev, n, xs)
		case b.f1 != nil:
			return ev.map1(xs[0], b.f1)
		case b.f3 != nil:
			return ev.map3(xs[0], xs[1], xs[2], b.f3)
		}
		if len(xs) == 1 { // nz(x): the fallback defaults to 0
			xs = append(xs, value{c: b.params[1].def})
		}
		acc := xs[0]
		for _, x := range xs[1:] {
			acc = ev.map2(acc, x, b.f2)
		}
		return acc
	}
	panic("formula: unknown node kind") // unreachable: the checker accepted the tree
}

// series returns an input series, or computes a derived price.
func (ev *evaluator) series(name string) value {
	s := ev.in
	switch name {
	case "open":
		return value{s: s.Open}
	case "high":
		return value{s: s.High}
	case "low":
		return value{s: s.Low}
	case "close":
		return value{s: s.Close}
	case "volume":
		return value{s: s.Volume}
	}
	out := ev.alloc()
	switch name {
	case "hl2":
		for i := range out {
			out[i] = (s.High[i] + s.Low[i]) / 2
		}
	case "hlc3":
		for i := range out {
			out[i] = (s.High[i] + s.Low[i] + s.Close[i]) / 3
		}
	case "ohlc4":
		for i := range out {
			out[i] = (s.Open[i] + s.High[i] + s.Low[i] + s.Close[i]) / 4
		}
	}
	return value{s: out, owned: true}
}

// map1 applies f to every bar of x.
func (ev *evaluator) map1(x value, f func(float64) float64) value {
	if x.s == nil {
		return value{c: f(x.c)}
	}
	out := ev.dst(x)
	for i, a := range x.s {
		out[i] = f(a)
	}
	return value{s: out, owned: true}
}

// map2 applies f bar by bar to x and y, either of which may be constant.
func (ev *evaluator) map2(x, y value, f func(a, b float64) float64) value {
	switch {
	case x.s == nil && y.s == nil:
		return value{c: f(x.c, y.c)}
	case y.s == nil:
		out, c := ev.dst(x), y.c
		for i, a := range x.s {
			out[i] = f(a, c)
		}
		return value{s: out, owned: true}
	case x.s == nil:
		out, c := ev.dst(y), x.c
		for i, b := range y.s {
			out[i] = f(c, b)
		}
		return value{s: out, owned: true}
	}
	out := ev.dst(x, y)
	a, b := x.s, y.s[:len(x.s)]
	for i := range a {
		out[i] = f(a[i], b[i])
	}
	ev.consume(out, x, y)
	return value{s: out, owned: true}
}

// map3 applies f bar by bar to x, y and z, any of which may be constant.
func (ev *evaluator) map3(x, y, z value, f func(a, b, c float64) float64) value {
	if x.s == nil && y.s == nil && z.s == nil {
		return value{c: f(x.c, y.c, z.c)}
	}
	out := ev.dst(x, y, z)
	at := func(v value, i int) float64 {
		if v.s == nil {
			return v.c
		}
		return v.s[i]
	}
	for i := range out {
		out[i] = f(at(x, i), at(y, i), at(z, i))
	}
	ev.consume(out, x, y, z)
	return value{s: out, owned: true}
}

// binary applies a binary operator. The four arithmetic operators on two
// series have their own loops: they are the bulk of most formulas.
func (ev *evaluator) binary(op tokKind, x, y value) value {
	if x.s == nil || y.s == nil {
		return ev.map2(x, y, func(a, b float64) float64 { return binaryOp(op, a, b) })
	}
	out := ev.dst(x, y)
	a, b := x.s, y.s[:len(x.s)]
	out = out[:len(a)]
	switch op {
	case tPlus:
		for i := range out {
			out[i] = finite(a[i] + b[i])
		}
	case tMinus:
		for i := range out {
			out[i] = finite(a[i] - b[i])
		}
	case tStar:
		for i := range out {
			out[i] = finite(a[i] * b[i])
		}
	case tSlash:
		for i := range out {
			out[i] = finite(a[i] / b[i])
		}
	default:
		for i := range out {
			out[i] = binaryOp(op, a[i], b[i])
		}
	}
	ev.consume(out, x, y)
	return value{s: out, owned: true}
}

// lag shifts x by k bars: out[i] = x[i-k], NaN for i < k.
func (ev *evaluator) lag(x value, k int) value {
	out := ev.alloc()
	k = min(k, len(out))
	fill(out[:k], math.NaN())
	if x.s == nil {
		fill(out[k:], x.c)
	} else {
		copy(out[k:], x.s[:len(out)-k])
	}
	ev.release(x)
	return value{s: out, owned: true}
}

// windowed applies f, a function over whole slices such as an indicator, to
// each maximal stretch of bars on which every input is defined, and leaves
// NaN elsewhere: an undefined value restarts the window. need is the length
// of the shortest stretch on which f defines a value (its lookback + 1);
// shorter stretches stay NaN without calling f.
func (ev *evaluator) windowed(xs []value, need int, f func(in [][]float64) []float64) value {
	in := make([][]float64, len(xs))
	for i := range xs {
		xs[i] = ev.materialize(xs[i])
		in[i] = xs[i].s
	}
	defer ev.release(xs...)
	undefined := func(i int) bool {
		for _, s := range in {
			if v := s[i]; v-v != 0 { // NaN or ±Inf
				return true
			}
		}
		return false
	}
	whole := true
	for _, s := range in {
		for _, v := range s {
			if v-v != 0 {
				whole = false
				break
			}
		}
	}
	if whole && ev.n >= need {
		r := f(in)
		if len(r) == ev.n && !aliases(r, in) {
			return value{s: r, owned: true}
		}
	}
	out := ev.alloc()
	fill(out, math.NaN())
	sub := make([][]float64, len(in))
	for i := 0; i < ev.n; {
		if undefined(i) {
			i++
			continue
		}
		j := i + 1
		for j < ev.n && !undefined(j) {
			j++
		}
		if j-i >= need {
			for k, s := range in {
				sub[k] = s[i:j]
			}
			copy(out[i:j], f(sub))
		}
		i = j
	}
	return value{s: out, owned: true}
}

// aliases reports whether r shares its first element with one of in.
func aliases(r []float64, in [][]float64) bool {
	for _, s := range in {
		if len(r) > 0 && len(s) > 0 && &r[0] == &s[0] {
			return true
		}
	}
	return false
}

// fill sets every element of dst to v.
func fill(dst []float64, v float64) {
	for i := range dst {
		dst[i] = v
	}
}

// finite returns v, or NaN when v is ±Inf: values are finite or undefined.
func finite(v float64) float64 {
	if v-v != 0 {
		return math.NaN()
	}
	return v
}

func truth(v float64) float64 {
	if v != 0 {
		return 1
	}
	return 0
}

// unaryOp is the value of "-a" or "not a".
func unaryOp(op tokKind, a float64) float64 {
	if op == tNot {
		if a != a {
			return a
		}
		return 1 - truth(a)
	}
	return -a
}

// binaryOp is the value of "a op b" for one bar. Any NaN operand gives NaN;
// so do a division by zero and an infinite result.
func binaryOp(op tokKind, a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	switch op {
	case tPlus:
		return finite(a + b)
	case tMinus:
		return finite(a - b)
	case tStar:
		return finite(a * b)
	case tSlash:
		return finite(a / b)
	case tCaret:
		return finite(math.Pow(a, b))
	case tLT:
		return bool01(a < b)
	case tLE:
		return bool01(a <= b)
	case tGT:
		return bool01(a > b)
	case tGE:
		return bool01(a >= b)
	case tEQ:
		return bool01(a == b)
	case tNE:
		return bool01(a != b)
	case tAnd:
		return truth(a) * truth(b)
	case tOr:
		return bool01(a != 0 || b != 0)
	}
	panic("formula: unknown operator") // unreachable: the parser makes only these
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// cond is the value of "c ? a : b" and if(c, a, b): NaN when c is NaN.
func cond(c, a, b float64) float64 {
	switch {
	case c != c:
		return c
	case c != 0:
		return a
	}
	return b
}
