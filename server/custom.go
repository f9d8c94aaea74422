package server

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/studies"
)

// customJSON is a custom indicator as the list and the create response
// show it.
type customJSON struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Formula     string    `json:"formula"`
	Description string    `json:"description"`
	CreatedAt   timestamp `json:"createdAt"`
}

func newCustomJSON(c studies.CustomIndicator) customJSON {
	return customJSON{ID: c.ID.String(), Name: c.Name, Formula: c.Formula, Description: c.Description, CreatedAt: timestamp(c.CreatedAt)}
}

// handleCustomList serves GET /api/v1/indicators/custom.
func (s *Server) handleCustomList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := studies.NewStore(s.db).CustomIndicators(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]customJSON, len(list))
	for i, c := range list {
		out[i] = newCustomJSON(c)
	}
	return s.writeData(w, out)
}

// handleCustomCreate serves POST /api/v1/indicators/custom.
func (s *Server) handleCustomCreate(w http.ResponseWriter, req bunrouter.Request) error {
	q := req.URL.Query()
	c := studies.CustomIndicator{
		UserID: principal(req.Context()).UserID, Name: q.Get("name"),
		Formula: q.Get("formula"), Description: q.Get("description"),
	}
	err := s.db.RunInTx(req.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		return studies.NewStore(tx).CreateCustomIndicator(ctx, &c, s.now())
	})
	if err != nil {
		return err
	}
	return s.writeData(w, newCustomJSON(c))
}

// handleCustomUpdate serves PATCH /api/v1/indicators/custom/:id: only the
// parameters given change.
func (s *Server) handleCustomUpdate(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	q := req.URL.Query()
	var p studies.CustomPatch
	for name, dst := range map[string]**string{"name": &p.Name, "formula": &p.Formula, "description": &p.Description} {
		if q.Has(name) {
			v := q.Get(name)
			*dst = &v
		}
	}
	if p == (studies.CustomPatch{}) {
		return invalidParam("name", "give at least one of name, formula and description")
	}
	c, err := studies.NewStore(s.db).UpdateCustomIndicator(req.Context(), principal(req.Context()).UserID, id, p, s.now())
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{
		"id": c.ID.String(), "name": c.Name, "formula": c.Formula, "updatedAt": timestamp(c.UpdatedAt),
	})
}

// handleCustomDelete serves DELETE /api/v1/indicators/custom/:id.
func (s *Server) handleCustomDelete(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	if err := studies.NewStore(s.db).DeleteCustomIndicator(req.Context(), principal(req.Context()).UserID, id, s.now()); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": id.String(), "status": "deleted"})
}

// handleCustomEvaluate serves POST /api/v1/indicators/custom/:id/evaluate.
func (s *Server) handleCustomEvaluate(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	assetID, err := queryUUID(req, "assetId")
	if err != nil {
		return err
	}
	from, to, err := queryDateRange(req)
	if err != nil {
		return err
	}
	ctx := req.Context()
	c, err := studies.NewStore(s.db).CustomIndicator(ctx, principal(ctx).UserID, id)
	if err != nil {
		return err
	}
	v, err := s.studies.PriceVersion(ctx, assetID)
	if err != nil {
		return err
	}
	// Keyed by the formula's text: an edit is a new entry.
	doc, err := s.seriesDoc("custom/"+assetID.String()+"/"+c.Formula, v.Version, func() (studies.Output, marketdata.PriceVersion, error) {
		return s.studies.Evaluate(ctx, c, assetID)
	})
	if err != nil {
		return err
	}
	return s.writeAppended(w, func(b []byte) ([]byte, error) {
		b = append(b, `{"indicatorId":"`+id.String()+`","assetId":"`+assetID.String()+`","values":`...)
		return append(doc.appendWindow(b, from, to), '}'), nil
	})
}

// queryUUID returns the required query parameter name as a UUID.
func queryUUID(req bunrouter.Request, name string) (uuid.UUID, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return uuid.Nil, invalidParam(name, "is required")
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return uuid.Nil, invalidParam(name, "must be a UUID, got %s", tradekit.Quote(v))
	}
	return id, nil
}
