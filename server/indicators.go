package server

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/marketdata/calendar"
	"github.com/tradekit/tradekit/studies"
)

// appendPoints appends o's defined values to b as the JSON list of
// indicator data points, newest first: date and value, plus MACD's signal
// and histogram or the bands' upper, middle and lower. It is written by
// hand because series are long and this is the hot path: no reflection and
// no allocation per value.
func appendPoints(b []byte, o studies.Output) []byte {
	b = append(b, '[')
	first := true
	for i := len(o.Dates) - 1; i >= 0; i-- {
		if !studies.IsDefined(o.Value[i]) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
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
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendFloat appends x as encoding/json writes a float64, and an
// undefined value as null.
func appendFloat(b []byte, x float64) []byte {
	if !studies.IsDefined(x) {
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

// float writes a float64 as a JSON number, and an undefined value (NaN,
// ±Inf) as null.
type float float64

// MarshalJSON implements [json.Marshaler].
func (f float) MarshalJSON() ([]byte, error) {
	return appendFloat(nil, float64(f)), nil
}

// civilRange returns the from and to query parameters as dates, zero when
// absent; from after to is a 400 naming from.
func civilRange(req bunrouter.Request) (from, to calendar.Date, err error) {
	f, t, err := queryDateRange(req)
	if err != nil {
		return from, to, err
	}
	if !f.IsZero() {
		from = calendar.DateOf(f)
	}
	if !t.IsZero() {
		to = calendar.DateOf(t)
	}
	return from, to, nil
}

// handleIndicatorSeries serves GET /api/v1/indicators/asset/:assetId.
func (s *Server) handleIndicatorSeries(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "assetId")
	if err != nil {
		return err
	}
	q := req.URL.Query()
	if q.Get("indicator") == "" {
		return invalidParam("indicator", "is required: one of %s", strings.Join(studies.Kinds, ", "))
	}
	spec, err := studies.ParseSpec(q.Get("indicator"), q.Get("params"))
	if err != nil {
		return err
	}
	from, to, err := civilRange(req)
	if err != nil {
		return err
	}
	o, _, err := s.studies.Series(req.Context(), id, spec, studies.Daily)
	if err != nil {
		return err
	}
	return s.writeRawData(w, appendPoints(make([]byte, 0, 64*len(o.Dates)), o.Window(from, to)))
}

// latestJSON is an indicator's value at the latest bar: a number, or an
// object for MACD and BB.
func latestJSON(l studies.Latest) any {
	switch l.Spec.Kind {
	case studies.MACD:
		return map[string]float{"value": float(l.Value), "signal": float(l.Signal), "histogram": float(l.Histogram)}
	case studies.BB:
		return map[string]float{"upper": float(l.Upper), "middle": float(l.Value), "lower": float(l.Lower)}
	}
	return float(l.Value)
}

// handleIndicatorSummary serves GET /api/v1/indicators/asset/:assetId/summary.
func (s *Server) handleIndicatorSummary(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "assetId")
	if err != nil {
		return err
	}
	ls, v, err := s.studies.Latest(req.Context(), id, studies.SummarySpecs, []string{studies.Daily})
	if err != nil {
		return err
	}
	out := make(map[string]any, len(ls[0]))
	for _, l := range ls[0] {
		out[l.Spec.Name()] = latestJSON(l)
	}
	return s.writeData(w, map[string]any{
		"assetId":    id.String(),
		"updatedAt":  s.pricesUpdatedAt(v.UpdatedAt),
		"indicators": out,
	})
}

// maxOverlays bounds the indicators of one multi-timeframe request.
const maxOverlays = 12

// handleIndicatorOverlays serves
// GET /api/v1/indicators/asset/:assetId/multi-timeframe.
func (s *Server) handleIndicatorOverlays(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "assetId")
	if err != nil {
		return err
	}
	q := req.URL.Query()
	names, tfs := splitList(q.Get("indicators")), splitList(q.Get("timeframes"))
	if len(names) == 0 {
		return invalidParam("indicators", "is required: a comma-separated list such as RSI,MACD,SMA_50")
	}
	if len(names) > maxOverlays {
		return invalidParam("indicators", "lists %d indicators; at most %d are allowed", len(names), maxOverlays)
	}
	if len(tfs) == 0 {
		return invalidParam("timeframes", "is required: a comma-separated list of %s", strings.Join(studies.Timeframes, ", "))
	}
	var specs []studies.Spec
	for _, n := range names {
		spec, err := studies.ParseName("indicators", n)
		if err != nil {
			return err
		}
		specs = append(specs, spec)
	}
	for _, tf := range tfs {
		if !slices.Contains(studies.Timeframes, tf) {
			return invalidParam("timeframes", "unknown timeframe %q; want %s", tf, strings.Join(studies.Timeframes, ", "))
		}
	}

	ls, v, err := s.studies.Latest(req.Context(), id, specs, tfs)
	if err != nil {
		return err
	}
	overlays := make(map[string]map[string]any, len(specs))
	for i, tf := range tfs {
		for _, l := range ls[i] {
			name := l.Spec.Name()
			if overlays[name] == nil {
				overlays[name] = make(map[string]any, len(tfs))
			}
			overlays[name][tf] = latestJSON(l)
		}
	}
	return s.writeData(w, map[string]any{"assetId": id.String(), "updatedAt": s.pricesUpdatedAt(v.UpdatedAt), "overlays": overlays})
}

// pricesUpdatedAt is the updatedAt of computed values: when the asset's
// prices last changed, or now when that is unknown.
func (s *Server) pricesUpdatedAt(t time.Time) timestamp {
	if t.IsZero() {
		t = s.now()
	}
	return timestamp(t)
}

// splitList splits a comma-separated parameter, dropping blanks and
// repeats.
func splitList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
