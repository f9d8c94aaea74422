package server

import (
	"math"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/studies"
)

// seriesDocument is an indicator series written once as the API's JSON
// list of data points, newest first, with an index by date, so that any
// window of it is a slice of bytes: the cached answer of a series request
// costs a copy, not ten thousand float formattings.
type seriesDocument struct {
	dates []calendar.Date
	data  []byte // the points with a comma after each, newest first
	// end[i] is the length of the points dated at index i and later;
	// end[len(dates)] is 0. The window [lo, hi) is data[end[hi]:end[lo]].
	end []int32
}

// newSeriesDocument writes o's defined values as JSON data points: date
// and value, plus MACD's signal and histogram or the bands' upper, middle
// and lower.
func newSeriesDocument(o studies.Output) *seriesDocument {
	n := len(o.Dates)
	d := &seriesDocument{dates: o.Dates, data: make([]byte, 0, 48*n), end: make([]int32, n+1)}
	for i := n - 1; i >= 0; i-- {
		d.end[i+1] = int32(len(d.data))
		if isDefined(o.Value[i]) {
			d.data = appendPoint(d.data, o, i)
			d.data = append(d.data, ',')
		}
	}
	d.end[0] = int32(len(d.data))
	return d
}

// appendWindow appends the JSON list of the points dated from from to to,
// inclusive (a zero bound is open), to b.
func (d *seriesDocument) appendWindow(b []byte, from, to calendar.Date) []byte {
	lo, hi := ohlcv.Between(d.dates, from, to)
	seg := d.data[d.end[hi]:d.end[lo]]
	b = append(b, '[')
	if len(seg) > 0 {
		b = append(b, seg[:len(seg)-1]...) // without the last comma
	}
	return append(b, ']')
}

// size is the memory d holds, for the cache's accounting.
func (d *seriesDocument) size() int { return cap(d.data) + 4*len(d.end) }

// seriesDoc returns the document of the series named key (the asset, and
// what was computed over it) at price version version from the cache, or
// computes it, encodes it and caches it under the version compute read
// the prices at.
func (s *Server) seriesDoc(key string, version int64, compute func() (studies.Output, marketdata.PriceVersion, error)) (*seriesDocument, error) {
	d, ok := s.docs.Get(key, version)
	s.metrics.cacheLookup(cacheIndicators, ok)
	if ok {
		return d.(*seriesDocument), nil
	}
	o, v, err := compute()
	if err != nil {
		return nil, err
	}
	doc := newSeriesDocument(o)
	s.docs.Put(key, v.Version, doc, doc.size())
	return doc, nil
}

// appendPoint appends the data point at index i of o.
func appendPoint(b []byte, o studies.Output, i int) []byte {
	b = append(b, `{"date":"`...)
	b, _ = o.Dates[i].AppendText(b)
	b = append(b, `","value":`...)
	b = appendFloat(b, o.Value[i])
	if o.Signal != nil {
		b = append(b, `,"signal":`...)
		b = appendFloat(b, o.Signal[i])
		b = append(b, `,"histogram":`...)
		b = appendFloat(b, o.Histogram[i])
	}
	if o.Upper != nil {
		b = append(b, `,"upper":`...)
		b = appendFloat(b, o.Upper[i])
		b = append(b, `,"middle":`...)
		b = appendFloat(b, o.Value[i])
		b = append(b, `,"lower":`...)
		b = appendFloat(b, o.Lower[i])
	}
	return append(b, '}')
}

// isDefined reports whether x is a value: not NaN and not ±Inf.
func isDefined(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// appendFloat appends x as [jsonnum.AppendFloat] writes it (at most 15
// significant digits), and an undefined value as null.
func appendFloat(b []byte, x float64) []byte {
	if !isDefined(x) {
		return append(b, "null"...)
	}
	return jsonnum.AppendFloat(b, x)
}
