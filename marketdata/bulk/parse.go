package bulk

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// layout is where the columns of a price file are.
type layout struct {
	ncols                          int
	symbol, date, windowStart      int // -1 when absent
	open, high, low, close, volume int
	fileSymbol                     string // when symbol < 0
	fileSymbolID                   uuid.UUID
	polygon                        bool
}

// parseHeader reads the header line of a price file. A file has either a
// symbol (or ticker) column or a symbol in its name, and either a date
// column or, as Polygon's flat files, a window_start column (Unix
// nanoseconds; the bar's date is the UTC date of the instant).
func parseHeader(line []byte, file *sourceFile) (*layout, error) {
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	cr := csv.NewReader(bytes.NewReader(line))
	header, err := cr.Read()
	if err != nil {
		return nil, &marketdata.ParseError{Line: 1, Msg: "empty file: want a header row"}
	}
	if err := marketdata.DelimiterError(header); err != nil {
		return nil, err
	}
	l := &layout{ncols: len(header), symbol: -1, date: -1, windowStart: -1,
		open: -1, high: -1, low: -1, close: -1, volume: -1}
	for i, h := range header {
		var dst *int
		switch marketdata.ColumnKey(h) {
		case "symbol", "ticker":
			dst = &l.symbol
		case "date":
			dst = &l.date
		case "windowstart":
			dst = &l.windowStart
		case "open":
			dst = &l.open
		case "high":
			dst = &l.high
		case "low":
			dst = &l.low
		case "close":
			dst = &l.close
		case "volume":
			dst = &l.volume
		default:
			continue
		}
		if *dst >= 0 {
			return nil, &marketdata.ParseError{Line: 1, Msg: fmt.Sprintf("header repeats the %q column", h)}
		}
		*dst = i
	}
	for _, c := range []struct {
		name string
		i    int
	}{{"open", l.open}, {"high", l.high}, {"low", l.low}, {"close", l.close}} {
		if c.i < 0 {
			return nil, &marketdata.ParseError{Line: 1, Msg: fmt.Sprintf("header has no %q column (columns: %s)", c.name, strings.Join(header, ", "))}
		}
	}
	switch {
	case l.date >= 0:
		l.windowStart = -1
	case l.windowStart >= 0:
		l.polygon = true
	default:
		return nil, &marketdata.ParseError{Line: 1, Msg: fmt.Sprintf("header has no \"date\" (or \"window_start\") column (columns: %s)", strings.Join(header, ", "))}
	}
	if l.symbol < 0 {
		if file.symbol == "" {
			return nil, &marketdata.ParseError{Line: 1, Msg: "header has no \"symbol\" or \"ticker\" column, and the file name (SYMBOL.csv) gives no symbol"}
		}
		l.fileSymbol = file.symbol
	}
	return l, nil
}

// zeroVolume is the volume of the rows of a file without a volume column.
var zeroVolume = []byte("0")

// batch is the parsed form of a chunk of a file, ready to write.
type batch struct {
	// data is the rows as COPY text (PostgreSQL), or (SQLite) the text of
	// each row's date, open, high, low and close back to back, the fields
	// ending at the offsets ends (five per row), with the volumes in vols.
	data []byte
	ends []uint32
	vols []int64
	rows int
	// symbols are the batch's distinct symbols, ids their asset ids
	// (and on PostgreSQL idText the ids as text).
	symbols []string
	ids     []uuid.UUID
	idText  [][36]byte
	// keys identify each row, for the check that a file repeats no asset
	// and date; on SQLite they also give each row's asset.
	keys     []rowKey
	from, to calendar.Date
	err      error
}

// rowKey is a row's symbol (an index into the batch's symbols), its day
// (days since dayEpoch) and its line.
type rowKey struct {
	sym, day, line int32
}

// dayEpoch is the origin of rowKey.day.
var dayEpoch = calendar.Date{Year: 1900, Month: time.January, Day: 1}

