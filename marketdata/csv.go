package marketdata

import (
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
)

// ReadPricesCSV reads daily bars from CSV: a header row, then one bar per
// line. Columns are matched by name, ignoring case, spaces and
// underscores: date (YYYY-MM-DD), open, high, low, close and, optional,
// volume (0 when the file has no such column, as FX and crypto files
// often do); other columns, such as "Adj Close", are ignored. Every bar
// is checked with [Price.Validate], and a date may appear only once.
// [ParsePricesCSV] also tells whether the file had volumes.
//
// The first bad line stops the reading: the error is a *[ParseError]
// naming the line (the header is line 1), and wraps [tradekit.ErrInvalid].
// A file with no bar after the header is an error too (with no line).
// The bars come back in file order, without ids or asset.
func ReadPricesCSV(r io.Reader) ([]Price, error) {
	p, err := ParsePricesCSV(r)
	return p.Prices, err
}

// PricesCSV is a CSV file of daily bars, as [ParsePricesCSV] reads it.
type PricesCSV struct {
	// Prices are the bars, in file order, without ids or asset.
	Prices []Price
	// HasVolume tells whether the file has a volume column; without one,
	// every bar's Volume is 0.
	HasVolume bool
}

// ParsePricesCSV reads daily bars from CSV as [ReadPricesCSV] does, and
// tells whether the file had a volume column. Its errors are those of
// ReadPricesCSV.
func ParsePricesCSV(r io.Reader) (PricesCSV, error) {
	out, hasVolume, err := readPricesCSV(r)
	return PricesCSV{Prices: out, HasVolume: hasVolume}, err
}

func readPricesCSV(r io.Reader) ([]Price, bool, error) {
	recs, err := readRecords(r, CSV, "date", "open", "high", "low", "close")
	if err != nil {
		return nil, false, err
	}
	_, hasVolume := recs[0].fields["volume"]
	out := make([]Price, 0, len(recs))
	seen := make(map[calendar.Date]int, len(recs))
	for _, rec := range recs {
		p, err := parseBar(rec)
		if err != nil {
			return nil, false, err
		}
		if first, ok := seen[p.Date]; ok {
			return nil, false, rec.errorf("date %s repeats line %d", p.Date, first)
		}
		seen[p.Date] = rec.line
		out = append(out, p)
	}
	return out, hasVolume, nil
}

func parseBar(rec record) (Price, error) {
	var p Price
	var err error
	if p.Date, err = parseDate(rec, "date"); err != nil {
		return Price{}, err
	}
	for _, f := range []struct {
		key string
		dst *decimal.Decimal
	}{{"open", &p.Open}, {"high", &p.High}, {"low", &p.Low}, {"close", &p.Close}} {
		if *f.dst, err = parseDecimal(rec, f.key); err != nil {
			return Price{}, err
		}
	}
	v, ok := rec.fields["volume"]
	if !ok {
		v = "0" // no volume column
	}
	v = strings.TrimSpace(v)
	if p.Volume, err = strconv.ParseInt(v, 10, 64); err != nil {
		// Some sources write volumes as 1234.0: accept whole decimals.
		d, derr := decimal.NewFromString(v)
		if derr != nil || !d.IsInteger() || d.Cmp(decimal.NewFromInt(1<<62)) > 0 {
			return Price{}, rec.errorf("volume %q: want a whole number", v)
		}
		p.Volume = d.IntPart()
	}
	if err := p.Validate(); err != nil {
		return Price{}, rec.errorf("%s", trimPrefix(err))
	}
	return p, nil
}

// parseDate parses the date field key of rec, YYYY-MM-DD. The error tells
// a field of another form from a date that does not exist, such as
// 2024-02-30.
func parseDate(rec record, key string) (calendar.Date, error) {
	s := rec.get(key)
	d, err := calendar.ParseDate(s)
	if err == nil {
		return d, nil
	}
	if IsDateShaped(s) {
		return calendar.Date{}, rec.errorf("%s %q: no such date", key, s)
	}
	return calendar.Date{}, rec.errorf("%s %q: want YYYY-MM-DD", key, s)
}

// IsDateShaped reports whether s has the form NNNN-NN-NN, N a digit: a
// date field that fails to parse but IsDateShaped names a day that does
// not exist (2024-02-30), and the imports say "no such date" rather than
// "want YYYY-MM-DD". Package marketdata/bulk words its errors the same way.
func IsDateShaped(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDecimal parses the decimal field key of rec.
func parseDecimal(rec record, key string) (decimal.Decimal, error) {
	s := rec.get(key)
	d, err := decimal.NewFromString(s)
	if err != nil || len(s) > 60 {
		return decimal.Decimal{}, rec.errorf("%s %q: want a decimal number", key, s)
	}
	return d, nil
}

// trimPrefix returns err's message without the "marketdata: " prefix and
// the error kind, for messages that already carry a line number.
func trimPrefix(err error) string {
	s := err.Error()
	const p = "marketdata: "
	if len(s) > len(p) && s[:len(p)] == p {
		s = s[len(p):]
	}
	const k = ": invalid argument"
	if len(s) > len(k) && s[len(s)-len(k):] == k {
		s = s[:len(s)-len(k)]
	}
	return s
}
