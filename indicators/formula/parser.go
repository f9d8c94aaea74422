package formula

import (
	"fmt"
)

// Limits of the language. A formula beyond any of them is refused by
// [Parse] with a [*SyntaxError] that names the limit.
const (
	// MaxLen is the longest source accepted, in bytes (a valid formula is
	// ASCII, so bytes are characters). It is the limit of the HTTP API;
	// callers with a tighter budget check before they parse.
	MaxLen = 1000
	// MaxDepth is the deepest nesting of parentheses, brackets, function
	// arguments, unary operators and right-nested ^ and ?: operators.
	MaxDepth = 50
	// MaxNodes is the largest number of syntax-tree nodes (numbers, names,
	// operators and calls). Evaluation costs one pass over the bars per node.
	MaxNodes = 300
	// MaxWindow is the longest window (period) or lag a function accepts.
	MaxWindow = 10000
)

// nodeKind is the kind of a syntax-tree node.
type nodeKind uint8

const (
	nNum     nodeKind = iota // a number literal: num, text
	nSeries                  // a price series: name
	nUnary                   // op ("-" or "not") applied to args[0]
	nBinary                  // args[0] op args[1]
	nCall                    // name(args...)
	nIndex                   // args[0][args[1]]: lag by a constant
	nTernary                 // args[0] ? args[1] : args[2]
)

// node is a syntax-tree node. The fields below the blank line are filled in
// by the checker.
type node struct {
	kind nodeKind
	pos  int     // byte offset of the token that names the node
	op   tokKind // operator of nUnary and nBinary
	name string  // series or function name
	num  float64 // value of nNum
	text string  // spelling of nNum, kept by the canonical form
	args []*node

	fn      *builtin // resolved function of nCall
	isConst bool     // the node is a scalar known before evaluation
	cval    float64  // its value when isConst
	ints    []int    // integer parameters (periods, lag) resolved by the checker
	k       float64  // float parameter (bb_* deviations)
}

// Expr is a parsed and checked formula, ready to be evaluated any number of
// times. An Expr is immutable and safe for concurrent use.
type Expr struct {
	root  *node
	reads seriesSet // the price series the formula reads
}

// Parse parses and checks the formula src. The returned Expr evaluates it
// with [Expr.Eval]; [Expr.String] gives its canonical form.
//
// Every error has concrete type [*SyntaxError], wraps [tradekit.ErrInvalid]
// and has the form "line:col: problem". Parse refuses sources longer than
// [MaxLen] bytes, nesting deeper than [MaxDepth], more than [MaxNodes] nodes
// and windows longer than [MaxWindow].
func Parse(src string) (*Expr, error) {
	e, err := parse(src)
	if err != nil {
		return nil, err // a typed nil *SyntaxError must not become a non-nil error
	}
	return e, nil
}

func parse(src string) (*Expr, *SyntaxError) {
	if len(src) > MaxLen {
		return nil, newSyntaxError(src, MaxLen, "formula is longer than %d characters", MaxLen)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	if p.peek().kind == tEOF {
		return nil, p.errorf(p.peek().pos, "formula is empty")
	}
	root, err := p.ternary()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t)
	}
	c := &checker{src: src}
	if err := c.check(root); err != nil {
		return nil, err
	}
	return &Expr{root: root, reads: c.reads}, nil
}

// parser is a recursive-descent parser over the token slice. Each method
// parses one rule of the grammar in doc.go.
type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	nodes int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errorf(pos int, format string, args ...any) *SyntaxError {
	return newSyntaxError(p.src, pos, format, args...)
}

func (p *parser) unexpected(t token) *SyntaxError {
	if t.kind == tEOF {
		return p.errorf(t.pos, "unexpected end of formula")
	}
	return p.errorf(t.pos, "unexpected %s", t.describe())
}

func (p *parser) expect(kind tokKind, context string) (token, *SyntaxError) {
	t := p.peek()
	if t.kind != kind {
		return t, p.errorf(t.pos, "expected %q %s, found %s", tokText[kind], context, t.describe())
	}
	return p.next(), nil
}

// enter counts one more level of nesting; leave undoes it.
func (p *parser) enter(pos int) *SyntaxError {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorf(pos, "formula is nested too deeply (more than %d levels)", MaxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// newNode counts a node against MaxNodes.
func (p *parser) newNode(n node) (*node, *SyntaxError) {
	p.nodes++
	if p.nodes > MaxNodes {
		return nil, p.errorf(n.pos, "formula has too many terms (more than %d)", MaxNodes)
	}
	return &n, nil
}

// ternary = or [ "?" ternary ":" ternary ] .
func (p *parser) ternary() (*node, *SyntaxError) {
	if err := p.enter(p.peek().pos); err != nil {
		return nil, err
	}
	defer p.leave()
	cond, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tQuest {
		return cond, nil
	}
	q := p.next()
	a, err := p.ternary()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tColon, "in c ? a : b"); err != nil {
		return nil, err
	}
	b, err := p.ternary()
	if err != nil {
		return nil, err
	}
	return p.newNode(node{kind: nTernary, pos: q.pos, args: []*node{cond, a, b}})
}

// binaryLevel parses operand { op operand } for the operators ops, left
// associative.
func (p *parser) binaryLevel(operand func() (*node, *SyntaxError), ops ...tokKind) (*node, *SyntaxError) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		found := false
		for _, k := range ops {
			if t.kind == k {
				found = true
				break
			}
		}
		if !found {
			return x, nil
		}
		p.next()
		y, err := operand()
		if err != nil {
			return nil, err
		}
		if x, err = p.newNode(node{kind: nBinary, pos: t.pos, op: t.kind, args: []*node{x, y}}); err != nil {
			return nil, err
		}
	}
}

