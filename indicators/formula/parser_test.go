package formula

import (
	"errors"
	"strings"
	"testing"

	"github.com/tradekit/tradekit"
)

// TestParseErrors checks the message and position of each kind of error.
// Columns were counted by hand on the source text.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the full Error() text
		pos  int    // byte offset
	}{
		{"arity, brief example", "hl2 + 10 - sma(close)", "1:12: sma expects 2 arguments, got 1", 11},
		{"arity at start", "sma(close)", "1:1: sma expects 2 arguments, got 1", 0},
		{"too many", "ema(close, 3, 4)", "1:1: ema expects 2 arguments, got 3", 0},
		{"optional", "change(close, 1, 2)", "1:1: change expects 1 or 2 arguments, got 3", 0},
		{"macd 1 or 4", "macd(close, 12)", "1:1: macd expects 1 or 4 arguments, got 2", 0},
		{"variadic", "min(close)", "1:1: min expects at least 2 arguments, got 1", 0},
		{"singular", "atr()", "1:1: atr expects 1 argument, got 0", 0},
		{"no arguments", "obv(close)", "1:1: obv expects 0 arguments, got 1", 0},
		{"0 or 3", "stoch_k(5)", "1:1: stoch_k expects 0 or 3 arguments, got 1", 0},
		{"adx needs 2", "adx(1)", "1:5: adx length must be an integer from 2 to 10000, got 1", 4},
		{"period zero", "sma(close, 0)", "1:12: sma length must be an integer from 1 to 10000, got 0", 11},
		{"period too long", "sma(close, 10001)", "1:12: sma length must be an integer from 1 to 10000, got 10001", 11},
		{"period fraction", "sma(close, 2.5)", "1:12: sma length must be an integer from 1 to 10000, got 2.5", 11},
		{"period negative", "sma(close, -3)", "1:12: sma length must be an integer from 1 to 10000, got -3", 11},
		{"period series", "sma(close, close)", "1:12: sma length must be a constant, not a series", 11},
		{"period undefined", "sma(close, 0/0)", "1:12: sma length must be an integer from 1 to 10000, got NaN", 11},
		{"rsi needs 2", "rsi(close, 1)", "1:12: rsi length must be an integer from 2 to 10000, got 1", 11},
		{"lag negative", "close[-1]", "1:7: lag in [] must be an integer from 0 to 10000, got -1", 6},
		{"lag series", "close[open]", "1:7: lag in [] must be a constant, not a series", 6},
		{"lag() too long", "lag(close, 20000)", "1:12: lag n must be an integer from 0 to 10000, got 20000", 11},
		{"bb k series", "bb_upper(close, 20, close)", "1:21: bb_upper k must be a constant, not a series", 20},
		{"unknown function", "foo(close)", `1:1: unknown function "foo"`, 0},
		{"unknown name", "close + foo", `1:9: unknown name "foo" (the series are open, high, low, close, volume, hl2, hlc3, ohlc4)`, 8},
		{"case matters", "Close", `1:1: unknown name "Close" (the series are open, high, low, close, volume, hl2, hlc3, ohlc4)`, 0},
		{"series called", "close(1)", "1:1: close is a series, not a function", 0},
		{"function uncalled", "sma + 1", "1:1: sma is a function: call it as sma(...)", 0},
		{"dangling operator", "1 +", "1:4: unexpected end of formula", 3},
		{"empty", "", "1:1: formula is empty", 0},
		{"blank", "   ", "1:4: formula is empty", 3},
		{"unclosed paren", "(close", `1:7: expected ")" to close (, found end of formula`, 6},
		{"stray paren", "close)", `1:6: unexpected ")"`, 5},
		{"missing comma", "sma(close 3)", `1:11: expected "," or ")" in the arguments of sma, found "3"`, 10},
		{"unclosed bracket", "close[1", `1:8: expected "]" to close [, found end of formula`, 7},
		{"bad character", "close $ 1", "1:7: unexpected character '$'", 6},
		{"assignment", "close = 1", `1:7: unexpected "=" (use == to compare)`, 6},
		{"bang", "!close", `1:1: unexpected "!" (use not, or != to compare)`, 0},
		{"chained comparison", "1 < 2 < 3", "1:7: comparisons do not chain: use parentheses or and", 6},
		{"half ternary", "1 ? 2", `1:6: expected ":" in c ? a : b, found end of formula`, 5},
		{"keyword as operand", "close and", "1:10: unexpected end of formula", 9},
		{"number overflow", "1e400", "1:1: number 1e400 is out of range", 0},
		{"trailing point", "1.e3", `1:1: malformed number "1.": a digit must follow the decimal point`, 0},
		{"bare exponent", "2e+", `1:1: malformed number "2e+": the exponent needs digits`, 0},
		{"number into letter", "2x", `1:1: malformed number "2x"`, 0},
		{"leading point", ".5", "1:1: a number must start with a digit", 0},
		{"second line", "close\n  + sma(close)", "2:5: sma expects 2 arguments, got 1", 10},
		{"non-ASCII", "close + é", "1:9: unexpected character 'é'", 8},
		{"invalid UTF-8", "close\xff", "1:6: invalid UTF-8 byte 0xff", 5},
		{"too long", strings.Repeat("1+", 500) + "1", "1:1001: formula is longer than 1000 characters", 1000},
		{"too deep", strings.Repeat("(", 51) + "1" + strings.Repeat(")", 51), "1:51: formula is nested too deeply (more than 50 levels)", 50},
		{"too many nodes", "close" + strings.Repeat("+close", 150), "1:900: formula has too many terms (more than 300)", 899},
		// What a user wrote is echoed 64 characters at most.
		{"long unknown name", strings.Repeat("x", 900), `1:1: unknown name "` + strings.Repeat("x", 64) + `"… (the series are ` +
			"open, high, low, close, volume, hl2, hlc3, ohlc4)", 0},
		{"long unknown function", strings.Repeat("f", 900) + "(close)", `1:1: unknown function "` + strings.Repeat("f", 64) + `"…`, 0},
		{"long arguments", strings.Repeat("f", 900) + "(close 3)", "1:908: expected \",\" or \")\" in the arguments of " +
			strings.Repeat("f", 64) + `…, found "3"`, 907},
		{"long unexpected token", "close " + strings.Repeat("y", 900), `1:7: unexpected "` + strings.Repeat("y", 64) + `"…`, 6},
		{"long malformed number", strings.Repeat("9", 900) + "x", `1:1: malformed number "` + strings.Repeat("9", 64) + `"…`, 0},
		{"long number out of range", "1" + strings.Repeat("0", 400), "1:1: number 1" + strings.Repeat("0", 63) + "… is out of range", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error %q", tt.src, e, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got %q\nwant %q", tt.src, got, tt.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error has type %T, want *SyntaxError", err)
			}
			if se.Pos != tt.pos {
				t.Errorf("Pos = %d, want %d", se.Pos, tt.pos)
			}
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("error does not wrap tradekit.ErrInvalid")
			}
		})
	}
}

