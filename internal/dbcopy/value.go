package dbcopy

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"
)

// The copy carries each value in one canonical Go form per kind, whatever
// the database and driver it came from:
//
//	text     string
//	uuid     string, lowercase, hyphenated
//	decimal  string, as decimal.Decimal's String writes it
//	integer  int64
//	float    float64
//	boolean  bool
//	timestamp time.Time, in UTC
//	date     string, YYYY-MM-DD
//	bytes    []byte, never nil
//
// and NULL as nil. The checksum hashes that form, so that both databases
// hash a row alike.

// dateLayout is how dates are written: what SQLite stores, and what
// PostgreSQL reads as a DATE.
const dateLayout = "2006-01-02"

// timeLayouts are the forms of a timestamp that a SQLite driver may hand
// over as text: bun's, and RFC 3339.
var timeLayouts = [...]string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"}

// normalize returns v, as a driver scanned it from a column of kind k,
// in its canonical form.
func normalize(k kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindText:
		return asString(v)
	case kindUUID:
		if b, ok := v.([16]byte); ok {
			return uuid.UUID(b).String(), nil
		}
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return uuid.UUID(b).String(), nil
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("not a UUID: %q", s)
		}
		return u.String(), nil
	case kindDecimal:
		var s string
		switch v := v.(type) {
		case int64:
			return strconv.FormatInt(v, 10), nil
		case float64:
			return decimal.NewFromFloat(v).String(), nil
		default:
			var err error
			if s, err = asString(v); err != nil {
				return nil, err
			}
		}
		if c, ok := plainDecimal(s); ok {
			return c, nil
		}
		d, err := decimal.NewFromString(s)
		if err != nil {
			return nil, fmt.Errorf("not a decimal: %q", s)
		}
		return d.String(), nil
	case kindInt:
		switch v := v.(type) {
		case int64:
			return v, nil
		case bool:
			if v {
				return int64(1), nil
			}
			return int64(0), nil
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer: %q", s)
		}
		return n, nil
	case kindFloat:
		switch v := v.(type) {
		case float64:
			return v, nil
		case int64:
			return float64(v), nil
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number: %q", s)
		}
		return f, nil
	case kindBool:
		switch v := v.(type) {
		case bool:
			return v, nil
		case int64:
			if v == 0 || v == 1 {
				return v == 1, nil
			}
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("not a boolean: %q", s)
		}
		return b, nil
	case kindTime:
		if t, ok := v.(time.Time); ok {
			return t.UTC(), nil
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return nil, fmt.Errorf("not a timestamp: %q", s)
	case kindDate:
		if t, ok := v.(time.Time); ok {
			// A DATE comes as midnight in UTC (or the driver's zone):
			// its own date, not converted.
			return t.Format(dateLayout), nil
		}
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		if _, err := time.Parse(dateLayout, s); err != nil {
			return nil, fmt.Errorf("not a date: %q", s)
		}
		return s, nil
	case kindBytes:
		switch v := v.(type) {
		case []byte:
			return append([]byte{}, v...), nil
		case string:
			return []byte(v), nil
		}
	}
	return nil, fmt.Errorf("a %T where a %s is expected", v, k)
}

// plainDecimal returns what decimal.Decimal's String writes for s, when s
// is a plain decimal: an optional minus, digits without a superfluous
// leading zero, and an optional fraction, as both databases store them.
// That is s without the fraction's trailing zeros (and its point, if
// nothing is left after it), and "0" for a negative zero. For any other
// s it reports false, and the caller parses s with decimal.NewFromString.
// It spares a copy of millions of prices two conversions to and from
// big.Int each.
func plainDecimal(s string) (string, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == start || (i-start > 1 && s[start] == '0') {
		return "", false
	}
	end := i
	if i < len(s) {
		if s[i] != '.' {
			return "", false
		}
		point := i
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i != len(s) || i == point+1 {
			return "", false
		}
		end = len(s)
		for s[end-1] == '0' {
			end--
		}
		if end == point+1 {
			end = point
		}
	}
	if s[:end] == "-0" {
		return "0", true
	}
	return s[:end], true
}

// asString returns v as text: a string, or []byte holding text.
func asString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("a %T where text is expected", v)
}

