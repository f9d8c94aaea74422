package indicators

import "math"

// OBV returns on-balance volume, as TA-Lib's OBV: it starts at volume[0]
// and adds each bar's volume when close rises, subtracts it when close
// falls. It has no warm-up (lookback 0). OBV panics if the inputs differ
// in length.
func OBV(close, volume []float64) []float64 {
	checkLen("OBV", len(close), len(volume))
	out := make([]float64, len(close))
	var s OBVStream
	for i := range close {
		out[i] = s.Next(close[i], volume[i])
	}
	return out
}

// OBVStream computes [OBV] one bar at a time. Its zero value is ready to
// use.
type OBVStream struct {
	started   bool
	prevClose float64
	obv       float64
}

// NewOBVStream returns a stream giving the same values as [OBV].
func NewOBVStream() *OBVStream { return &OBVStream{} }

// Next adds a bar and returns the OBV at it.
func (s *OBVStream) Next(close, volume float64) float64 {
	v := s.Peek(close, volume)
	s.started, s.prevClose, s.obv = true, close, v
	return v
}

// Peek returns what [OBVStream.Next] would return for the bar without
// changing the stream.
func (s *OBVStream) Peek(close, volume float64) float64 {
	switch {
	case !s.started:
		return volume
	case close > s.prevClose:
		return s.obv + volume
	case close < s.prevClose:
		return s.obv - volume
	}
	return s.obv
}

// MFI returns the money flow index, as TA-Lib's MFI:
//
//	tp   = (high + low + close) / 3,  flow = tp * volume
//	pos  = sum of flow over the last period bars where tp rose, neg where it fell
//	MFI  = 100 * pos / (pos + neg)   (0 when pos + neg < 1, as TA-Lib)
//
// The first period values are NaN (lookback period). MFI panics if
// period < 1 or the inputs differ in length.
func MFI(high, low, close, volume []float64, period int) []float64 {
	n := len(close)
	checkLen("MFI", n, len(high), len(low), len(volume))
	s := NewMFIStream(period)
	out := make([]float64, n)
	for i := range close {
		out[i] = s.Next(high[i], low[i], close[i], volume[i])
	}
	return out
}

// MFIStream computes [MFI] one bar at a time. Create it with
// [NewMFIStream].
type MFIStream struct {
	pos, neg []float64 // flows of the last period bars, by slot
	idx      int
	n        int // bars seen, capped at period+1
	prevTP   float64
	sumPos   float64
	sumNeg   float64
}

// NewMFIStream returns a stream giving the same values as [MFI]. It panics
// if period < 1.
func NewMFIStream(period int) *MFIStream {
	checkPeriod("MFI", period, 1)
	return &MFIStream{pos: make([]float64, period), neg: make([]float64, period)}
}

// Next adds a bar and returns the MFI at it (NaN during the first period
// bars).
func (s *MFIStream) Next(high, low, close, volume float64) float64 {
	return s.update(high, low, close, volume, true)
}

// Peek returns what [MFIStream.Next] would return for the bar without
// changing the stream.
func (s *MFIStream) Peek(high, low, close, volume float64) float64 {
	return s.update(high, low, close, volume, false)
}

func (s *MFIStream) update(high, low, close, volume float64, commit bool) float64 {
	tp := (high + low + close) / 3.0
	if s.n == 0 {
		if commit {
			s.prevTP = tp
			s.n = 1
		}
		return math.NaN()
	}
	p := len(s.pos)
	sumPos, sumNeg := s.sumPos, s.sumNeg
	if s.n > p { // the window is full: drop the flow leaving it
		sumPos -= s.pos[s.idx]
		sumNeg -= s.neg[s.idx]
	}
	d := tp - s.prevTP
	flow := tp * volume
	var fp, fn float64
	switch {
	case d < 0:
		fn = flow
		sumNeg += flow
	case d > 0:
		fp = flow
		sumPos += flow
	}
	v := math.NaN()
	if s.n >= p {
		t := sumPos + sumNeg
		if t < 1.0 {
			v = 0
		} else {
			v = 100.0 * (sumPos / t)
		}
	}
	if commit {
		s.pos[s.idx], s.neg[s.idx] = fp, fn
		s.idx++
		if s.idx == p {
			s.idx = 0
		}
		s.prevTP, s.sumPos, s.sumNeg = tp, sumPos, sumNeg
		if s.n <= p {
			s.n++
		}
	}
	return v
}

