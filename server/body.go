package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/tradekit/tradekit"
)

// MaxBodyBytes bounds the body of every request the server reads, on every
// route: the API reads none (its parameters are in the query string); the
// dashboard's forms and the paper broker's forms and JSON orders take a few
// hundred bytes. No route takes more; CSV imports go through
// `tradekit import`, not HTTP.
const MaxBodyBytes = 64 << 10

// errUnsupportedMediaType answers a multipart request body.
var errUnsupportedMediaType = errors.New("unsupported media type")

// errBodyTooLarge answers a request body over MaxBodyBytes.
var errBodyTooLarge = errors.New("request body too large")

// limitBodies is the request-body policy of every route the server
// serves, the API, the dashboard and the paper broker alike; it runs
// before routing, so that no route can escape it:
//
//   - a multipart body (Content-Type multipart/*) is refused with 415
//     before any of it is read: no form the server serves is multipart,
//     and Go's multipart parser spills large parts to temporary files;
//   - a body over [MaxBodyBytes] is refused with 413: at once when its
//     Content-Length says so, else once that much has been read;
//   - any other body is read here, whole, and handed on in memory, so a
//     handler never reads past the limit, whatever it reads with.
//
// The API's refusals are the JSON error envelope (VALIDATION_ERROR); the
// dashboard's and the paper broker's are plain text.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 {
			next.ServeHTTP(w, r) // no body (Go's server gives r.Body http.NoBody)
			return
		}
		if err := checkBody(r); err != nil {
			s.refuseBody(w, r, err)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			s.refuseBody(w, r, err)
			return
		}
		r.ContentLength = int64(len(body))
		r.Body = http.NoBody
		if len(body) > 0 {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// checkBody refuses, before reading it, a multipart body and one whose
// Content-Length exceeds MaxBodyBytes.
func checkBody(r *http.Request) error {
	for _, ct := range r.Header.Values("Content-Type") {
		if isMultipart(ct) {
			return errorf(errUnsupportedMediaType, "multipart request bodies are not accepted (Content-Type %s); "+
				"send a form as application/x-www-form-urlencoded", tradekit.Quote(ct))
		}
	}
	if r.ContentLength > MaxBodyBytes {
		return bodyTooLarge(r.ContentLength)
	}
	return nil
}

// isMultipart reports whether the Content-Type value ct names a multipart
// media type, however it is spelt: Go's parsers match the type after
// [mime.ParseMediaType] lowercases it, so this does too, and it also
// refuses a value that starts so but does not parse.
func isMultipart(ct string) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "multipart/") {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.HasPrefix(mt, "multipart/")
}

// readBody reads r's body whole, refusing one over MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	size := int64(0)
	if r.ContentLength > 0 {
		size = r.ContentLength
	}
	// ReadFrom keeps bytes.MinRead free to read into, and needs one
	// more read to see the end.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, bodyTooLarge(-1)
	case err != nil:
		return nil, errorf(tradekit.ErrInvalid, "the request body could not be read: %v", err)
	}
	return buf.Bytes(), nil
}

// bodyTooLarge returns the 413 error for a body of n bytes, or of an
// unknown size past the limit when n is negative.
func bodyTooLarge(n int64) error {
	if n < 0 {
		return errorf(errBodyTooLarge, "the request body is over %d bytes (%d KiB), the most accepted", MaxBodyBytes, MaxBodyBytes>>10)
	}
	return errorf(errBodyTooLarge, "the request body is %d bytes; at most %d (%d KiB) are accepted", n, MaxBodyBytes, MaxBodyBytes>>10)
}

// refuseBody answers a body refused with err, a [*tradekit.Error]: in the
// JSON error envelope on the API's paths (and on unknown ones, which the
// router answers in JSON), in plain text on the dashboard's and the paper
// broker's. It closes the connection, so that Go's server does not read
// on through the rest of a refused body to reuse it.
func (s *Server) refuseBody(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Connection", "close")
	if !outsideAPI(r.URL.Path) {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusBadRequest
	if k, ok := answerOf(err); ok {
		status = k.status
	}
	http.Error(w, err.Error(), status)
}

// outsideAPI reports whether path is the dashboard's or the paper
// broker's, which [Server.mount] routes beside the API and which have
// error forms of their own.
func outsideAPI(path string) bool {
	return path == "/dashboard" || strings.HasPrefix(path, "/dashboard/") || strings.HasPrefix(path, paperPrefix+"/")
}
