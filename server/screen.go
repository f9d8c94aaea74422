package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tradekit/tradekit"
)

// maxHeaderBytes bounds the size of a request's headers, counted as
// name, value and 4 bytes of punctuation per field. Go's HTTP server
// refuses headers past its own limit (1 MB) in plain text before any
// handler runs; below that, this limit answers in the JSON envelope.
const maxHeaderBytes = 64 << 10

// isMultiline reports whether the text of the query parameter name may hold
// tabs and line breaks. No other parameter, and no path segment, holds any.
func isMultiline(name string) bool { return name == "formula" || name == "description" }

// Upstream bug, github.com/uptrace/bunrouter v1.0.23 (the newest release;
// to report there, as this machine cannot): a path holding a NUL byte
// where a node without children ends panics in node._findRoute with
// "index out of range [0] with length 0". A leaf's index table is empty
// and its minChar and maxChar are 0, so the bounds check
// firstChar >= minChar && firstChar <= maxChar passes for byte 0 and
// table[0] is read. Minimal reproduction:
//
//	r := bunrouter.New()
//	r.GET("/healthz", func(w http.ResponseWriter, req bunrouter.Request) error { return nil })
//	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz%00", nil)) // panics
//
// The fix upstream is to test len(n.nodes) > 0 (or len(n.index.table) > 0)
// before indexing. screen refuses control characters in paths first, so
// the router never sees one.

// screen refuses, before routing, what no route may see: headers over
// maxHeaderBytes (431), a path or query parameter holding control
// characters or bytes that are not UTF-8, a malformed query string, and
// (under /api/v1, which takes its parameters in the query string) a
// request body (400). It gives the router the path with every segment
// escaped one way ([canonicalPath]), so that a parameter decodes the same
// however the client escaped it.
func (s *Server) screen(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkRequest(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if p := r.URL.EscapedPath(); strings.IndexByte(p, '%') >= 0 {
			canon, err := canonicalPath(p)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r2, u := *r, *r.URL
			u.RawPath = canon
			r2.URL = &u
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// checkRequest checks r's headers, query string and body as
// [Server.screen] describes.
func checkRequest(r *http.Request) error {
	size := 0
	for name, values := range r.Header {
		for _, v := range values {
			size += len(name) + len(v) + 4
		}
	}
	if size > maxHeaderBytes {
		return errorf(errHeaderTooLarge, "the request's headers are %d bytes; at most %d are accepted", size, maxHeaderBytes)
	}
	if q := r.URL.RawQuery; needsQueryCheck(q) {
		if err := checkQuery(q); err != nil {
			return err
		}
	}
	if strings.HasPrefix(r.URL.Path, "/api/v1/") && r.ContentLength != 0 {
		return errorf(tradekit.ErrInvalid, "this API reads no request body: send parameters in the query string, "+
			"as in POST /api/v1/indicators/custom?name=…&formula=…")
	}
	return nil
}

// needsQueryCheck reports whether the raw query q may hold what
// checkQuery refuses. Go's URL parser lets no ASCII control byte through
// unescaped, so a query of ASCII whose escapes all decode to printable
// ASCII, as params={"period":14} does, and that has no ';' (which
// url.ParseQuery refuses) is fine as it is: the common case costs a scan
// and no allocation.
func needsQueryCheck(q string) bool {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == ';' || c >= 0x80: // ';' url.ParseQuery refuses; raw non-ASCII may not be UTF-8
			return true
		case c == '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return true // malformed
			}
			if c := unhex(q[i+1])<<4 | unhex(q[i+2]); c < 0x20 || c >= 0x7F {
				return true // a control character, or part of a non-ASCII one
			}
			i += 2
		}
	}
	return false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// checkQuery refuses a malformed query string and a parameter name or
// value that holds control characters or is not UTF-8.
func checkQuery(raw string) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return errorf(tradekit.ErrInvalid, "malformed query string: %v", err)
	}
	for name, values := range q {
		if c, bad := badRune(name, false); bad {
			return invalidParam(clip(name), "the parameter name holds %s", c)
		}
		for _, v := range values {
			if c, bad := badRune(v, isMultiline(name)); bad {
				return invalidParam(name, "holds %s; remove it", c)
			}
		}
	}
	return nil
}

// canonicalPath returns the escaped path p with each segment decoded and
// escaped again as [url.PathEscape] escapes it, so that "%41LBN", "ALBN"
// and "AL%42N" are one path while "A%2FB" stays one segment. A segment
// that decodes to control characters or to bytes that are not UTF-8 is
// refused with a 400 naming the path.
func canonicalPath(p string) (string, error) {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if strings.IndexByte(seg, '%') < 0 {
			continue
		}
		dec, err := url.PathUnescape(seg)
		if err != nil { // Go's server parsed the path, so this cannot happen
			return "", invalidParam("path", "malformed escape in %s", tradekit.Quote(seg))
		}
		if c, bad := badRune(dec, false); bad {
			return "", invalidParam("path", "the segment %s holds %s", tradekit.Quote(dec), c)
		}
		segs[i] = url.PathEscape(dec)
	}
	return strings.Join(segs, "/"), nil
}

// badRune reports the first character of s that a text parameter may not
// hold, described for a message: a byte that is not UTF-8, or a control
// character (tab, line feed and carriage return are allowed when
// multiline).
func badRune(s string, multiline bool) (string, bool) {
	for i, c := range s {
		switch {
		case c == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("the byte 0x%02X, which is not UTF-8", s[i]), true
		case multiline && (c == '\t' || c == '\n' || c == '\r'):
		case unicode.IsControl(c):
			return fmt.Sprintf("the control character U+%04X", c), true
		}
	}
	return "", false
}

// clip returns s cut to [tradekit.MaxQuoted] characters, for a name that
// a client chose.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == tradekit.MaxQuoted {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
