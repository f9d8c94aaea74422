package formula

import (
	"math"
	"strconv"
	"strings"

	"github.com/tradekit/tradekit"
)

// seriesSet is a set of the five input series, one bit each.
type seriesSet uint8

const (
	readOpen seriesSet = 1 << iota
	readHigh
	readLow
	readClose
	readVolume
)

// seriesNames maps each series name of the language to the inputs it reads.
var seriesNames = map[string]seriesSet{
	"open":   readOpen,
	"high":   readHigh,
	"low":    readLow,
	"close":  readClose,
	"volume": readVolume,
	"hl2":    readHigh | readLow,
	"hlc3":   readHigh | readLow | readClose,
	"ohlc4":  readOpen | readHigh | readLow | readClose,
}

// checker resolves names, checks arities and constant parameters, and folds
// constant sub-expressions, in one walk of the syntax tree.
type checker struct {
	src   string
	reads seriesSet
}

func (c *checker) errorf(pos int, format string, args ...any) *SyntaxError {
	return newSyntaxError(c.src, pos, format, args...)
}

// startPos is the offset of the first token of n.
func startPos(n *node) int {
	for {
		switch n.kind {
		case nBinary, nTernary, nIndex:
			n = n.args[0]
		default:
			return n.pos
		}
	}
}

func (c *checker) check(n *node) *SyntaxError {
	switch n.kind {
	case nNum:
		n.isConst, n.cval = true, n.num
		return nil
	case nSeries:
		set, ok := seriesNames[n.name]
		if !ok {
			if _, isFn := builtins[n.name]; isFn {
				return c.errorf(n.pos, "%s is a function: call it as %s(...)", n.name, n.name)
			}
			return c.errorf(n.pos, "unknown name %s (the series are %s)", tradekit.Quote(n.name), seriesList)
		}
		c.reads |= set
		return nil
	case nIndex:
		if err := c.check(n.args[0]); err != nil {
			return err
		}
		if err := c.check(n.args[1]); err != nil {
			return err
		}
		k, err := c.intParam(n.args[1], "lag in []", 0)
		if err != nil {
			return err
		}
		n.ints = []int{k}
		return nil
	case nCall:
		return c.call(n)
	}
	// Operators: element-wise, folded when every operand is constant.
	for _, a := range n.args {
		if err := c.check(a); err != nil {
			return err
		}
	}
	fold(n, func(x []float64) float64 {
		switch n.kind {
		case nUnary:
			return unaryOp(n.op, x[0])
		case nTernary:
			return cond(x[0], x[1], x[2])
		}
		return binaryOp(n.op, x[0], x[1])
	})
	return nil
}

// fold marks n constant with value f(args) when every argument is constant.
func fold(n *node, f func(x []float64) float64) {
	x := make([]float64, len(n.args))
	for i, a := range n.args {
		if !a.isConst {
			return
		}
		x[i] = a.cval
	}
	n.isConst, n.cval = true, f(x)
}

// seriesList names the series for error messages.
var seriesList = "open, high, low, close, volume, hl2, hlc3, ohlc4"

func (c *checker) call(n *node) *SyntaxError {
	b, ok := builtins[n.name]
	if !ok {
		if _, isSeries := seriesNames[n.name]; isSeries {
			return c.errorf(n.pos, "%s is a series, not a function", n.name)
		}
		return c.errorf(n.pos, "unknown function %s", tradekit.Quote(n.name))
	}
	n.fn = b
	if !b.accepts(len(n.args)) {
		return c.errorf(n.pos, "%s expects %s, got %d", n.name, b.arityText(), len(n.args))
	}
	for i, a := range n.args {
		if err := c.check(a); err != nil {
			return err
		}
		switch p := b.param(i); p.kind {
		case aSeries:
		case aConst:
			if !a.isConst {
				return c.errorf(startPos(a), "%s %s must be a constant, not a series", n.name, p.name)
			}
			if math.IsNaN(a.cval) {
				return c.errorf(startPos(a), "%s %s must be a number, got an undefined value", n.name, p.name)
			}
			n.k = a.cval
		default:
			k, err := c.intParam(a, n.name+" "+p.name, p.min())
			if err != nil {
				return err
			}
			n.ints = append(n.ints, k)
		}
	}
	// Omitted optional arguments take their defaults.
	for i := len(n.args); i < len(b.params); i++ {
		p := b.params[i]
		if p.kind == aConst {
			n.k = p.def
		} else if p.kind != aSeries {
			n.ints = append(n.ints, int(p.def))
		}
	}
	c.reads |= b.reads
	if b.f1 != nil || b.f2 != nil || b.f3 != nil {
		fold(n, func(x []float64) float64 { return b.scalar(x) })
	}
	return nil
}

// intParam checks that the checked node a is a constant integer from min
// to MaxWindow.
func (c *checker) intParam(a *node, what string, min int) (int, *SyntaxError) {
	if !a.isConst {
		return 0, c.errorf(startPos(a), "%s must be a constant, not a series", what)
	}
	v := a.cval
	if v != math.Trunc(v) || v < float64(min) || v > MaxWindow {
		return 0, c.errorf(startPos(a), "%s must be an integer from %d to %d, got %s", what, min, MaxWindow, formatNumber(v))
	}
	return int(v), nil
}

// arityText describes the accepted argument counts: "2 arguments",
// "1 or 2 arguments", "at least 2 arguments".
func (b *builtin) arityText() string {
	plural := func(k int) string {
		if k == 1 {
			return "1 argument"
		}
		return strconv.Itoa(k) + " arguments"
	}
	switch {
	case b.variadic:
		return "at least " + plural(len(b.params))
	case len(b.counts) > 0:
		s := make([]string, len(b.counts))
		for i, k := range b.counts {
			s[i] = strconv.Itoa(k)
		}
		return strings.Join(s[:len(s)-1], ", ") + " or " + plural(b.counts[len(s)-1])
	}
	return plural(len(b.params))
}

func (b *builtin) accepts(k int) bool {
	switch {
	case b.variadic:
		return k >= len(b.params)
	case len(b.counts) > 0:
		for _, c := range b.counts {
			if c == k {
				return true
			}
		}
		return false
	}
	return k == len(b.params)
}

// param returns the description of argument i.
func (b *builtin) param(i int) param {
	if i >= len(b.params) {
		return b.params[len(b.params)-1] // variadic tail
	}
	return b.params[i]
}
