package knowledge

import (
	"fmt"
	"time"
)

// timestampLayout is the spec's timestamp form: ISO 8601 UTC with milliseconds.
const timestampLayout = "2006-01-02T15:04:05.000Z"

// Timestamp is a time that encodes to JSON as the API's timestamp form,
// ISO 8601 in UTC with exactly three fractional digits, e.g.
// "2026-03-01T09:00:00.000Z". The zero Timestamp reports IsZero, so struct
// fields tagged `json:",omitzero"` disappear when unset.
type Timestamp struct {
	time.Time
}

// MarshalJSON renders t in UTC as "2006-01-02T15:04:05.000Z" (quoted).
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timestampLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timestampLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts any RFC 3339 time, including the form MarshalJSON
// writes, and stores it in UTC. An error wraps the [time.Parse] failure.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("knowledge: timestamp must be a JSON string, got %s", b)
	}
	return t.UnmarshalText(b[1 : len(b)-1])
}

// MarshalText returns the same text as MarshalJSON, without the quotes, so
// that encodings using [encoding.TextMarshaler] agree with JSON.
func (t Timestamp) MarshalText() ([]byte, error) {
	return t.UTC().AppendFormat(nil, timestampLayout), nil
}

// UnmarshalText accepts any RFC 3339 time and stores it in UTC.
func (t *Timestamp) UnmarshalText(b []byte) error {
	v, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return fmt.Errorf("knowledge: timestamp: %w", err)
	}
	t.Time = v.UTC()
	return nil
}

// String returns the same text as MarshalJSON, without the quotes.
func (t Timestamp) String() string { return t.UTC().Format(timestampLayout) }