// parser parses chunks of price files: safe for concurrent use.
type parser struct {
	pg bool
	// known maps the symbols of the assets that exist to their ids.
	known map[string]uuid.UUID
}

// parseChunk parses the complete lines of data, the first of them line
// first of l's file.
func (p *parser) parseChunk(l *layout, data []byte, first int) *batch {
	b := &batch{data: make([]byte, 0, len(data)*3/2+64)}
	if !p.pg {
		// About 40 bytes a line in the usual files: room for most chunks.
		b.ends = make([]uint32, 0, len(data)/40*5)
		b.vols = make([]int64, 0, len(data)/40)
	}
	symIdx := map[string]int32{}
	fields := make([][]byte, 0, l.ncols)
	var num [4]fastDec
	line := first - 1
	for len(data) > 0 {
		line++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		if len(bytes.TrimSpace(raw)) == 0 {
			continue // a blank line
		}
		fields = fields[:0]
		if bytes.IndexByte(raw, '"') >= 0 {
			rec, err := csv.NewReader(bytes.NewReader(raw)).Read()
			if err != nil {
				b.err = &marketdata.ParseError{Line: line, Msg: "bad quoting (a quoted field cannot hold a line break here): " + err.Error()}
				return b
			}
			for _, f := range rec {
				fields = append(fields, []byte(f))
			}
		} else {
			for {
				i := bytes.IndexByte(raw, ',')
				if i < 0 {
					fields = append(fields, raw)
					break
				}
				fields = append(fields, raw[:i])
				raw = raw[i+1:]
			}
		}
		if len(fields) != l.ncols {
			b.err = &marketdata.ParseError{Line: line, Msg: fmt.Sprintf("%d fields, the header has %d", len(fields), l.ncols)}
			return b
		}
		perr := func(format string, args ...any) *batch {
			b.err = &marketdata.ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
			return b
		}

		// Symbol.
		sym := l.fileSymbol
		var si int32
		if l.symbol >= 0 {
			s := bytes.TrimSpace(fields[l.symbol])
			if len(s) == 0 {
				return perr("empty symbol")
			}
			var ok bool
			if si, ok = symIdx[string(s)]; !ok {
				sym = marketdata.NormalizeSymbol(string(s))
				si = p.addSymbol(b, symIdx, string(s), sym)
			}
		} else if len(b.symbols) == 0 {
			si = p.addSymbol(b, symIdx, sym, sym)
		}

		// Date.
		var d calendar.Date
		if l.date >= 0 {
			s := bytes.TrimSpace(fields[l.date])
			var ok bool
			if d, ok = fastDate(s); !ok {
				if marketdata.IsDateShaped(string(s)) {
					return perr("date %q: no such date", s)
				}
				return perr("date %q: want YYYY-MM-DD", s)
			}
		} else {
			s := bytes.TrimSpace(fields[l.windowStart])
			ns, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil {
				return perr("window_start %q: want Unix nanoseconds", s)
			}
			d = calendar.DateOf(time.Unix(0, ns).UTC())
		}

		// Prices and volume.
		fast := true
		for i, c := range [4]int{l.open, l.high, l.low, l.close} {
			f := bytes.TrimSpace(fields[c])
			if !num[i].parse(f) {
				if _, err := decimal.NewFromString(string(f)); err != nil || len(f) > 60 {
					return perr("%s %q: want a decimal number", [4]string{"open", "high", "low", "close"}[i], f)
				}
				fast = false
			}
		}
		var vf []byte
		if l.volume >= 0 { // else no volume column (FX, crypto): 0
			vf = bytes.TrimSpace(fields[l.volume])
		} else {
			vf = zeroVolume
		}
		vol, err := strconv.ParseInt(string(vf), 10, 64)
		if err != nil {
			dv, derr := decimal.NewFromString(string(vf))
			if derr != nil || !dv.IsInteger() || dv.Cmp(decimal.NewFromInt(1<<62)) > 0 {
				return perr("volume %q: want a whole number", vf)
			}
			vol = dv.IntPart()
		}
		o, h, lo, c := num[0], num[1], num[2], num[3]
		if !fast || !(o.f > 0 && h.f > 0 && lo.f > 0 && c.f > 0 && h.f >= o.f && h.f >= c.f && lo.f <= o.f && lo.f <= c.f) || vol < 0 {
			// The exact check, with decimals: rare (a bad row, or numbers
			// beyond fastDec).
			pr := marketdata.Price{Date: d, Volume: vol}
			for i, dst := range [4]*decimal.Decimal{&pr.Open, &pr.High, &pr.Low, &pr.Close} {
				*dst = decimal.RequireFromString(string(bytes.TrimSpace(fields[[4]int{l.open, l.high, l.low, l.close}[i]])))
			}
			if err := pr.Validate(); err != nil {
				return perr("%s", trimPrefix(err))
			}
			for i, dst := range [4]*decimal.Decimal{&pr.Open, &pr.High, &pr.Low, &pr.Close} {
				num[i].text = append(num[i].text[:0], dst.String()...)
			}
		}

		// The row, as the database reads it.
		if b.rows == 0 || d.Before(b.from) {
			b.from = d
		}
		if d.After(b.to) {
			b.to = d
		}
		b.keys = append(b.keys, rowKey{sym: si, day: int32(d.Sub(dayEpoch)), line: int32(line)})
		if p.pg {
			// COPY's text format, which the server parses as psql's
			// \copy has it do.
			b.data = append(b.data, b.idText[si][:]...)
			b.data = append(b.data, '\t')
			b.data, _ = d.AppendText(b.data)
			for i := range num {
				b.data = append(b.data, '\t')
				b.data = append(b.data, num[i].text...)
			}
			b.data = append(b.data, '\t')
			b.data = strconv.AppendInt(b.data, vol, 10)
			b.data = append(b.data, '\n')
		} else {
			b.data, _ = d.AppendText(b.data)
			b.ends = append(b.ends, uint32(len(b.data)))
			for i := range num {
				b.data = append(b.data, num[i].text...)
				b.ends = append(b.ends, uint32(len(b.data)))
			}
			b.vols = append(b.vols, vol)
		}
		b.rows++
	}
	return b
}

