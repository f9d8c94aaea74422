package connect

import (
	"time"

	"github.com/tradekit/tradekit/brokers"
)

// The outcomes an [Observer] is told of.
const (
	// OutcomeAccepted is a placement recorded pending or sent: no
	// guardrail broke and the broker did not refuse it.
	OutcomeAccepted = "accepted"
	// OutcomeRejected is a placement recorded rejected, by a guardrail or
	// by the broker.
	OutcomeRejected = "rejected"
	// OutcomeReplayed is a placement answered with the earlier order of
	// the same client order id.
	OutcomeReplayed = "replayed"
	// OutcomeError is a placement that returned an error and recorded
	// nothing.
	OutcomeError = "error"
	// OutcomeCompleted and OutcomeFailed end a sync.
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
)

// Observer receives measurements of a [Service]'s work, for metrics. Each
// field may be nil; each is called on the goroutine doing the work, so it
// must be quick and safe for concurrent use. The outcomes and rules it is
// given come from small fixed sets: the Outcome constants and the rules
// of package brokers.
type Observer struct {
	// OrderPlaced is called once [Service.PlaceOrder] returns, with how
	// long it took and its outcome: [OutcomeAccepted], [OutcomeRejected],
	// [OutcomeReplayed] or [OutcomeError].
	OrderPlaced func(d time.Duration, outcome string)
	// GuardrailRejected is called once for each guardrail rule (e.g.
	// [brokers.RuleMaxDailyTrades]) that an order placed broke.
	GuardrailRejected func(rule string)
	// SyncDone is called when a sync ends, with its outcome,
	// [OutcomeCompleted] or [OutcomeFailed], and how long it ran.
	SyncDone func(outcome string, d time.Duration)
}

// placed tells the observer of a placement that started at start.
func (o Observer) placed(start time.Time, p Placement, err error) {
	outcome := OutcomeAccepted
	switch {
	case err != nil:
		outcome = OutcomeError
	case p.Replayed:
		outcome = OutcomeReplayed
	case p.Order.Status == brokers.Rejected:
		outcome = OutcomeRejected
		if o.GuardrailRejected != nil {
			for _, v := range p.Check.Violations {
				o.GuardrailRejected(v.Rule)
			}
		}
	}
	if o.OrderPlaced != nil {
		o.OrderPlaced(time.Since(start), outcome)
	}
}

// synced tells the observer of a sync that started at start and ended
// with err.
func (o Observer) synced(start time.Time, err error) {
	if o.SyncDone == nil {
		return
	}
	outcome := OutcomeCompleted
	if err != nil {
		outcome = OutcomeFailed
	}
	o.SyncDone(outcome, time.Since(start))
}
