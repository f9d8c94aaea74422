package studies

import (
	"math"
	"strconv"

	"github.com/tradekit/tradekit/marketdata/calendar"
)

// Encoded is an Output written once as the API's JSON list of data points,
// newest first, with an index by date, so that any window of it is a slice
// of bytes: the cached answer of a series request costs a copy, not ten
// thousand float formattings.
type Encoded struct {
	dates []calendar.Date
	data  []byte // the points with a comma after each, newest first
	// end[i] is the length of the points dated at index i and later;
	// end[len(dates)] is 0. The window [lo, hi) is data[end[hi]:end[lo]].
	end []int32
}

// Encode writes o's defined values as JSON data points: date and value,
// plus MACD's signal and histogram or the bands' upper, middle and lower.
func Encode(o Output) *Encoded {
	n := len(o.Dates)
	e := &Encoded{dates: o.Dates, data: make([]byte, 0, 48*n), end: make([]int32, n+1)}
	for i := n - 1; i >= 0; i-- {
		e.end[i+1] = int32(len(e.data))
		if IsDefined(o.Value[i]) {
			e.data = appendPoint(e.data, o, i)
			e.data = append(e.data, ',')
		}
	}
	e.end[0] = int32(len(e.data))
	return e
}

// AppendWindow appends the JSON list of the points dated from from to to,
// inclusive (a zero bound is open), to b.
func (e *Encoded) AppendWindow(b []byte, from, to calendar.Date) []byte {
	lo, hi := window(e.dates, from, to)
	seg := e.data[e.end[hi]:e.end[lo]]
	b = append(b, '[')
	if len(seg) > 0 {
		b = append(b, seg[:len(seg)-1]...) // without the last comma
	}
	return append(b, ']')
}

// size is the memory e holds, for the cache's accounting.
func (e *Encoded) size() int { return cap(e.data) + 4*len(e.end) }

// appendPoint appends the data point at index i of o.
func appendPoint(b []byte, o Output, i int) []byte {
	b = append(b, `{"date":"`...)
	b, _ = o.Dates[i].AppendText(b)
	b = append(b, `","value":`...)
	b = AppendFloat(b, o.Value[i])
	if o.Signal != nil {
		b = append(b, `,"signal":`...)
		b = AppendFloat(b, o.Signal[i])
		b = append(b, `,"histogram":`...)
		b = AppendFloat(b, o.Histogram[i])
	}
	if o.Upper != nil {
		b = append(b, `,"upper":`...)
		b = AppendFloat(b, o.Upper[i])
		b = append(b, `,"middle":`...)
		b = AppendFloat(b, o.Value[i])
		b = append(b, `,"lower":`...)
		b = AppendFloat(b, o.Lower[i])
	}
	return append(b, '}')
}

// AppendFloat appends x as encoding/json writes a float64 (the shortest
// text that reads back as x), and an undefined value as null.
func AppendFloat(b []byte, x float64) []byte {
	if !IsDefined(x) {
		return append(b, "null"...)
	}
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' { // e-07 → e-7, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