// addSymbol adds sym (as written: raw) to the batch and returns its index.
func (p *parser) addSymbol(b *batch, idx map[string]int32, raw, sym string) int32 {
	if i, ok := idx[sym]; ok {
		idx[raw] = i
		return i
	}
	id, ok := p.known[sym]
	if !ok {
		id = marketdata.AssetID(sym)
	}
	i := int32(len(b.symbols))
	b.symbols = append(b.symbols, sym)
	b.ids = append(b.ids, id)
	if p.pg {
		var text [36]byte
		copy(text[:], id.String())
		b.idText = append(b.idText, text)
	}
	idx[raw], idx[sym] = i, i
	return i
}

// fastDate parses YYYY-MM-DD, reporting false for anything else or a day
// that does not exist.
func fastDate(s []byte) (calendar.Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return calendar.Date{}, false
	}
	n := 0
	for i, c := range s {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return calendar.Date{}, false
		}
		n = n*10 + int(c-'0')
	}
	d := calendar.Date{Year: n / 10000, Month: time.Month(n / 100 % 100), Day: n % 100}
	return d, d.IsValid() && d.Year > 0
}

// trimPrefix returns the message of err, an error of package marketdata,
// without its "marketdata: " prefix and its error kind, for messages that
// already carry a line number or a symbol.
func trimPrefix(err error) string {
	s := err.Error()
	if p := "marketdata: "; len(s) > len(p) {
		s = strings.TrimPrefix(s, p)
	}
	if k := ": invalid argument"; len(s) > len(k) {
		s = strings.TrimSuffix(s, k)
	}
	return s
}
