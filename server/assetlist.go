package server

import (
	"bytes"
	"encoding/json"
	"fmt"

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
