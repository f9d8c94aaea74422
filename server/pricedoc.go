package server

import (
	"hash/fnv"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
)

// priceDocument is an asset's whole daily history encoded once as the
// records of the prices list, with each record's place in the bytes, so
// that a range request is a slice, not a query and an encoding. Documents
// are cached per asset under the price version they were read at; every
// price write bumps the version, so the next request after a change, on
// any instance, reads the prices anew.
type priceDocument struct {
	dates  []calendar.Date
	starts []int  // record i is body[starts[i]:ends[i]]
	ends   []int  // records are separated by one comma
	body   []byte // the records, without the brackets
}

// newPriceDocument encodes ps, oldest first.
func newPriceDocument(ps []marketdata.Price) *priceDocument {
	d := &priceDocument{dates: make([]calendar.Date, len(ps)), starts: make([]int, len(ps)), ends: make([]int, len(ps)),
		body: make([]byte, 0, len(ps)*190)}
	for i, p := range ps {
		if i > 0 {
			d.body = append(d.body, ',')
		}
		d.dates[i], d.starts[i] = p.Date, len(d.body)
		d.body = appendPrice(d.body, p)
		d.ends[i] = len(d.body)
	}
	return d
}

// size is the document's memory, roughly, for the cache's bound.
func (d *priceDocument) size() int { return len(d.body) + len(d.dates)*(8+16) + 64 }

// appendRange appends the JSON array of the records from from to to, both
// included; a zero bound is open.
func (d *priceDocument) appendRange(b []byte, from, to calendar.Date) []byte {
	i, j := ohlcv.Between(d.dates, from, to)
	b = append(b, '[')
	if i < j {
		b = append(b, d.body[d.starts[i]:d.ends[j-1]]...)
	}
	return append(b, ']')
}

// on returns the record of date d, and whether there is one.
func (d *priceDocument) on(day calendar.Date) ([]byte, bool) {
	i := sort.Search(len(d.dates), func(k int) bool { return !d.dates[k].Before(day) })
	if i == len(d.dates) || d.dates[i] != day {
		return nil, false
	}
	return d.body[d.starts[i]:d.ends[i]], true
}

// latest returns the last record, and whether there is one.
func (d *priceDocument) latest() ([]byte, bool) {
	if len(d.dates) == 0 {
		return nil, false
	}
	n := len(d.dates) - 1
	return d.body[d.starts[n]:d.ends[n]], true
}

// priceDoc returns the asset's price document and its price version, and
// sets the answer's ETag, named by what (the part of the document the
// request serves) and derived from the version, so that it changes with
// any price. When the request's If-None-Match holds that ETag, priceDoc
// answers 304 itself and returns a nil document. The error wraps tradekit.ErrNotFound for an
// unknown asset.
func (s *Server) priceDoc(w http.ResponseWriter, req bunrouter.Request, assetID uuid.UUID, what string) (*priceDocument, int64, error) {
	ctx := req.Context()
	v, err := s.studies.PriceVersion(ctx, assetID)
	if err != nil {
		return nil, 0, err
	}
	etag := `"p` + strconv.FormatInt(v.Version, 10) + "-" + what + `"`
	if notModified(w, req, etag) {
		return nil, v.Version, nil
	}
	key := "prices/" + assetID.String()
	d, ok := s.docs.Get(key, v.Version)
	s.metrics.cacheLookup(cachePrices, ok)
	if ok {
		return d.(*priceDocument), v.Version, nil
	}
	// Read after the version, and on a replica only once it has replayed
	// that version (marketdata.Reads.PricesAt): the records are at least
	// as new as it, so nothing stale is cached under a newer version,
	// however far a replica lags. One statement reads one snapshot, so a
	// concurrent import is seen whole or not at all.
	ps, err := s.market.PricesAt(ctx, assetID, v.Version)
	if err != nil {
		return nil, 0, err
	}
	doc := newPriceDocument(ps)
	s.docs.Put(key, v.Version, doc, doc.size())
	return doc, v.Version, nil
}

// notModified sets the answer's ETag and, when the request's
// If-None-Match names it or its gzip form's (see gzipJSON), answers 304
// without a body, tagged as the client has it, and reports true.
func notModified(w http.ResponseWriter, req bunrouter.Request, etag string) bool {
	w.Header().Set("ETag", etag)
	inm := req.Header.Get("If-None-Match")
	switch {
	case etagMatches(inm, etag):
	case etagMatches(inm, gzipTag(etag)):
		w.Header().Set("ETag", gzipTag(etag))
	default:
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// requestTag returns an ETag for the request's URL query under a version:
// a prefix naming the resource kind, the version, and an FNV-1a hash of
// the raw query, so that it changes with either.
func requestTag(kind string, version int64, req bunrouter.Request) string {
	h := fnv.New64a()
	h.Write([]byte(req.URL.RawQuery))
	return `"` + kind + strconv.FormatInt(version, 10) + "-" + strconv.FormatUint(h.Sum64(), 36) + `"`
}

// etagMatches reports whether an If-None-Match header names etag: "*",
// or a list of entity tags, weak ones compared weakly (RFC 9110 13.1.2).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
