package connect

import (
	"errors"

	"github.com/tradekit/tradekit"
)

// The reasons users read for a broker that failed, wherever they read
// them: a failed sync's log, a rejected order, a copy that could not be
// placed ([FailureReason]).
const (
	// UnauthorizedReason is the reason of a broker that no longer
	// accepts the connection's authorization.
	UnauthorizedReason = "the broker no longer accepts this connection's authorization: disconnect and connect again"
	// UnavailableReason is the reason of a broker that could not be
	// reached or failed.
	UnavailableReason = "the broker could not be reached or failed"
)

// FailureReason returns what err, the error of a broker call, tells the
// user: its message for users when it has one ([tradekit.Message]), else
// [UnauthorizedReason] for an error wrapping [tradekit.ErrUnauthorized]
// and [UnavailableReason] for one wrapping [tradekit.ErrUnavailable];
// "" for any other error, which the caller words (or returns).
func FailureReason(err error) string {
	switch {
	case tradekit.Message(err) != "":
		return tradekit.Message(err)
	case errors.Is(err, tradekit.ErrUnauthorized):
		return UnauthorizedReason
	case errors.Is(err, tradekit.ErrUnavailable):
		return UnavailableReason
	}
	return ""
}
