package bulk

import (
	"bytes"
	"strconv"
)

// fastDec is a plain decimal number ("187.149994") of at most 15
// significant digits: its canonical text, as decimal.Decimal.String gives
// it (no leading or trailing zeros), and its float64, which orders such
// numbers exactly.
type fastDec struct {
	text []byte
	f    float64
}

// parse reads b into d and reports whether b is a plain decimal that
// fastDec can hold (digits with at most one dot, no sign); for anything
// else the caller uses package decimal.
func (d *fastDec) parse(b []byte) bool {
	if bytes.IndexByte(b, '.') >= 0 {
		b = bytes.TrimRight(b, "0")
	}
	var m int64
	sig, frac, dot := 0, 0, -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if m == 0 && c == '0' {
				if dot >= 0 {
					frac++
				}
				continue
			}
			m = m*10 + int64(c-'0')
			sig++
			if dot >= 0 {
				frac++
			}
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	if sig > 15 || frac > 22 || len(b) == 0 || (dot >= 0 && len(b) == 1) {
		return false
	}
	for frac > 0 && m%10 == 0 && m != 0 {
		m /= 10
		frac--
	}
	if m == 0 {
		frac = 0
	}
	d.f = float64(m)
	if frac > 0 {
		d.f /= fastPow10[frac]
	}
	// The text: m with a dot frac digits from the right.
	var digits [24]byte
	s := strconv.AppendInt(digits[:0], m, 10)
	d.text = d.text[:0]
	if frac == 0 {
		d.text = append(d.text, s...)
		return true
	}
	if len(s) <= frac {
		d.text = append(d.text, "0."...)
		for range frac - len(s) {
			d.text = append(d.text, '0')
		}
		d.text = append(d.text, s...)
		return true
	}
	d.text = append(d.text, s[:len(s)-frac]...)
	d.text = append(d.text, '.')
	d.text = append(d.text, s[len(s)-frac:]...)
	return true
}

// fastPow10 holds the powers of ten that fastDec divides by: exact float64s,
// so m / 10^k is the float64 nearest the decimal (correctly rounded).
var fastPow10 = func() []float64 {
	out := make([]float64, 61)
	out[0] = 1
	for i := 1; i < len(out); i++ {
		out[i] = out[i-1] * 10
	}
	return out
}()
