package indicators

// window holds the last size values of a stream in a ring. It lets a
// stream look up the value leaving its window and replace it on commit.
type window struct {
	buf []float64
	pos int // slot of the oldest value, overwritten next
	n   int // values held, at most len(buf)
}

func newWindow(size int) window { return window{buf: make([]float64, size)} }

// full reports whether the window holds size values.
func (w *window) full() bool { return w.n == len(w.buf) }

// oldest returns the oldest value held; the window must be full and non-empty.
func (w *window) oldest() float64 { return w.buf[w.pos] }

// push adds x, dropping the oldest value when full.
func (w *window) push(x float64) {
	if len(w.buf) == 0 {
		return
	}
	if w.n < len(w.buf) {
		w.buf[(w.pos+w.n)%len(w.buf)] = x
		w.n++
		return
	}
	w.buf[w.pos] = x
	w.pos++
	if w.pos == len(w.buf) {
		w.pos = 0
	}
}

// at returns the i-th oldest value held (0 is the oldest).
func (w *window) at(i int) float64 {
	j := w.pos + i
	if j >= len(w.buf) {
		j -= len(w.buf)
	}
	return w.buf[j]
}

// emaState is TA-Lib's INT_EMA one input at a time: it sums the first
// period inputs, seeds with their mean, then smooths with k = 2/(period+1).
type emaState struct {
	period int
	k      float64
	n      int
	v      float64 // the running sum during the warm-up, then the EMA
}

func newEMAState(period int) emaState { return emaState{period: period, k: perToK(period)} }

// add returns the EMA after x and whether it is defined yet.
func (e *emaState) add(x float64) (float64, bool) {
	if e.n < e.period {
		e.v += x
		e.n++
		if e.n < e.period {
			return 0, false
		}
		e.v /= float64(e.period)
		return e.v, true
	}
	e.v = (x-e.v)*e.k + e.v
	return e.v, true
}
