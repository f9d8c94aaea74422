package indicators

import "math"

// ParabolicSAR returns Wilder's parabolic stop and reverse, as TA-Lib's
// SAR. The direction at bar 1 is short if bar 1 has a positive -DM
// (low fell more than high rose), else long; the first SAR is bar 0's low
// (long) or high (short). Each bar then:
//
//	SAR = SAR + af * (EP - SAR),  clamped not to cross the last two bars' lows (long) or highs (short)
//
// where EP is the extreme point of the trend and af starts at acceleration
// and grows by it at each new EP up to maximum; a bar crossing the SAR
// reverses the trend, the SAR becoming the previous EP. TA-Lib's defaults
// are 0.02 and 0.2 (an acceleration above maximum is lowered to it). The
// first value is NaN (lookback 1). ParabolicSAR panics if the inputs differ
// in length.
func ParabolicSAR(high, low []float64, acceleration, maximum float64) []float64 {
	checkLen("ParabolicSAR", len(high), len(low))
	s := NewParabolicSARStream(acceleration, maximum)
	out := make([]float64, len(high))
	for i := range high {
		out[i] = s.Next(high[i], low[i])
	}
	return out
}

// ParabolicSARStream computes [ParabolicSAR] one bar at a time. Create it
// with [NewParabolicSARStream].
type ParabolicSARStream struct {
	accel, max       float64
	n                int // bars seen, capped at 2
	isLong           bool
	af, ep, sar      float64
	lastHigh, lastLo float64
}

// NewParabolicSARStream returns a stream giving the same values as
// [ParabolicSAR].
func NewParabolicSARStream(acceleration, maximum float64) *ParabolicSARStream {
	if acceleration > maximum {
		acceleration = maximum
	}
	return &ParabolicSARStream{accel: acceleration, max: maximum, af: acceleration}
}

// Next adds a bar and returns the SAR for it (NaN for the first bar).
func (s *ParabolicSARStream) Next(high, low float64) float64 {
	c := *s
	v := c.step(high, low)
	*s = c
	return v
}

// Peek returns what [ParabolicSARStream.Next] would return for the bar
// without changing the stream.
func (s *ParabolicSARStream) Peek(high, low float64) float64 {
	c := *s
	return c.step(high, low)
}

func (s *ParabolicSARStream) step(newHigh, newLow float64) float64 {
	if s.n == 0 {
		s.lastHigh, s.lastLo = newHigh, newLow
		s.n = 1
		return math.NaN()
	}
	prevHigh, prevLow := s.lastHigh, s.lastLo
	if s.n == 1 {
		diffP := newHigh - prevHigh
		diffM := prevLow - newLow
		s.isLong = !(diffM > 0 && diffP < diffM)
		if s.isLong {
			s.ep, s.sar = newHigh, prevLow
		} else {
			s.ep, s.sar = newLow, prevHigh
		}
		prevHigh, prevLow = newHigh, newLow // TA-Lib's first step sees bar 1 as its own predecessor
		s.n = 2
	}
	s.lastHigh, s.lastLo = newHigh, newLow
	var out float64
	if s.isLong {
		if newLow <= s.sar {
			s.isLong = false
			s.sar = math.Max(math.Max(s.ep, prevHigh), newHigh)
			out = s.sar
			s.af = s.accel
			s.ep = newLow
			s.sar = s.sar + s.af*(s.ep-s.sar)
			s.sar = floorAt(s.sar, prevHigh, newHigh)
		} else {
			out = s.sar
			if newHigh > s.ep {
				s.ep = newHigh
				s.af += s.accel
				if s.af > s.max {
					s.af = s.max
				}
			}
			s.sar = s.sar + s.af*(s.ep-s.sar)
			s.sar = capAt(s.sar, prevLow, newLow)
		}
	} else {
		if newHigh >= s.sar {
			s.isLong = true
			s.sar = capAt(s.ep, prevLow, newLow)
			out = s.sar
			s.af = s.accel
			s.ep = newHigh
			s.sar = s.sar + s.af*(s.ep-s.sar)
			s.sar = capAt(s.sar, prevLow, newLow)
		} else {
			out = s.sar
			if newLow < s.ep {
				s.ep = newLow
				s.af += s.accel
				if s.af > s.max {
					s.af = s.max
				}
			}
			s.sar = s.sar + s.af*(s.ep-s.sar)
			s.sar = floorAt(s.sar, prevHigh, newHigh)
		}
	}
	return out
}

// capAt lowers v to a or b when it is above them (TA-Lib's "if sar > x then sar = x").
func capAt(v, a, b float64) float64 {
	if v > a {
		v = a
	}
	if v > b {
		v = b
	}
	return v
}

// floorAt raises v to a or b when it is below them.
func floorAt(v, a, b float64) float64 {
	if v < a {
		v = a
	}
	if v < b {
		v = b
	}
	return v
}
