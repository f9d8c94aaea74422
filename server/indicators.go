package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/studies"
)

// float writes a float64 as a JSON number, and an undefined value (NaN,
// ±Inf) as null.
type float float64

// MarshalJSON implements [json.Marshaler].
func (f float) MarshalJSON() ([]byte, error) {
	return appendFloat(nil, float64(f)), nil
}

// indicatorSeriesParams are the parameters of GET
// /api/v1/indicators/asset/:assetId.
type indicatorSeriesParams struct {
	AssetID   uuid.UUID  `path:"assetId"`
	Indicator string     `query:"indicator" validate:"required" hint:"one of SMA, EMA, RSI, MACD, BB, ATR"`
	Params    jsonObject `query:"params"`
	dateRange
	adjustment

	spec studies.Spec // of Indicator and Params, set by check
}

// check reads the indicator and its parameters (package studies checks
// them), then the date range.
func (p *indicatorSeriesParams) check() error {
	var err error
	if p.spec, err = studies.ParseSpec(p.Indicator, string(p.Params)); err != nil {
		return err
	}
	return p.dateRange.check()
}

// handleIndicatorSeries serves GET /api/v1/indicators/asset/:assetId.
func (s *Server) handleIndicatorSeries(w http.ResponseWriter, req bunrouter.Request, p *indicatorSeriesParams) error {
	id, spec, from, to, adj := p.AssetID, p.spec, p.From, p.To, p.Adjusted
	v, err := s.studies.PriceVersion(req.Context(), id)
	if err != nil {
		return err
	}
	if notModified(w, req, requestTag("i", v.Version, req)) {
		return nil
	}
	key := "series/" + p.basis() + id.String() + "/" + spec.Key()
	doc, err := s.seriesDoc(key, v.Version, func() (studies.Output, marketdata.PriceVersion, error) {
		return s.studies.Series(req.Context(), id, adj, spec, ohlcv.Daily)
	})
	if err != nil {
		return err
	}
	if !from.IsValid() && !to.IsValid() && acceptsGzip(req.Header.Get("Accept-Encoding")) {
		return s.writeGzipCached(w, "gzip/"+key, v.Version, func(b []byte) ([]byte, error) {
			b = append(b, `{"data":`...)
			return append(doc.appendWindow(b, from, to), "}\n"...), nil
		})
	}
	return s.writeAppended(w, func(b []byte) ([]byte, error) {
		return doc.appendWindow(b, from, to), nil
	})
}

// adjustment is the adjusted parameter of the indicator routes: true
// computes over the prices back-adjusted for splits and dividends
// (marketdata.Adjust), false (the default) over the prices as traded.
type adjustment struct {
	Adjusted bool `query:"adjusted" default:"false"`
}

// basis is the part of a cache key that tells adjusted series from series
// as traded; both are cached under the same price version, which saving
// corporate actions bumps (see package studies).
func (a adjustment) basis() string {
	if a.Adjusted {
		return "adj/"
	}
	return ""
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

// indicatorSummaryParams are the parameters of GET
// /api/v1/indicators/asset/:assetId/summary.
type indicatorSummaryParams struct {
	AssetID uuid.UUID `path:"assetId"`
	adjustment
}

// handleIndicatorSummary serves GET /api/v1/indicators/asset/:assetId/summary.
func (s *Server) handleIndicatorSummary(w http.ResponseWriter, req bunrouter.Request, p *indicatorSummaryParams) error {
	id := p.AssetID
	ls, v, err := s.studies.Latest(req.Context(), id, p.Adjusted, studies.SummarySpecs, []ohlcv.Timeframe{ohlcv.Daily})
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

// indicatorOverlayParams are the parameters of GET
// /api/v1/indicators/asset/:assetId/multi-timeframe.
type indicatorOverlayParams struct {
	AssetID    uuid.UUID `path:"assetId"`
	Indicators string    `query:"indicators" validate:"required" hint:"a comma-separated list such as RSI,MACD,SMA_50"`
	Timeframes string    `query:"timeframes" validate:"required" hint:"a comma-separated list such as 1d,1w,1M"`
	adjustment

	specs []studies.Spec    // of Indicators, set by check
	tfs   []ohlcv.Timeframe // of Timeframes, set by check
}

// check reads the lists of indicators and timeframes.
func (p *indicatorOverlayParams) check() error {
	names, tfNames := splitList(p.Indicators), splitList(p.Timeframes)
	if len(names) == 0 {
		return invalidParam("indicators", "is required: a comma-separated list such as RSI,MACD,SMA_50")
	}
	if len(names) > maxOverlays {
		return invalidParam("indicators", "lists %d indicators; at most %d are allowed", len(names), maxOverlays)
	}
	if len(tfNames) == 0 {
		return invalidParam("timeframes", "is required: a comma-separated list of %s", timeframeList())
	}
	for _, n := range names {
		spec, err := studies.ParseName("indicators", n)
		if err != nil {
			return err
		}
		p.specs = append(p.specs, spec)
	}
	for _, name := range tfNames {
		tf, err := ohlcv.ParseTimeframe(name)
		if err != nil {
			return invalidParam("timeframes", "unknown timeframe %s; want %s", tradekit.Quote(name), timeframeList())
		}
		p.tfs = append(p.tfs, tf)
	}
	return nil
}

// handleIndicatorOverlays serves
// GET /api/v1/indicators/asset/:assetId/multi-timeframe.
func (s *Server) handleIndicatorOverlays(w http.ResponseWriter, req bunrouter.Request, p *indicatorOverlayParams) error {
	id, specs, tfs := p.AssetID, p.specs, p.tfs
	ls, v, err := s.studies.Latest(req.Context(), id, p.Adjusted, specs, tfs)
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
			overlays[name][string(tf)] = latestJSON(l)
		}
	}
	return s.writeData(w, map[string]any{"assetId": id.String(), "updatedAt": s.pricesUpdatedAt(v.UpdatedAt), "overlays": overlays})
}

// timeframeList lists the timeframes for error messages: "1d, 1w, 1M".
func timeframeList() string {
	var names []string
	for _, tf := range ohlcv.Timeframes() {
		names = append(names, string(tf))
	}
	return strings.Join(names, ", ")
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
