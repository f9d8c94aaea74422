package main

import (
	"context"
	"time"
)

// The fault schedule, as fractions of the load's duration, and how the
// windows are drawn around the faults.
const (
	killAt        = 0.30            // SIGKILL instance B
	killDowntime  = 4 * time.Second // B is started again this long after
	pgRestartAt   = 0.65            // restart PostgreSQL
	windowGrace   = 2 * time.Second // added to a window after the service answers again
	recoveryLimit = 60 * time.Second
)

// window is a fault and the time around it in which failed requests are
// expected: from the fault until the service answers /readyz again, plus
// windowGrace.
type window struct {
	name       string
	start, end time.Time
}

// contains reports whether the interval [from, to] meets the window.
func (w window) contains(from, to time.Time) bool {
	return !to.Before(w.start) && !from.After(w.end)
}

// inWindow reports whether [from, to] meets any of the windows.
func inWindow(ws []window, from, to time.Time) bool {
	for _, w := range ws {
		if w.contains(from, to) {
			return true
		}
	}
	return false
}

// runFaults injects the faults cfg asks for into the load that started
// at start, and returns their windows: it SIGKILLs instance B at killAt
// of the load and starts it again killDowntime later, then restarts
// PostgreSQL at pgRestartAt.
func runFaults(ctx context.Context, c *cluster, cfg config, start time.Time, say func(string, ...any)) []window {
	var ws []window
	d := time.Duration(cfg.seconds) * time.Second
	sleepUntil := func(t time.Time) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(t)):
			return true
		}
	}

	if cfg.kill {
		if !sleepUntil(start.Add(time.Duration(float64(d) * killAt))) {
			return ws
		}
		w, ok := killB(ctx, c, say)
		ws = append(ws, w)
		if !ok {
			return ws
		}
	}
	if cfg.restart {
		if !sleepUntil(start.Add(time.Duration(float64(d) * pgRestartAt))) {
			return ws
		}
		ws = append(ws, restartPostgres(ctx, c, say))
	}
	return ws
}

// killB kills instance B with SIGKILL, starts it again killDowntime
// later, and returns the fault's window; ok is false when B did not come
// back.
func killB(ctx context.Context, c *cluster, say func(string, ...any)) (w window, ok bool) {
	b := c.inst[1]
	pid := b.cmd.Process.Pid
	killed := time.Now()
	c.kill(b)
	say("fault: SIGKILL instance B (pid %d)", pid)
	select {
	case <-ctx.Done():
		return window{"SIGKILL of B", killed, time.Now().Add(time.Hour)}, false
	case <-time.After(killDowntime):
	}
	if err := c.start(ctx, b); err != nil {
		say("instance B did not come back: %v", err)
		return window{"SIGKILL of B", killed, time.Now().Add(time.Hour)}, false
	}
	back := time.Now()
	say("instance B serving again (pid %d), %.1f s after the kill", b.cmd.Process.Pid, back.Sub(killed).Seconds())
	return window{"SIGKILL of B", killed, back.Add(windowGrace)}, true
}

// restartPostgres restarts PostgreSQL with a fast shutdown (open
// connections are cut, committed data survives) and a start, waits for
// both instances to answer /readyz again, and returns the fault's window.
func restartPostgres(ctx context.Context, c *cluster, say func(string, ...any)) window {
	stopped := time.Now()
	say("fault: restarting PostgreSQL (fast shutdown, then start)")
	if err := c.pg.Stop(); err != nil {
		say("stopping PostgreSQL failed: %v", err)
	}
	if err := c.pg.Start(); err != nil {
		say("starting PostgreSQL failed: %v", err)
	}
	up := time.Now()
	for _, in := range c.inst {
		if _, err := waitReady(ctx, in, recoveryLimit); err != nil {
			say("instance %s did not recover: %v", in.name, err)
		}
	}
	back := time.Now()
	say("PostgreSQL up again after %.1f s; both instances ready %.1f s after the restart began",
		up.Sub(stopped).Seconds(), back.Sub(stopped).Seconds())
	return window{"PostgreSQL restart", stopped, back.Add(windowGrace)}
}
