package tradekit

import "errors"

// The error kinds every Tradekit package wraps. Callers test for them with
// [errors.Is]; the HTTP server maps each kind to one status and error code
// (see server/errors.go), so a domain package never needs to know about HTTP.
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
