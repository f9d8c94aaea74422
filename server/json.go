package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/internal/jsonnum"
)

// dataBody is the envelope of a resource or an unpaginated list.
type dataBody struct {
	Data any `json:"data"`
}

// writeData writes v in the {"data": v} envelope with status 200, the
// status of every success in the API.
func (s *Server) writeData(w http.ResponseWriter, v any) error {
	s.writeJSON(w, http.StatusOK, dataBody{Data: v})
	return nil
}

// writeRawData writes data, which must be valid JSON, in the {"data": …}
// envelope with status 200, for what is encoded already (a stored
// document, say), its numbers written with at most 15 significant digits
// ([jsonnum.Round]).
func (s *Server) writeRawData(w http.ResponseWriter, data []byte) error {
	return s.writeRaw(w, jsonnum.Round(data))
}

// writeRaw is [Server.writeRawData] of data whose numbers are written as
// they should be already, by [jsonnum.AppendFloat]: the hot paths that
// encode by hand.
func (s *Server) writeRaw(w http.ResponseWriter, data []byte) error {
	const head, tail = `{"data":`, "}\n"
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(head)+len(data)+len(tail)))
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, head)
	w.Write(data)
	io.WriteString(w, tail)
	return nil
}

// bodies recycles the buffers of [Server.writeAppended], which for a long
// indicator series are over 100 KB: without it every such request leaves
// that much garbage behind, and the collector's work shows in the tail
// latency.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest buffer bodies keeps.
const maxPooledBody = 4 << 20

// writeAppended is [Server.writeRaw] of what appendData appends to an
// empty buffer, a recycled one: appendData writes floats with
// [jsonnum.AppendFloat].
func (s *Server) writeAppended(w http.ResponseWriter, appendData func([]byte) ([]byte, error)) error {
	buf := bodies.Get().(*[]byte)
	data, err := appendData((*buf)[:0])
	if err != nil {
		return err // the buffer, maybe grown out of sight, is left to the collector
	}
	err = s.writeRaw(w, data)
	if cap(data) <= maxPooledBody {
		*buf = data
		bodies.Put(buf)
	}
	return err
}

// writeJSON writes v as JSON with status, its numbers written with at
// most 15 significant digits ([jsonnum.Round]).
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // an API, not a page: keep < > & readable
	if err := enc.Encode(v); err != nil {
		s.log.Error("encoding a response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"INTERNAL","message":"internal error"}}` + "\n")
	}
	body := jsonnum.Round(buf.Bytes()) // float64 fields have up to 17 digits
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// number writes a decimal as a JSON number, digit for digit, as the spec
// wants numbers (never strings), without touching decimal's package
// settings.
type number decimal.Decimal

// MarshalJSON implements [json.Marshaler].
func (n number) MarshalJSON() ([]byte, error) {
	return []byte(decimal.Decimal(n).String()), nil
}

// timestamp writes a time as ISO 8601 UTC with milliseconds, the API's
// timestamp form: 2026-11-22T14:05:09.123Z.
type timestamp time.Time

// MarshalJSON implements [json.Marshaler].
func (t timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z") + `"`), nil
}
