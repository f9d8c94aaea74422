package knowledge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tradekit/tradekit"
)

// ParseError reports a content file that breaks the pack format: bad or
// missing front matter, an unknown or missing key, a malformed value, a
// duplicate slug or a reference to a slug that does not exist.
// Errors returned by [Parse] and [Load] have this concrete type (several of
// them are joined with [errors.Join]); every one wraps [tradekit.ErrInvalid].
type ParseError struct {
	File string // path of the file inside the pack, e.g. "glossary/terms/rsi.md"
	Line int    // 1-based line number; 0 when the problem concerns the whole file
	Msg  string // what is wrong, lowercase, no trailing period
}

// Error returns "knowledge: FILE:LINE: MSG".
func (e *ParseError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("knowledge: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("knowledge: %s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns [tradekit.ErrInvalid].
func (e *ParseError) Unwrap() error { return tradekit.ErrInvalid }

var (
	keyPattern          = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	slugPattern         = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	roadmapCatPattern   = regexp.MustCompile(`^[a-z0-9]+(?:_[a-z0-9]+)*$`)
	quarterPattern      = regexp.MustCompile(`^[0-9]{4}-Q[1-4]$`)
	routePattern        = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) /[^\s,]*$`)
	packagePattern      = regexp.MustCompile(`^[a-z0-9_]+(?:/[a-z0-9_]+)*$`)
	frontMatterDelim    = "---"
	dateOnlyLayout      = "2006-01-02"
	maxFrontMatterLines = 200
)

// field is one "key: value" line of front matter.
type field struct {
	value string
	line  int
	used  bool
}

// document is a content file split into its front matter and its body.
type document struct {
	file     string
	fields   map[string]*field
	order    []string // keys in file order, for reporting unknown keys
	body     string
	bodyLine int // line number of the first body line
	err      *ParseError
}

// parseDocument splits src into front matter and body. The front matter is
// the block between a first line "---" and the next line "---"; inside it,
// blank lines and lines starting with "#" are ignored and every other line
// is "key: value".
func parseDocument(file string, src []byte) (*document, error) {
	text := strings.TrimPrefix(string(src), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	d := &document{file: file, fields: make(map[string]*field)}
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != frontMatterDelim {
		return nil, d.errorf(1, "file must start with a %q front matter line", frontMatterDelim)
	}
	end := -1
	for i := 1; i < len(lines) && i <= maxFrontMatterLines; i++ {
		if strings.TrimRight(lines[i], " \t") == frontMatterDelim {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, d.errorf(1, "front matter is not closed by a %q line", frontMatterDelim)
	}
	for i := 1; i < end; i++ {
		n := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, d.errorf(n, "expected \"key: value\", got %q", line)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !keyPattern.MatchString(key) {
			return nil, d.errorf(n, "malformed key %q", key)
		}
		if prev, dup := d.fields[key]; dup {
			return nil, d.errorf(n, "key %q repeated (first on line %d)", key, prev.line)
		}
		if value == "" {
			return nil, d.errorf(n, "key %q has an empty value", key)
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		d.fields[key] = &field{value: value, line: n}
		d.order = append(d.order, key)
	}
	d.bodyLine = end + 2
	d.body = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	return d, nil
}

// errorf builds a *ParseError for this document.
func (d *document) errorf(line int, format string, args ...any) *ParseError {
	return &ParseError{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// fail records the first error met while reading fields; later reads are
// no-ops so the decoding code can run straight through.
func (d *document) fail(line int, format string, args ...any) {
	if d.err == nil {
		d.err = d.errorf(line, format, args...)
	}
}

// take marks key as known and returns its field, or nil if absent. A
// missing required key is reported at line 1, the opening delimiter.
func (d *document) take(key string, required bool) *field {
	f := d.fields[key]
	if f == nil {
		if required {
			d.fail(1, "missing required key %q", key)
		}
		return nil
	}
	f.used = true
	return f
}

// line returns the line of key, or 1 if the key is absent.
func (d *document) line(key string) int {
	if f := d.fields[key]; f != nil {
		return f.line
	}
	return 1
}

// str reads a string value.
func (d *document) str(key string, required bool) string {
	if f := d.take(key, required); f != nil {
		return f.value
	}
	return ""
}

// slug reads a value that must match pattern, e.g. a slug or a category.
func (d *document) slug(key string, required bool) string {
	f := d.take(key, required)
	if f == nil {
		return ""
	}
	if !slugPattern.MatchString(f.value) {
		d.fail(f.line, "%s %q is not a slug (lowercase letters, digits and single hyphens)", key, f.value)
	}
	return f.value
}

// list reads "[a, b, c]" into a non-nil slice of slugs without duplicates.
func (d *document) list(key string, required bool) []string {
	return d.listOf(key, required, slugPattern, "a slug (lowercase letters, digits and single hyphens)")
}

// listOf reads "[a, b, c]" into a non-nil slice without duplicates whose
// every item matches pattern; want describes a valid item in the error.
func (d *document) listOf(key string, required bool, pattern *regexp.Regexp, want string) []string {
	f := d.take(key, required)
	if f == nil {
		return []string{}
	}
	v := f.value
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		d.fail(f.line, "%s must be a list such as [a, b], got %q", key, v)
		return []string{}
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	if inner == "" {
		return []string{}
	}
	parts := strings.Split(inner, ",")
	out := make([]string, 0, len(parts))
	seen := make(map[string]bool, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		switch {
		case !pattern.MatchString(p):
			d.fail(f.line, "%s item %q is not %s", key, p, want)
		case seen[p]:
			d.fail(f.line, "%s item %q repeated", key, p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// boolean reads "true" or "false"; an absent key is false.
func (d *document) boolean(key string) bool {
	f := d.take(key, false)
	if f == nil {
		return false
	}
	switch f.value {
	case "true":
		return true
	case "false":
		return false
	}
	d.fail(f.line, "%s must be true or false, got %q", key, f.value)
	return false
}

// integer reads a non-negative decimal integer.
func (d *document) integer(key string, required bool) int {
	f := d.take(key, required)
	if f == nil {
		return 0
	}
	n, err := strconv.Atoi(f.value)
	if err != nil || n < 0 {
		d.fail(f.line, "%s must be a non-negative integer, got %q", key, f.value)
		return 0
	}
	return n
}

// timestamp reads a date "2006-01-02" (midnight UTC) or an RFC 3339 time
// such as "2026-03-01T09:00:00Z", converted to UTC.
func (d *document) timestamp(key string, required bool) Timestamp {
	f := d.take(key, required)
	if f == nil {
		return Timestamp{}
	}
	if t, err := time.Parse(dateOnlyLayout, f.value); err == nil {
		return Timestamp{t.UTC()}
	}
	t, err := time.Parse(time.RFC3339, f.value)
	if err != nil {
		d.fail(f.line, "%s must be a date YYYY-MM-DD or an RFC 3339 time, got %q", key, f.value)
		return Timestamp{}
	}
	return Timestamp{t.UTC()}
}

// finish reports the first problem met: a read error, a key that no read
// claimed, or an empty body when bodyRequired.
func (d *document) finish(bodyRequired bool) error {
	if d.err != nil {
		return d.err
	}
	for _, k := range d.order {
		if f := d.fields[k]; !f.used {
			return d.errorf(f.line, "unknown key %q", k)
		}
	}
	if bodyRequired && d.body == "" {
		return d.errorf(d.bodyLine, "empty body: the text after the front matter is required")
	}
	return nil
}
