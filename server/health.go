package server

import (
	"net/http"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
)

// handleHealth answers 200 while the process runs.
func (s *Server) handleHealth(w http.ResponseWriter, req bunrouter.Request) error {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
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
