package server

import (
	"net/http"
	"strconv"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/api"
)

// handleHealth answers 200 while the process runs.
func (s *Server) handleHealth(w http.ResponseWriter, req bunrouter.Request) error {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleOpenAPI serves GET /api/v1/openapi.json: the OpenAPI document
// of the API (package api), a public route.
func (s *Server) handleOpenAPI(w http.ResponseWriter, req bunrouter.Request) error {
	doc, err := api.JSON()
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
	return nil
}

// handleReady answers 200 while the database answers, 503 otherwise.
func (s *Server) handleReady(w http.ResponseWriter, req bunrouter.Request) error {
	if !s.databaseAnswers(req.Context()) {
		return errorf(tradekit.ErrUnavailable, "the database cannot be reached")
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
