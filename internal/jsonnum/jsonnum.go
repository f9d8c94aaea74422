package jsonnum

import (
	"bytes"
	"math"
	"strconv"
)

// Digits is the most significant digits a number is written with.
const Digits = 15

// AppendFloat appends x rounded to [Digits] significant digits, in its
// shortest form, as encoding/json writes a float64. x must be finite.
func AppendFloat(b []byte, x float64) []byte {
	if r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', Digits, 64), 64); err == nil {
		x = r
	}
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' { // e-07 → e-7, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendNumber appends n, the text of a JSON number (a decimal's, say), as
// it is when it has at most [Digits] significant digits, else rounded to
// them by [AppendFloat].
func AppendNumber(b []byte, n string) []byte {
	if significant([]byte(n)) <= Digits {
		return append(b, n...)
	}
	x, err := strconv.ParseFloat(n, 64)
	if err != nil || math.IsInf(x, 0) {
		return append(b, n...)
	}
	return AppendFloat(b, x)
}

// Round returns the JSON document doc with each number of more than
// [Digits] significant digits rewritten by [AppendFloat]; doc itself,
// unchanged, when it has none. Strings are left as they are. doc must be
// valid JSON.
func Round(doc []byte) []byte {
	var out []byte // nil until a number changes
	last := 0      // doc[last:] is not yet in out
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case c == '"':
			i = skipString(doc, i)
		case c == '-' || c >= '0' && c <= '9':
			start := i
			i = skipNumber(doc, i)
			if significant(doc[start:i]) <= Digits {
				continue
			}
			x, err := strconv.ParseFloat(string(doc[start:i]), 64)
			if err != nil || math.IsInf(x, 0) {
				continue
			}
			if out == nil {
				out = make([]byte, 0, len(doc))
			}
			out = append(out, doc[last:start]...)
			out = AppendFloat(out, x)
			last = i
		default:
			i++
		}
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}

// skipString returns the index just after the string that starts at
// doc[i], a quote.
func skipString(doc []byte, i int) int {
	for i++; ; i++ {
		j := bytes.IndexByte(doc[i:], '"')
		if j < 0 {
			return len(doc)
		}
		i += j
		escapes := 0 // the backslashes just before the quote
		for k := i - 1; k >= 0 && doc[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i + 1
		}
	}
}

// skipNumber returns the index just after the number that starts at
// doc[i].
func skipNumber(doc []byte, i int) int {
	for ; i < len(doc); i++ {
		switch c := doc[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return i
		}
	}
	return i
}

// significant returns the number of significant digits of the JSON
// number n: those of its mantissa, leading zeros left out (trailing ones
// counted, as written).
func significant(n []byte) int {
	count, leading := 0, true
	for _, c := range n {
		switch {
		case c == 'e' || c == 'E':
			return count
		case c == '0' && leading:
		case c >= '0' && c <= '9':
			leading = false
			count++
		}
	}
	return count
}
