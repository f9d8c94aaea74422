package tradekit

import (
	"errors"
	"fmt"
	"strconv"
)

// The error kinds every Tradekit package wraps. Callers test for them with
// [errors.Is]; [Code] names each kind's error code, which the HTTP server
// maps to one status (see server/errors.go), so a domain package never
// needs to know about HTTP.
var (
	// ErrNotFound reports that a resource does not exist, or belongs to
	// another user and must look as if it did not exist.
	ErrNotFound = errors.New("not found")

	// ErrInvalid reports a missing, malformed or out-of-range argument.
	ErrInvalid = errors.New("invalid argument")

	// ErrConflict reports that a unique value is taken or that the
	// resource's state forbids the requested change.
	ErrConflict = errors.New("conflict")

	// ErrRejected reports that a guardrail or business rule refused an
	// otherwise well-formed request, such as an order.
	ErrRejected = errors.New("rejected")

	// ErrUnauthorized reports a missing, unknown or revoked credential.
	ErrUnauthorized = errors.New("unauthorized")

	// ErrForbidden reports a valid credential whose owner may not perform
	// the requested action.
	ErrForbidden = errors.New("forbidden")

	// ErrRateLimited reports that the caller's plan allowance is spent.
	ErrRateLimited = errors.New("rate limited")

	// ErrUnavailable reports that a dependency, such as the database,
	// cannot be reached right now; the same request may succeed later.
	ErrUnavailable = errors.New("unavailable")
)

// ParamError reports a bad named parameter: missing, malformed or out of
// range. It wraps [ErrInvalid]; the HTTP server lists Param in the error's
// details.
type ParamError struct {
	Param string // the parameter's name as the caller spelled it, e.g. "from"
	Msg   string // what is wrong with it, lowercase
}

// Error returns "param: msg".
func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// Unwrap returns [ErrInvalid].
func (e *ParamError) Unwrap() error { return ErrInvalid }

// Error is an error whose message is written for the people who use an
// application built on Tradekit, an API's clients or a command's user: it
// names no package and carries no cause. It wraps its Kind, one of the
// kinds above.
//
// Packages wrap it with their prefix, as in
//
//	fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "asset %s not found", tradekit.Quote(symbol)))
//
// so that the full error reads as the house style wants ("marketdata:
// asset "X" not found") while a server shows its clients Msg alone.
type Error struct {
	Kind error  // the kind, e.g. ErrNotFound
	Msg  string // the message for the end user, lowercase, no trailing period
	// Details, when not nil, are facts a program may act on, shown beside
	// the message: e.g. {"limit": "portfolios"} for a plan's count limit.
	Details map[string]any
}

// Errorf returns an [*Error] of the given kind whose message is formatted
// as by [fmt.Sprintf]. Quote values that come from users with [Quote].
func Errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// MaxQuoted is the number of characters of a value that [Quote] keeps.
const MaxQuoted = 64

// Quote returns s as a double-quoted Go string literal, as
// [strconv.Quote] does, cut to its first [MaxQuoted] characters with an
// ellipsis after the closing quote when it is longer: a message that
// echoes what a user sent stays short whatever they sent.
//
//	Quote("ALBN")                   // "ALBN"
//	Quote(strings.Repeat("x", 900)) // "xxxx…xxxx"… (64 x, then the ellipsis)
func Quote(s string) string {
	n := 0
	for i := range s {
		if n == MaxQuoted {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

// kinds are the error kinds with their codes and HTTP statuses
// (docs/conventions.md, "Errors"), in the order [Code] and [Status]
// try them.
var kinds = []struct {
	kind   error
	code   string
	status int
}{
	{ErrInvalid, "VALIDATION_ERROR", 400},
	{ErrUnauthorized, "UNAUTHORIZED", 401},
	{ErrForbidden, "FORBIDDEN", 403},
	{ErrNotFound, "NOT_FOUND", 404},
	{ErrConflict, "CONFLICT", 409},
	{ErrRejected, "ORDER_REJECTED", 422},
	{ErrRateLimited, "RATE_LIMITED", 429},
	{ErrUnavailable, "UNAVAILABLE", 503},
}

// Status returns the HTTP status that answers err, by the kind [Code]
// finds (docs/conventions.md, "Errors"):
//
//	VALIDATION_ERROR  400
//	UNAUTHORIZED      401
//	FORBIDDEN         403
//	NOT_FOUND         404
//	CONFLICT          409
//	ORDER_REJECTED    422
//	RATE_LIMITED      429
//	UNAVAILABLE       503
//	INTERNAL          500
//
// Status returns 200 for a nil error. Surfaces other than the API's JSON
// (HTML pages, for one) answer with it so that a kind has one status
// everywhere.
func Status(err error) int {
	if err == nil {
		return 200
	}
	for _, k := range kinds {
		if errors.Is(err, k.kind) {
			return k.status
		}
	}
	return 500
}

// Code returns the code of err's kind, as the HTTP API's error envelope
// carries it (docs/conventions.md, "Errors"):
//
//	ErrInvalid       VALIDATION_ERROR
//	ErrUnauthorized  UNAUTHORIZED
//	ErrForbidden     FORBIDDEN
//	ErrNotFound      NOT_FOUND
//	ErrConflict      CONFLICT
//	ErrRejected      ORDER_REJECTED
//	ErrRateLimited   RATE_LIMITED
//	ErrUnavailable   UNAVAILABLE
//	any other error  INTERNAL
//
// An error of several kinds has the code of the first in that list. Code
// returns "" for a nil error.
func Code(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range kinds {
		if errors.Is(err, k.kind) {
			return k.code
		}
	}
	return "INTERNAL"
}

// Message returns the message of err written for end users: the
// "param: msg" of the first [*ParamError] in err's chain, else the Msg of
// the first [*Error]. It returns "" when err carries neither: the rest of
// the chain names packages and causes, so every surface words such an
// error itself, from its [Code].
func Message(err error) string {
	var pe *ParamError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	var te *Error
	if errors.As(err, &te) {
		return te.Msg
	}
	return ""
}

// Param returns the parameter named by the first [*ParamError] in err's
// chain, or "" when there is none.
func Param(err error) string {
	var pe *ParamError
	if errors.As(err, &pe) {
		return pe.Param
	}
	return ""
}

// Details returns the facts beside err's [Message] that a program may act
// on: {"fields": []string{param}} for a [*ParamError] (the first in err's
// chain, as for Message), else the Details of the first [*Error], which
// may be nil; nil when err carries neither.
func Details(err error) map[string]any {
	var pe *ParamError
	if errors.As(err, &pe) {
		return map[string]any{"fields": []string{pe.Param}}
	}
	var te *Error
	if errors.As(err, &te) {
		return te.Details
	}
	return nil
}
