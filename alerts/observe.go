package alerts

import (
	"context"
	"time"
)

// The outcomes of a delivery attempt, as [Observer.Delivered] reports
// them.
const (
	DeliverySucceeded = "succeeded" // the receiver answered 2xx
	DeliveryRetry     = "retry"     // it did not; another attempt is due
	DeliveryFailed    = "failed"    // it did not, and the retries have run out
)

// Observer receives measurements of a Service's background work, for
// metrics. Any field may be nil; the zero value observes nothing.
type Observer struct {
	// Evaluated reports one evaluation pass: the firings it made and how
	// long it ran.
	Evaluated func(fired int, d time.Duration)
	// Delivered reports one delivery attempt: its outcome (one of the
	// Delivery… constants) and how long the receiver took to answer.
	Delivered func(outcome string, latency time.Duration)
}

// Evaluate runs one evaluation pass (see [Service.evaluate]) and reports
// it to Config.Observe.
func (s *Service) Evaluate(ctx context.Context) (int, error) {
	start := time.Now()
	fired, err := s.evaluate(ctx)
	if s.cfg.Observe.Evaluated != nil {
		s.cfg.Observe.Evaluated(fired, time.Since(start))
	}
	return fired, err
}

// delivered reports a delivery attempt to Config.Observe.
func (o Observer) delivered(outcome string, latency time.Duration) {
	if o.Delivered != nil {
		o.Delivered(outcome, latency)
	}
}