// appendLiteral appends v, canonical of kind k, to b as a SQL literal of
// the dialect d: what bun itself writes for text, bytes and timestamps,
// so that the target holds what the application would have written.
// Decimals are text on SQLite (its NUMERIC affinity would make them
// floats) and numeric constants on PostgreSQL; dates are text; booleans
// are TRUE and FALSE on PostgreSQL, 1 and 0 on SQLite.
func appendLiteral(b []byte, d schema.Dialect, k kind, v any) []byte {
	if v == nil {
		return append(b, "NULL"...)
	}
	pg := d.Name() == dialect.PG
	switch k {
	case kindText, kindUUID, kindDate:
		return d.AppendString(b, v.(string))
	case kindDecimal:
		if pg {
			return append(b, v.(string)...)
		}
		return d.AppendString(b, v.(string))
	case kindInt:
		return strconv.AppendInt(b, v.(int64), 10)
	case kindFloat:
		return appendFloat(b, pg, v.(float64))
	case kindBool:
		if pg {
			return d.AppendBool(b, v.(bool))
		}
		if v.(bool) {
			return append(b, '1')
		}
		return append(b, '0')
	case kindTime:
		return d.AppendTime(b, v.(time.Time))
	case kindBytes:
		return d.AppendBytes(b, v.([]byte))
	}
	panic("dbcopy: unknown kind") // every kind is handled above
}

// appendFloat appends f as a literal that reads back as exactly f: the
// shortest decimal that does, quoted on PostgreSQL (read by float8in, not
// as a numeric constant), and with a decimal point on SQLite (so that it
// is a REAL, not an INTEGER).
func appendFloat(b []byte, pg bool, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "'NaN'"...)
	case math.IsInf(f, 1):
		if pg {
			return append(b, "'Infinity'"...)
		}
		return append(b, "9e999"...)
	case math.IsInf(f, -1):
		if pg {
			return append(b, "'-Infinity'"...)
		}
		return append(b, "-9e999"...)
	}
	if pg {
		b = append(b, '\'')
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
		return append(b, '\'')
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if !strings.ContainsAny(string(b[start:]), ".e") {
		b = append(b, ".0"...)
	}
	return b
}

// appendCanonical appends v, canonical of kind k, to b as the text the
// checksum hashes.
func appendCanonical(b []byte, k kind, v any) []byte {
	switch k {
	case kindText, kindUUID, kindDecimal, kindDate:
		return append(b, v.(string)...)
	case kindInt:
		return strconv.AppendInt(b, v.(int64), 10)
	case kindFloat:
		return strconv.AppendFloat(b, v.(float64), 'g', -1, 64)
	case kindBool:
		return strconv.AppendBool(b, v.(bool))
	case kindTime:
		return v.(time.Time).AppendFormat(b, time.RFC3339Nano)
	case kindBytes:
		return append(b, v.([]byte)...)
	}
	panic("dbcopy: unknown kind") // every kind is handled above
}

// appendElement appends v, canonical of kind k, to b as an element of a
// PostgreSQL array literal that is itself inside a SQL string literal:
// text is double-quoted with backslash escapes, and its single quotes
// doubled; NULL is NULL. PostgreSQL reads the element with the input
// function of the array's type, as it would a quoted literal.
func appendElement(b []byte, k kind, v any) []byte {
	if v == nil {
		return append(b, "NULL"...)
	}
	switch k {
	case kindText:
		b = append(b, '"')
		s := v.(string)
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\'':
				b = append(b, '\'', '\'')
			case 0:
				// dropped, as bun drops it: PostgreSQL text holds no NUL
			default:
				b = append(b, c)
			}
		}
		return append(b, '"')
	case kindUUID, kindDecimal, kindDate:
		return append(b, v.(string)...)
	case kindInt:
		return strconv.AppendInt(b, v.(int64), 10)
	case kindFloat:
		f := v.(float64)
		switch {
		case math.IsNaN(f):
			return append(b, "NaN"...)
		case math.IsInf(f, 1):
			return append(b, "Infinity"...)
		case math.IsInf(f, -1):
			return append(b, "-Infinity"...)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case kindBool:
		if v.(bool) {
			return append(b, 't')
		}
		return append(b, 'f')
	case kindTime:
		b = append(b, '"')
		b = v.(time.Time).UTC().AppendFormat(b, "2006-01-02 15:04:05.999999-07:00")
		return append(b, '"')
	case kindBytes:
		b = append(b, `"\\x`...)
		b = hex.AppendEncode(b, v.([]byte))
		return append(b, '"')
	}
	panic("dbcopy: unknown kind") // every kind is handled above
}
