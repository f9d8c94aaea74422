package server

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

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
	list, err := s.custom.CustomIndicators(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]customJSON, len(list))
	for i, c := range list {
		out[i] = newCustomJSON(c)
	}
	return s.writeData(w, out)
}

// customCreateParams are the parameters of POST /api/v1/indicators/custom.
type customCreateParams struct {
	Name        string `query:"name" validate:"required"`
	Formula     string `query:"formula" validate:"required"`
	Description string `query:"description"`
}

// handleCustomCreate serves POST /api/v1/indicators/custom.
func (s *Server) handleCustomCreate(w http.ResponseWriter, req bunrouter.Request, p *customCreateParams) error {
	c := studies.CustomIndicator{
		UserID: principal(req.Context()).UserID, Name: p.Name, Formula: p.Formula, Description: p.Description,
	}
	if err := checkFormulaCost(req.Context(), "formula", p.Formula); err != nil {
		return err
	}
	if err := s.custom.CreateCustomIndicator(req.Context(), &c, s.now()); err != nil {
		return err
	}
	return s.writeData(w, newCustomJSON(c))
}

// customUpdateParams are the parameters of PATCH
// /api/v1/indicators/custom/:id: only those given change.
type customUpdateParams struct {
	ID          uuid.UUID `path:"id"`
	Name        *string   `query:"name"`
	Formula     *string   `query:"formula"`
	Description *string   `query:"description"`
}

// patch returns the change the parameters ask for.
func (p *customUpdateParams) patch() studies.CustomPatch {
	return studies.CustomPatch{Name: p.Name, Formula: p.Formula, Description: p.Description}
}

// check refuses a PATCH that changes nothing, and checks the fields given
// as package studies checks an indicator, before the lookup of the one
// to change: the others take valid stand-ins.
func (p *customUpdateParams) check() error {
	if p.patch() == (studies.CustomPatch{}) {
		return invalidParam("name", "give at least one of name, formula and description")
	}
	c := studies.CustomIndicator{Name: "stand-in", Formula: "close"}
	p.patch().Apply(&c)
	return c.Validate()
}

// handleCustomUpdate serves PATCH /api/v1/indicators/custom/:id: only the
// parameters given change.
func (s *Server) handleCustomUpdate(w http.ResponseWriter, req bunrouter.Request, p *customUpdateParams) error {
	if p.Formula != nil {
		if err := checkFormulaCost(req.Context(), "formula", *p.Formula); err != nil {
			return err
		}
	}
	c, err := s.custom.UpdateCustomIndicator(req.Context(), principal(req.Context()).UserID, p.ID, p.patch(), s.now())
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{
		"id": c.ID.String(), "name": c.Name, "formula": c.Formula, "updatedAt": timestamp(c.UpdatedAt),
	})
}

// handleCustomDelete serves DELETE /api/v1/indicators/custom/:id.
func (s *Server) handleCustomDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	id := p.ID
	if err := s.custom.DeleteCustomIndicator(req.Context(), principal(req.Context()).UserID, id, s.now()); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": id.String(), "status": "deleted"})
}

// customEvaluateParams are the parameters of POST
// /api/v1/indicators/custom/:id/evaluate.
type customEvaluateParams struct {
	ID      uuid.UUID `path:"id"`
	AssetID uuid.UUID `query:"assetId" validate:"required"`
	dateRange
	adjustment
}

// handleCustomEvaluate serves POST /api/v1/indicators/custom/:id/evaluate.
func (s *Server) handleCustomEvaluate(w http.ResponseWriter, req bunrouter.Request, p *customEvaluateParams) error {
	id, assetID, from, to := p.ID, p.AssetID, p.From, p.To
	ctx := req.Context()
	c, err := s.custom.CustomIndicator(ctx, principal(ctx).UserID, id)
	if err != nil {
		return err
	}
	// Checked again here: the plan may have changed since the formula was
	// stored.
	if err := checkFormulaCost(ctx, "formula", c.Formula); err != nil {
		return err
	}
	v, err := s.studies.PriceVersion(ctx, assetID)
	if err != nil {
		return err
	}
	// Keyed by the formula's text: an edit is a new entry.
	doc, err := s.seriesDoc("custom/"+p.basis()+assetID.String()+"/"+c.Formula, v.Version, func() (studies.Output, marketdata.PriceVersion, error) {
		return s.studies.Evaluate(ctx, c, assetID, p.Adjusted)
	})
	if err != nil {
		return err
	}
	return s.writeAppended(w, func(b []byte) ([]byte, error) {
		b = append(b, `{"indicatorId":"`+id.String()+`","assetId":"`+assetID.String()+`","values":`...)
		return append(doc.appendWindow(b, from, to), '}'), nil
	})
}