// or = and { "or" and } .
func (p *parser) or() (*node, *SyntaxError) { return p.binaryLevel(p.and, tOr) }

// and = not { "and" not } .
func (p *parser) and() (*node, *SyntaxError) { return p.binaryLevel(p.not, tAnd) }

// not = "not" not | comparison .
func (p *parser) not() (*node, *SyntaxError) {
	if t := p.peek(); t.kind == tNot {
		return p.prefix(p.not)
	}
	return p.comparison()
}

// comparison = sum [ ("<"|"<="|">"|">="|"=="|"!=") sum ] .
// Comparisons do not chain: a < b < c is an error.
func (p *parser) comparison() (*node, *SyntaxError) {
	x, err := p.sum()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if !isComparison(t.kind) {
		return x, nil
	}
	p.next()
	y, err := p.sum()
	if err != nil {
		return nil, err
	}
	if u := p.peek(); isComparison(u.kind) {
		return nil, p.errorf(u.pos, "comparisons do not chain: use parentheses or and")
	}
	return p.newNode(node{kind: nBinary, pos: t.pos, op: t.kind, args: []*node{x, y}})
}

func isComparison(k tokKind) bool { return k >= tLT && k <= tNE }

// sum = term { ("+"|"-") term } .
func (p *parser) sum() (*node, *SyntaxError) { return p.binaryLevel(p.term, tPlus, tMinus) }

// term = unary { ("*"|"/") unary } .
func (p *parser) term() (*node, *SyntaxError) { return p.binaryLevel(p.unary, tStar, tSlash) }

// unary = "-" unary | power .
func (p *parser) unary() (*node, *SyntaxError) {
	if p.peek().kind == tMinus {
		return p.prefix(p.unary)
	}
	return p.power()
}

// prefix parses a prefix operator ("-" or "not") and its operand.
func (p *parser) prefix(operand func() (*node, *SyntaxError)) (*node, *SyntaxError) {
	t := p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := operand()
	if err != nil {
		return nil, err
	}
	return p.newNode(node{kind: nUnary, pos: t.pos, op: t.kind, args: []*node{x}})
}

// power = postfix [ "^" unary ] .  (right associative: 2^3^2 is 2^(3^2))
func (p *parser) power() (*node, *SyntaxError) {
	x, err := p.postfix()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tCaret {
		return x, nil
	}
	p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	y, err := p.unary()
	if err != nil {
		return nil, err
	}
	return p.newNode(node{kind: nBinary, pos: t.pos, op: tCaret, args: []*node{x, y}})
}

// postfix = primary { "[" ternary "]" } .
func (p *parser) postfix() (*node, *SyntaxError) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tLBrack {
		t := p.next()
		n, err := p.ternary()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRBrack, "to close ["); err != nil {
			return nil, err
		}
		if x, err = p.newNode(node{kind: nIndex, pos: t.pos, args: []*node{x, n}}); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// primary = number | name | name "(" [ ternary { "," ternary } ] ")" | "(" ternary ")" .
func (p *parser) primary() (*node, *SyntaxError) {
	t := p.next()
	switch t.kind {
	case tNum:
		return p.newNode(node{kind: nNum, pos: t.pos, num: t.num, text: t.text})
	case tLParen:
		x, err := p.ternary()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen, "to close ("); err != nil {
			return nil, err
		}
		return x, nil
	case tIdent:
		if p.peek().kind != tLParen {
			return p.newNode(node{kind: nSeries, pos: t.pos, name: t.text})
		}
		p.next()
		call, err := p.newNode(node{kind: nCall, pos: t.pos, name: t.text})
		if err != nil {
			return nil, err
		}
		if p.peek().kind == tRParen {
			p.next()
			return call, nil
		}
		for {
			a, err := p.ternary()
			if err != nil {
				return nil, err
			}
			call.args = append(call.args, a)
			u := p.next()
			if u.kind == tRParen {
				return call, nil
			}
			if u.kind != tComma {
				return nil, p.errorf(u.pos, "expected \",\" or \")\" in the arguments of %s, found %s", cut(t.text), u.describe())
			}
		}
	}
	return nil, p.unexpected(t)
}

// String returns the canonical form of the formula: the same syntax tree
// printed with the fewest parentheses the grammar needs and a space only
// between two words ("close>open and volume>sma(volume,20)"). Numbers keep
// their spelling, as gofmt keeps Go literals. Parse(e.String()) gives an
// Expr with the same String and the same values, and the canonical form is
// never longer than the source, so it always fits within [MaxLen].
func (e *Expr) String() string {
	var w printer
	w.node(e.root, 0)
	return string(w.buf)
}

var _ fmt.Stringer = (*Expr)(nil)
