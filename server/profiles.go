package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/profiles"
)

// maxProfileIDs is the most asset ids GET /asset-profiles takes (spec 8).
const maxProfileIDs = 50

// profileIDsParam is the spec's name of the ids of GET /asset-profiles.
const profileIDsParam = "assetIds[]"

// handleAssetProfileGet serves GET /api/v1/asset-profiles/:assetId: the
// stored profile with assetId and symbol first and updatedAt last,
// spliced around the engine's JSON as stored (no decoding).
func (s *Server) handleAssetProfileGet(w http.ResponseWriter, req bunrouter.Request, p *assetIDParams) error {
	id, ctx := p.AssetID, req.Context()
	rec, err := s.profiles.Profile(ctx, id)
	if errors.Is(err, tradekit.ErrNotFound) {
		return s.noProfile(req, id)
	}
	if err != nil {
		return err
	}
	if notModified(w, req, `"a`+strconv.FormatInt(rec.UpdatedAt.UnixMicro(), 36)+`"`) {
		return nil
	}
	body := rec.JSON
	if len(body) < 3 || body[0] != '{' || body[len(body)-1] != '}' || !json.Valid(body) {
		return fmt.Errorf("server: stored profile of %s is not a JSON object", id)
	}
	sym, _ := json.Marshal(rec.Symbol)
	at, _ := timestamp(rec.UpdatedAt).MarshalJSON()
	buf := make([]byte, 0, len(body)+len(sym)+len(at)+64)
	buf = append(buf, `{"assetId":"`...)
	buf = append(buf, rec.AssetID.String()...)
	buf = append(buf, `","symbol":`...)
	buf = append(buf, sym...)
	buf = append(buf, ',')
	buf = append(buf, body[1:len(body)-1]...)
	buf = append(buf, `,"updatedAt":`...)
	buf = append(buf, at...)
	buf = append(buf, '}')
	return s.writeRawData(w, buf)
}

// noProfile returns the 404 for an asset without a stored profile, saying
// why: no such asset, too few bars, or not built yet.
func (s *Server) noProfile(req bunrouter.Request, id uuid.UUID) error {
	ctx := req.Context()
	a, err := s.market.Asset(ctx, id)
	if err != nil {
		return err // ErrNotFound for an unknown asset
	}
	n, err := s.market.CountPrices(ctx, id)
	if err != nil {
		return err
	}
	if n < profiles.MinBars {
		return errorf(tradekit.ErrNotFound, "no profile yet for asset %s (%s): it has %d daily bars, %d needed",
			a.Symbol, id, n, profiles.MinBars)
	}
	return errorf(tradekit.ErrNotFound, "no profile yet for asset %s (%s): not built yet (profiles are built after "+
		"seeding and imports, or by `tradekit profiles build`)", a.Symbol, id)
}

// assetProfileSummaryJSON is the reduced profile of the multi-asset form.
type assetProfileSummaryJSON struct {
	AssetID          string          `json:"assetId"`
	Symbol           string          `json:"symbol"`
	RegimePatterns   currentRegime   `json:"regimePatterns"`
	StrategyAffinity json.RawMessage `json:"strategyAffinity"`
	Volatility       json.RawMessage `json:"volatility"`
	UpdatedAt        timestamp       `json:"updatedAt"`
}

type currentRegime struct {
	Current string `json:"current"`
}

// assetProfileListParams are the parameters of GET /api/v1/asset-profiles:
// assetIds[], also accepted without brackets.
type assetProfileListParams struct {
	IDs      []uuid.UUID `query:"assetIds[]"`
	PlainIDs []uuid.UUID `query:"assetIds"`

	ids []uuid.UUID // both, in the order given, each once; set by check
}

// check requires 1 to 50 distinct ids.
func (p *assetProfileListParams) check() error {
	all := slices.Concat(p.IDs, p.PlainIDs)
	if len(all) == 0 {
		return invalidParam(profileIDsParam, "is required: give 1 to %d asset ids, as assetIds[]=<uuid>&assetIds[]=<uuid>", maxProfileIDs)
	}
	seen := make(map[uuid.UUID]bool, len(all))
	for _, id := range all {
		if !seen[id] {
			seen[id] = true
			p.ids = append(p.ids, id)
		}
	}
	if len(p.ids) > maxProfileIDs {
		return invalidParam(profileIDsParam, "at most %d asset ids per request, got %d", maxProfileIDs, len(p.ids))
	}
	return nil
}

// handleAssetProfileList serves GET /api/v1/asset-profiles?assetIds[]=…: the
// reduced profiles of up to 50 assets, in the order asked, each once.
// Unknown ids, and assets with no profile yet, are left out.
func (s *Server) handleAssetProfileList(w http.ResponseWriter, req bunrouter.Request, p *assetProfileListParams) error {
	ids := p.ids
	recs, err := s.profiles.Profiles(req.Context(), ids)
	if err != nil {
		return err
	}
	out := make([]assetProfileSummaryJSON, len(recs))
	for i, r := range recs {
		var part struct {
			Regimes          currentRegime   `json:"regimePatterns"`
			StrategyAffinity json.RawMessage `json:"strategyAffinity"`
			Volatility       json.RawMessage `json:"volatility"`
		}
		if err := json.Unmarshal(r.JSON, &part); err != nil {
			// %v, not %w: a decoder's error would read as the client's
			// fault (400), and stored data gone bad is the server's (500).
			return fmt.Errorf("server: stored profile of %s is corrupt: %v", r.AssetID, err)
		}
		out[i] = assetProfileSummaryJSON{AssetID: r.AssetID.String(), Symbol: r.Symbol, RegimePatterns: part.Regimes,
			StrategyAffinity: part.StrategyAffinity, Volatility: part.Volatility, UpdatedAt: timestamp(r.UpdatedAt)}
	}
	return s.writeData(w, out)
}
