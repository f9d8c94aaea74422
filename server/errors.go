package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
)

// errorKinds maps the error kinds of package tradekit to HTTP statuses and
// codes (CONTRACT.md, "Errors"). It is the only such mapping.
var errorKinds = []struct {
	kind   error
	status int
	code   string
}{
	{tradekit.ErrInvalid, http.StatusBadRequest, "VALIDATION_ERROR"},
	{tradekit.ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"},
	{tradekit.ErrForbidden, http.StatusForbidden, "FORBIDDEN"},
	{tradekit.ErrNotFound, http.StatusNotFound, "NOT_FOUND"},
	{errMethodNotAllowed, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
	{tradekit.ErrConflict, http.StatusConflict, "CONFLICT"},
	{tradekit.ErrRejected, http.StatusUnprocessableEntity, "ORDER_REJECTED"},
	{tradekit.ErrRateLimited, http.StatusTooManyRequests, "RATE_LIMITED"},
	{tradekit.ErrUnavailable, http.StatusServiceUnavailable, "UNAVAILABLE"},
}

// errMethodNotAllowed answers a known path asked with another method.
var errMethodNotAllowed = errors.New("method not allowed")

// statusClientClosed is logged for a request whose client hung up before
// the answer was ready (nginx's convention; no client sees it).
const statusClientClosed = 499

// unavailableRetry is the Retry-After sent with 503 UNAVAILABLE.
const unavailableRetry = 5 * time.Second

// errorBody is the error envelope.
type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// apiError is an error the server itself raises: its message is written
// for the API's users as it is, and it unwraps to its kind.
type apiError struct {
	kind error
	msg  string
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.kind }

// errorf returns an *apiError of the given kind.
func errorf(kind error, format string, args ...any) error {
	return &apiError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// invalidParam returns a *tradekit.ParamError for the named parameter.
func invalidParam(param, format string, args ...any) error {
	return &tradekit.ParamError{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// errorHandler renders the error a handler returns as the error envelope.
func (s *Server) errorHandler(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		if err := next(w, req); err != nil {
			s.writeError(w, req.Request, err)
		}
		return nil
	}
}

// writeError writes err as the error envelope with the status of its kind.
// An error of no known kind is a 503 when the database does not answer,
// and a 500 otherwise, logged but never shown.
func (s *Server) writeError(w http.ResponseWriter, req *http.Request, err error) {
	if errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		// The client went away: nobody reads this answer, and the server
		// did nothing wrong. 499 is the log's "client closed request".
		w.WriteHeader(statusClientClosed)
		return
	}
	body := errorJSON{Code: "INTERNAL", Message: "internal error"}
	status := http.StatusInternalServerError
	known := false
	for _, k := range errorKinds {
		if errors.Is(err, k.kind) {
			status, body.Code, body.Message, known = k.status, k.code, err.Error(), true
			break
		}
	}
	var pe *tradekit.ParamError
	if errors.As(err, &pe) {
		body.Details = map[string]any{"fields": []string{pe.Param}}
	}
	var se *json.SyntaxError
	if !known && errors.As(err, &se) {
		status, body.Code, body.Message, known = http.StatusBadRequest, "VALIDATION_ERROR", "malformed JSON: "+se.Error(), true
	}
	if !known && !s.databaseAnswers(req.Context()) {
		status, body.Code, body.Message = http.StatusServiceUnavailable, "UNAVAILABLE", "the database cannot be reached; retry later"
	}
	switch status {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", fmt.Sprint(int(unavailableRetry.Seconds())))
		s.log.WarnContext(req.Context(), "unavailable", "request_id", requestID(req.Context()), "err", err)
	case http.StatusInternalServerError:
		s.log.ErrorContext(req.Context(), "internal error", "request_id", requestID(req.Context()),
			"method", req.Method, "path", req.URL.Path, "err", err)
	}
	s.writeJSON(w, status, errorBody{Error: body})
}

// databaseAnswers reports whether the database answers a ping (a round
// trip on PostgreSQL) within a second.
func (s *Server) databaseAnswers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	err := s.db.PingContext(ctx)
	if err != nil {
		s.log.Debug("database check failed", slog.Any("err", err))
	}
	return err == nil
}