// VWAP returns the cumulative volume-weighted average price from the first
// bar, on the typical price:
//
//	VWAP[i] = sum(tp[0..i] * volume[0..i]) / sum(volume[0..i]),  tp = (high+low+close)/3
//
// NaN while the summed volume is 0. Pass one session's bars to get the
// usual intraday VWAP (TA-Lib has no VWAP). VWAP panics if the inputs
// differ in length.
func VWAP(high, low, close, volume []float64) []float64 {
	n := len(close)
	checkLen("VWAP", n, len(high), len(low), len(volume))
	out := make([]float64, n)
	var s VWAPStream
	for i := range close {
		out[i] = s.Next(high[i], low[i], close[i], volume[i])
	}
	return out
}

// VWAPStream computes [VWAP] one bar at a time. Its zero value is ready to
// use; [VWAPStream.Reset] starts a new session.
type VWAPStream struct{ pv, vol float64 }

// Next adds a bar and returns the VWAP since the first bar (or the last
// Reset).
func (s *VWAPStream) Next(high, low, close, volume float64) float64 {
	tp := (high + low + close) / 3
	s.pv += tp * volume
	s.vol += volume
	return vwapValue(s.pv, s.vol)
}

// Peek returns what [VWAPStream.Next] would return for the bar without
// changing the stream.
func (s *VWAPStream) Peek(high, low, close, volume float64) float64 {
	c := *s
	return c.Next(high, low, close, volume)
}

// Reset forgets every bar, as at the start of a session.
func (s *VWAPStream) Reset() { *s = VWAPStream{} }

func vwapValue(pv, vol float64) float64 {
	if vol == 0 {
		return math.NaN()
	}
	return pv / vol
}

// RollingVWAP returns the volume-weighted average of the typical price over
// the last period bars:
//
//	RollingVWAP[i] = sum(tp*volume) / sum(volume)   over bars i-period+1..i
//
// computed directly over each window (no running sums, so no drift). The
// first period-1 values are NaN, as are windows with no volume.
// RollingVWAP panics if period < 1 or the inputs differ in length.
func RollingVWAP(high, low, close, volume []float64, period int) []float64 {
	checkPeriod("RollingVWAP", period, 1)
	n := len(close)
	checkLen("RollingVWAP", n, len(high), len(low), len(volume))
	out := make([]float64, n)
	fillNaN(out)
	for i := period - 1; i < n; i++ {
		var pv, vol float64
		for j := i - period + 1; j <= i; j++ {
			pv += (high[j] + low[j] + close[j]) / 3 * volume[j]
			vol += volume[j]
		}
		out[i] = vwapValue(pv, vol)
	}
	return out
}

// RollingVWAPStream computes [RollingVWAP] one bar at a time, in O(period)
// per bar. Create it with [NewRollingVWAPStream].
type RollingVWAPStream struct {
	pv, vol window // tp*volume and volume of the last period-1 bars
}

// NewRollingVWAPStream returns a stream giving the same values as
// [RollingVWAP]. It panics if period < 1.
func NewRollingVWAPStream(period int) *RollingVWAPStream {
	checkPeriod("RollingVWAP", period, 1)
	return &RollingVWAPStream{pv: newWindow(period - 1), vol: newWindow(period - 1)}
}

// Next adds a bar and returns the VWAP of the last period bars (NaN during
// the first period-1 bars and for windows without volume).
func (s *RollingVWAPStream) Next(high, low, close, volume float64) float64 {
	v := s.Peek(high, low, close, volume)
	s.pv.push((high + low + close) / 3 * volume)
	s.vol.push(volume)
	return v
}

// Peek returns what [RollingVWAPStream.Next] would return for the bar
// without changing the stream.
func (s *RollingVWAPStream) Peek(high, low, close, volume float64) float64 {
	if !s.pv.full() {
		return math.NaN()
	}
	var pv, vol float64
	for i := 0; i < s.pv.n; i++ { // oldest first, as RollingVWAP sums
		pv += s.pv.at(i)
		vol += s.vol.at(i)
	}
	pv += (high + low + close) / 3 * volume
	vol += volume
	return vwapValue(pv, vol)
}
