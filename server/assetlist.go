package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/marketdata"
)

// encodeAssetList encodes the full asset list as handleAssetList's data,
// the bytes writeData would write for it, for marketdata.Reads to cache.
func encodeAssetList(as []marketdata.Asset) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as writeJSON
	if err := enc.Encode(newAssetList(as, assetFields{exchangeID: true, isActive: true})); err != nil {
		return nil, fmt.Errorf("server: asset list: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeAssetList writes the encoded full asset list of the asset list
// version in the data envelope: compressed once per version (and kept
// with the server's documents) for a client that takes gzip, as is.
func (s *Server) writeAssetList(w http.ResponseWriter, req bunrouter.Request, data []byte, version int64) error {
	if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
		return s.writeRawData(w, data)
	}
	return s.writeGzipCached(w, "assets/list", version, func(b []byte) ([]byte, error) {
		b = append(b, `{"data":`...)
		b = append(b, data...)
		return append(b, "}\n"...), nil
	})
}