// TestParseLimitsAccepted checks that formulas right at each limit parse.
func TestParseLimitsAccepted(t *testing.T) {
	for _, src := range []string{
		"close" + strings.Repeat(" ", MaxLen-len("close")), // exactly MaxLen bytes
		strings.Repeat("(", 49) + "1" + strings.Repeat(")", 49),
		"close" + strings.Repeat("+close", 149), // 299 nodes
		"sma(close, 10000) + close[10000] + lag(close, 0)",
	} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%.40q...) = %v, want success", src, err)
		}
	}
}

// TestString checks the canonical form: fewest parentheses, no optional
// spaces, shortest numbers.
func TestString(t *testing.T) {
	tests := []struct{ src, want string }{
		{"( close + 1 )", "close+1"},
		{"close - (open - 1)", "close-(open-1)"},
		{"(close - open) - 1", "close-open-1"},
		{"(1 + 2) * 3", "(1+2)*3"},
		{"1 + (2 * 3)", "1+2*3"},
		{"2 ^ (3 ^ 2)", "2^3^2"},
		{"(2 ^ 3) ^ 2", "(2^3)^2"},
		{"-(2 ^ 2)", "-2^2"},
		{"(-2) ^ 2", "(-2)^2"},
		{"2 ^ (-1)", "2^-1"},
		{"1 - -1", "1--1"},
		{"not (close > open)", "not close>open"},
		{"(not 1) and 0", "not 1 and 0"},
		{"not (1 and 0)", "not(1 and 0)"},
		{"close > open and (open > 1 or close < 2)", "close>open and(open>1 or close<2)"},
		{"(1 < 2) == 1", "(1<2)==1"},
		{"(close > 1 ? 1 : 0) ? 2 : 3", "(close>1?1:0)?2:3"},
		{"1 ? 2 : (3 ? 4 : 5)", "1?2:3?4:5"},
		{"1 ? (2 ? 3 : 4) : 5", "1?2?3:4:5"},
		{"0.50 + 1E3 + 1.5e300", "0.50+1E3+1.5e300"},
		{"sma( close , 20 )", "sma(close,20)"},
		{"close [ 1 ]", "close[1]"},
		{"(close)[1]", "close[1]"},
		{"(close + 1)[1]", "(close+1)[1]"},
		{"if ( 1 , 2 , 3 )", "if(1,2,3)"},
		{"close > 1\n and\n volume > 2", "close>1 and volume>2"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.src, got, tt.want)
		}
	}
}
