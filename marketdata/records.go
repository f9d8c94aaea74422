package marketdata

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tradekit/tradekit"
)

// ParseError reports a bad record of an import file: its line in a CSV
// file, or its position (1-based) in a JSON array. It unwraps to
// [tradekit.ErrInvalid].
type ParseError struct {
	// Line is the line of the record in a CSV file (the header is line 1);
	// 0 for JSON.
	Line int
	// Record is the 1-based position of the record in a JSON array; 0
	// for CSV.
	Record int
	// Msg says what is wrong.
	Msg string
}

// Error implements error: "line 7: high 10.5 is below close 11".
func (e *ParseError) Error() string {
	if e.Record > 0 {
		return fmt.Sprintf("record %d: %s", e.Record, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Unwrap returns [tradekit.ErrInvalid].
func (e *ParseError) Unwrap() error { return tradekit.ErrInvalid }

// Format is the format of an import file.
type Format string

// The import formats.
const (
	CSV  Format = "csv"
	JSON Format = "json"
)

// FormatOf returns the format of a file from its name: JSON for a name
// ending in .json (any case), CSV otherwise.
func FormatOf(name string) Format {
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return JSON
	}
	return CSV
}

// record is one record of an import file, its fields keyed by normalised
// column name (see ColumnKey).
type record struct {
	line, pos int
	fields    map[string]string
}

// errorf returns a *ParseError located at the record.
func (r record) errorf(format string, args ...any) error {
	return &ParseError{Line: r.line, Record: r.pos, Msg: fmt.Sprintf(format, args...)}
}

// get returns the trimmed field of the column key.
func (r record) get(key string) string { return strings.TrimSpace(r.fields[key]) }

// ColumnKey normalises a column name: lower case, without spaces,
// underscores and hyphens, so "Market Cap", "market_cap" and "marketCap"
// are one column. Every import matches columns and JSON keys by it,
// package marketdata/bulk's included.
func ColumnKey(name string) string {
	name = strings.TrimPrefix(name, "\ufeff") // a byte-order mark before the header
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r != ' ' && r != '_' && r != '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readRecords reads every record of r: a CSV file with a header row, or a
// JSON array of objects. required lists the column keys that must be
// present. A file without records is an error: an import of nothing is
// most likely a mistake, such as an export that failed.
func readRecords(r io.Reader, f Format, required ...string) ([]record, error) {
	if f == JSON {
		return readJSONRecords(r, required)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &ParseError{Line: 1, Msg: "empty file: want a header row"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	if err := DelimiterError(header); err != nil {
		return nil, err
	}
	cols := make([]string, len(header))
	have := map[string]bool{}
	for i, h := range header {
		cols[i] = ColumnKey(h)
		have[cols[i]] = true
	}
	for _, k := range required {
		if !have[k] {
			return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("header has no %q column (columns: %s)", k, strings.Join(header, ", "))}
		}
	}
	var out []record
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if len(out) == 0 {
				return nil, &ParseError{Msg: "no rows after the header row"}
			}
			return out, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue // a blank line
		}
		if len(row) != len(cols) {
			return nil, &ParseError{Line: line, Msg: fmt.Sprintf("%d fields, the header has %d", len(row), len(cols))}
		}
		rec := record{line: line, fields: make(map[string]string, len(cols))}
		for i, v := range row {
			rec.fields[cols[i]] = v
		}
		out = append(out, rec)
	}
}

// DelimiterError returns the error of a header row that is one field
// holding semicolons or tabs: a file separated by something other than
// commas, as spreadsheets in many locales save "CSV". Every import says
// so in the same words, whatever its mode (package marketdata/bulk's
// included); nil for another header. The error is a *[ParseError] of
// line 1.
func DelimiterError(header []string) error {
	if len(header) != 1 {
		return nil
	}
	for _, d := range []string{";", "\t"} {
		if strings.Contains(header[0], d) {
			return &ParseError{Line: 1, Msg: fmt.Sprintf("the header %s is one column: the file seems separated by %q, "+
				"not commas; save it as comma-separated CSV", tradekit.Quote(header[0]), d)}
		}
	}
	return nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Line: pe.Line, Msg: pe.Err.Error()}
	}
	return fmt.Errorf("marketdata: read CSV: %w", err)
}

func readJSONRecords(r io.Reader, required []string) ([]record, error) {
	var raw []map[string]any
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &ParseError{Msg: "want a JSON array of objects: " + err.Error()}
	}
	if len(raw) == 0 {
		return nil, &ParseError{Msg: "no records in the JSON array"}
	}
	out := make([]record, len(raw))
	for i, obj := range raw {
		rec := record{pos: i + 1, fields: make(map[string]string, len(obj))}
		for k, v := range obj {
			var s string
			switch v := v.(type) {
			case nil:
			case string:
				s = v
			case json.Number:
				s = v.String()
			case bool:
				s = strconv.FormatBool(v)
			default:
				return nil, rec.errorf("field %q: want a string, number or boolean", k)
			}
			rec.fields[ColumnKey(k)] = s
		}
		for _, k := range required {
			if _, ok := rec.fields[k]; !ok {
				return nil, rec.errorf("no %q field", k)
			}
		}
		out[i] = rec
	}
	return out, nil
}
