// Package testkit holds what the module's tests share for time: a
// settable [Clock] to hand to the Config.Now of the code under test, and
// [Eventually], which waits for something a background goroutine does
// instead of sleeping a fixed time and hoping it happened.
//
// Only tests import it.
//
//	clk := testkit.NewClock(time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC))
//	cfg.Now = clk.Now // the Config of the code under test
//	…
//	clk.Add(time.Hour) // a due retry
//	testkit.Eventually(t, 10*time.Second, func() bool {
//		return receiver.count() == 2
//	}, "the webhook's second delivery")
//
// A test that must show that something does not happen still sleeps, but
// says so in a comment and sleeps a bounded time: Eventually cannot prove
// a negative.
package testkit
