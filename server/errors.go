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

// errorKind is how the API answers an error of one kind: its status, its
// code, and the message a client reads when the error carries no message
// written for clients.
type errorKind struct {
	status int
	code   string
	msg    string
}

// errorKinds maps the codes of the error kinds of package tradekit (see
// [tradekit.Code]) to the code and message the API answers with; the
// status is the kind's [tradekit.Status] (docs/conventions.md,
// "Errors"), the project's one mapping of kinds to statuses, which
// answerOf fills in.
var errorKinds = map[string]errorKind{
	"VALIDATION_ERROR": {0, "VALIDATION_ERROR", "invalid request"},
	"UNAUTHORIZED":     {0, "UNAUTHORIZED", "unauthorized"},
	"FORBIDDEN":        {0, "FORBIDDEN", "forbidden"},
	"NOT_FOUND":        {0, "NOT_FOUND", "not found"},
	"CONFLICT":         {0, "CONFLICT", "conflict"},
	"ORDER_REJECTED":   {0, "ORDER_REJECTED", "rejected"},
	"RATE_LIMITED":     {0, "RATE_LIMITED", "rate limited"},
	"UNAVAILABLE":      {0, "UNAVAILABLE", "unavailable; retry later"},
}

// serverKinds are the server's own error kinds: requests that HTTP, not
// a domain package, refuses.
var serverKinds = []struct {
	kind error
	errorKind
}{
	{errMethodNotAllowed, errorKind{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed"}},
	{errHeaderTooLarge, errorKind{http.StatusRequestHeaderFieldsTooLarge, "VALIDATION_ERROR", "request headers too large"}},
	{errBodyTooLarge, errorKind{http.StatusRequestEntityTooLarge, "VALIDATION_ERROR", "request body too large"}},
	{errUnsupportedMediaType, errorKind{http.StatusUnsupportedMediaType, "VALIDATION_ERROR", "unsupported media type"}},
}

// answerOf returns how the API answers err, and false for an error of no
// known kind.
func answerOf(err error) (errorKind, bool) {
	if k, ok := errorKinds[tradekit.Code(err)]; ok {
		k.status = tradekit.Status(err)
		return k, true
	}
	for _, k := range serverKinds {
		if errors.Is(err, k.kind) {
			return k.errorKind, true
		}
	}
	return errorKind{}, false
}

// statusOf returns the status the API answers err with, that of its kind
// (see [answerOf]), or 500 for an error of no known kind. The dashboard
// shows refused requests with it (see mount), so that the API and the
// dashboard answer a refusal alike.
func statusOf(err error) int {
	if k, ok := answerOf(err); ok {
		return k.status
	}
	return http.StatusInternalServerError
}

// errMethodNotAllowed answers a known path asked with another method.
var errMethodNotAllowed = errors.New("method not allowed")

// errHeaderTooLarge answers a request whose headers exceed maxHeaderBytes.
var errHeaderTooLarge = errors.New("request headers too large")

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

// errorf returns a [*tradekit.Error] of the given kind: its message is
// written for the API's clients as it is. Quote what clients sent with
// [tradekit.Quote].
func errorf(kind error, format string, args ...any) error {
	return tradekit.Errorf(kind, format, args...)
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
// The message is the one written for clients ([tradekit.Message]: a
// [*tradekit.ParamError]'s or a [*tradekit.Error]'s, with
// [tradekit.Details]), else a plain one for the kind; the error chain,
// which names packages and causes, goes only to the log. An error of no
// known kind is a 503 when the database does not answer, and a 500
// otherwise, logged but never shown.
func (s *Server) writeError(w http.ResponseWriter, req *http.Request, err error) {
	if errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		// The client went away: nobody reads this answer, and the server
		// did nothing wrong. 499 is the log's "client closed request".
		w.WriteHeader(statusClientClosed)
		return
	}
	// An error is never the tagged representation a handler may have
	// announced before it failed.
	w.Header().Del("ETag")
	body := errorJSON{Code: "INTERNAL", Message: "internal error"}
	status := http.StatusInternalServerError
	k, known := answerOf(err)
	if known {
		status, body.Code, body.Message = k.status, k.code, k.msg
	}
	var se *json.SyntaxError
	switch msg := tradekit.Message(err); {
	case !known:
		if errors.As(err, &se) {
			status, body.Code, body.Message, known = http.StatusBadRequest, "VALIDATION_ERROR", "malformed JSON: "+se.Error(), true
		}
	case msg != "":
		body.Message, body.Details = msg, tradekit.Details(err)
	default:
		// A known kind with no message for clients: they read the kind's
		// plain message, and the log keeps the chain for whoever
		// wants to write a better one.
		s.log.InfoContext(req.Context(), "client error without a client message", "request_id", requestID(req.Context()),
			"status", status, "err", err)
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
