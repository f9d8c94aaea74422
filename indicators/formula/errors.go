package formula

import (
	"fmt"
	"unicode/utf8"

	"github.com/tradekit/tradekit"
)

// SyntaxError reports a formula that cannot be parsed or fails the check
// (unknown name, wrong number of arguments, a window that is not a constant
// integer in range, a limit exceeded). Every error returned by [Parse] has
// this concrete type, and it wraps [tradekit.ErrInvalid].
//
// Its message has the form "line:col: problem", for example
//
//	1:12: sma expects 2 arguments, got 1
type SyntaxError struct {
	Pos  int    // byte offset of the problem in the source, 0 <= Pos <= len(src)
	Line int    // 1-based line of Pos
	Col  int    // 1-based column of Pos, counted in characters
	Msg  string // the problem, without position
}

// Error returns "line:col: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap returns [tradekit.ErrInvalid], so errors.Is(err, tradekit.ErrInvalid)
// holds for every syntax error.
func (e *SyntaxError) Unwrap() error { return tradekit.ErrInvalid }

// newSyntaxError builds a SyntaxError at byte offset pos of src, computing
// its line and column.
func newSyntaxError(src string, pos int, format string, args ...any) *SyntaxError {
	if pos < 0 {
		pos = 0
	}
	if pos > len(src) {
		pos = len(src)
	}
	line, col := 1, 1
	for i := 0; i < pos; {
		r, size := utf8.DecodeRuneInString(src[i:])
		i += size
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Pos: pos, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// cut returns s cut to its first [tradekit.MaxQuoted] characters, with an
// ellipsis when longer, for a message that names what a user wrote
// unquoted; [tradekit.Quote] does the same for quoted text.
func cut(s string) string {
	n := 0
	for i := range s {
		if n == tradekit.MaxQuoted {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
