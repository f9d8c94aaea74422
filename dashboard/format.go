package dashboard

import (
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/copytrading"
)

// funcs are the templates' formatting functions.
var funcs = template.FuncMap{
	"date":    date,
	"money":   func(d decimal.Decimal) string { return d.StringFixed(2) },
	"decimal": decimalText,
	"percent": percent,
	"ratio":   ratio,
	"count":   count,
	"share":   share,
	"add":     func(a, b int) int { return a + b },
	"deref":   func(id *uuid.UUID) uuid.UUID { return *id },
	"fields":  controlFields,
	"sortLabel": func(sortBy string) string {
		return map[string]string{copytrading.SortTotalReturn: "Total return", copytrading.SortSharpeRatio: "Sharpe ratio",
			copytrading.SortFollowers: "Followers"}[sortBy]
	},
}

// date formats a time, or a pointer to one (nil gives ""), to the minute
// in UTC.
func date(t any) string {
	switch t := t.(type) {
	case time.Time:
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case *time.Time:
		if t != nil {
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	return ""
}

// decimalText formats a decimal.Decimal, or a pointer to one (nil gives
// "–"), in full: 20.125 stays 20.125.
func decimalText(d any) string {
	switch d := d.(type) {
	case decimal.Decimal:
		return d.String()
	case *decimal.Decimal:
		if d != nil {
			return d.String()
		}
	}
	return "–"
}

// percent formats a fraction, or a pointer to one, as a percentage with
// two decimals: 0.1234 is "12.34 %"; a figure that does not exist (nil,
// NaN) is "–".
func percent(f any) string {
	v, ok := figure(f)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v*100, 'f', 2, 64) + " %"
}

// ratio formats a ratio, or a pointer to one, with two decimals; a ratio
// that does not exist (nil, NaN) is "–".
func ratio(f any) string {
	v, ok := figure(f)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// figure returns the value of a float64 or *float64, and whether it
// exists: not nil, and finite.
func figure(f any) (float64, bool) {
	var v float64
	switch f := f.(type) {
	case float64:
		v = f
	case *float64:
		if f == nil {
			return 0, false
		}
		v = *f
	default:
		return 0, false
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// share is used/limit in whole percent, at most 100, for a meter's width.
func share(used, limit int) int {
	if limit <= 0 {
		return 0
	}
	return min(100, used*100/limit)
}

// controlField is a copy control as its form shows it.
type controlField struct{ Name, Label, Value string }

// controlFields lists a follow's copy controls for its form.
func controlFields(c copytrading.Controls) []controlField {
	return []controlField{
		{"allocationPct", "Allocation, % of your equity", c.AllocationPct.String()},
		{"scalingPct", "Scaling, % of the leader's size", c.ScalingPct.String()},
		{"maxPositionPct", "Largest position, % of the allocation", c.MaxPositionPct.String()},
		{"copyStopLossPct", "Stop copying at a loss of, %", c.CopyStopLossPct.String()},
	}
}

// count formats a whole number with thousands separators: 10000 is
// "10,000".
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
