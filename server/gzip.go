package server

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzipMin is the smallest JSON body sent compressed: below a packet's
// worth, compression saves nothing worth its time.
const gzipMin = 1400

// gzipWriters recycles gzip writers, whose state is about 800 KB.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level: no error
	return w
}}

// gzipJSON compresses the API's JSON answers of gzipMin bytes or more (or
// of unknown length) with gzip, at its fastest level, for clients whose
// Accept-Encoding takes it, and says Vary: Accept-Encoding on every
// answer, so that caches keep the two forms apart.
func gzipJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip: gzip
// (or x-gzip) listed with a q-value above 0, or else "*" so listed
// (RFC 9110 12.5.3).
func acceptsGzip(header string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch coding {
		case "gzip", "x-gzip":
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// gzipWriter compresses the body when the header written says it is JSON
// long enough.
type gzipWriter struct {
	http.ResponseWriter
	gz      *gzip.Writer
	decided bool
}

// WriteHeader decides, from the header, whether the body is compressed.
func (g *gzipWriter) WriteHeader(code int) {
	if g.decided {
		return
	}
	g.decided = true
	h := g.Header()
	if code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified &&
		strings.HasPrefix(h.Get("Content-Type"), "application/json") && h.Get("Content-Encoding") == "" {
		if n, err := strconv.Atoi(h.Get("Content-Length")); err != nil || n >= gzipMin {
			h.Del("Content-Length")
			h.Set("Content-Encoding", "gzip")
			if tag := h.Get("ETag"); tag != "" {
				h.Set("ETag", gzipTag(tag))
			}
			g.gz = gzipWriters.Get().(*gzip.Writer)
			g.gz.Reset(g.ResponseWriter)
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

// Write writes b, compressed when WriteHeader so decided.
func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		return g.gz.Write(b)
	}
	return g.ResponseWriter.Write(b)
}

// close ends the compressed stream, if any.
func (g *gzipWriter) close() {
	if g.gz != nil {
		g.gz.Close()
		g.gz.Reset(nil)
		gzipWriters.Put(g.gz)
		g.gz = nil
	}
}

// gzipTag returns the ETag of the gzip form of the representation tagged
// etag: a strong validator names one content coding (RFC 9110 8.8.3).
func gzipTag(etag string) string {
	return strings.TrimSuffix(etag, `"`) + `-gzip"`
}

// writeGzipCached writes the answer whose body build appends (the {"data":
// …} envelope included) gzipped, from the cache of gzipped answers under
// key and version when it is there, else built, gzipped and cached: at
// the best compression when the cache can keep it (it is paid once per
// price version), at the fastest when it cannot (it is paid per request). It serves the largest cached answers, whole
// histories, that would otherwise be compressed again on every request.
// The caller has checked that the client takes gzip, and has set the
// identity ETag, which this turns into the gzip form's.
func (s *Server) writeGzipCached(w http.ResponseWriter, key string, version int64, build func([]byte) ([]byte, error)) error {
	var body []byte
	if v, ok := s.docs.Get(key, version); ok {
		body = v.([]byte)
	} else {
		raw, err := build(nil)
		if err != nil {
			return err
		}
		level := gzip.BestCompression
		if !s.docs.Holds(len(raw) / 4) { // gzip takes JSON to a fifth or less
			level = gzip.BestSpeed
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, level) // a valid level: no error
		zw.Write(raw)
		zw.Close()
		body = buf.Bytes()
		s.docs.Put(key, version, body, len(body))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Encoding", "gzip")
	if tag := h.Get("ETag"); tag != "" {
		h.Set("ETag", gzipTag(tag))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}
