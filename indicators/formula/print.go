package formula

import "strconv"

// Precedence levels of the grammar, loosest first; the printer wraps a node
// in parentheses when its level is below the level its position requires.
const (
	levTernary = iota
	levOr
	levAnd
	levNot
	levCompare
	levSum
	levTerm
	levUnary
	levPower
	levPrimary
)

func level(n *node) int {
	switch n.kind {
	case nTernary:
		return levTernary
	case nUnary:
		if n.op == tNot {
			return levNot
		}
		return levUnary
	case nBinary:
		switch n.op {
		case tOr:
			return levOr
		case tAnd:
			return levAnd
		case tPlus, tMinus:
			return levSum
		case tStar, tSlash:
			return levTerm
		case tCaret:
			return levPower
		}
		return levCompare
	}
	return levPrimary
}

// printer writes the canonical form: the fewest parentheses the grammar
// needs, and a space only between two tokens that would otherwise merge.
type printer struct{ buf []byte }

func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) }

func (w *printer) tok(s string) {
	if len(w.buf) > 0 && isWordByte(w.buf[len(w.buf)-1]) && isWordByte(s[0]) {
		w.buf = append(w.buf, ' ')
	}
	w.buf = append(w.buf, s...)
}

func (w *printer) node(n *node, min int) {
	lev := level(n)
	if lev < min {
		w.tok("(")
		defer w.tok(")")
	}
	switch n.kind {
	case nNum:
		w.tok(n.text)
	case nSeries:
		w.tok(n.name)
	case nUnary:
		w.tok(tokText[n.op])
		w.node(n.args[0], lev)
	case nBinary:
		left, right := lev, lev+1
		switch lev {
		case levCompare:
			left, right = levSum, levSum
		case levPower:
			left, right = levPrimary, levUnary
		}
		w.node(n.args[0], left)
		w.tok(tokText[n.op])
		w.node(n.args[1], right)
	case nTernary:
		w.node(n.args[0], levOr)
		w.tok("?")
		w.node(n.args[1], levTernary)
		w.tok(":")
		w.node(n.args[2], levTernary)
	case nIndex:
		w.node(n.args[0], levPrimary)
		w.tok("[")
		w.node(n.args[1], levTernary)
		w.tok("]")
	case nCall:
		w.tok(n.name)
		w.tok("(")
		for i, a := range n.args {
			if i > 0 {
				w.tok(",")
			}
			w.node(a, levTernary)
		}
		w.tok(")")
	}
}

// formatNumber spells v in error messages.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
