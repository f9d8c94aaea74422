package main

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/tradekit/tradekit"
)

// cmdError is the error of a command, worded for the person who ran it.
// where names the command, and what it was doing or the flag at fault
// ("keys create: --plan"); err is the cause, whose chain may name the
// packages it passed through.
type cmdError struct {
	where string
	err   error
}

// fail returns err as an error of where, or nil when err is nil. Its
// message is where and the message of err written for users (see
// [userMessage]); --verbose shows the whole chain (see [chain]). Nested,
// the wheres add up: fail("users create", fail("--account-of", err)).
func fail(where string, err error) error {
	if err == nil {
		return nil
	}
	return &cmdError{where: where, err: err}
}

// Error returns "where: message", the message being the one written for
// users.
func (e *cmdError) Error() string { return e.where + ": " + userMessage(e.err) }

// Unwrap returns the cause.
func (e *cmdError) Unwrap() error { return e.err }

// userMessage returns the message of err meant for users, which names no
// package: that of the outermost [*cmdError] in err's chain (its where
// and its cause's message for users), else [tradekit.Message] of err, the
// "param: msg" of a [*tradekit.ParamError] or the Msg of a
// [*tradekit.Error]. Those two end a chain (they wrap only their kind),
// so whichever is in it lies under every cmdError. An error with none of
// them, such as a file the system cannot open, has no message but its
// own: userMessage returns it cleaned by [plainText].
func userMessage(err error) string {
	var ce *cmdError
	if errors.As(err, &ce) {
		return ce.Error()
	}
	if msg := tradekit.Message(err); msg != "" {
		return msg
	}
	return plainText(err, false)
}

// plain returns the message of err, a command's error, as the CLI prints
// it without --verbose: that of a [*cmdError] (see [userMessage]), else
// err's own; in both cases cleaned by [plainText], which keeps the first
// segment, the command's name.
func plain(err error) string {
	var ce *cmdError
	if errors.As(err, &ce) && ce == err {
		return plainText(errors.New(ce.Error()), true)
	}
	return plainText(err, true)
}

// packageNames are the names of the module's packages, which errors
// start their messages with ("marketdata: …"); plainText drops them.
// TestPackageNames checks the list against the source tree.
var packageNames = map[string]bool{
	"alerts": true, "alpaca": true, "alpacadata": true, "api": true, "backtest": true, "backtestdb": true, "billing": true,
	"brokers": true, "bulk": true, "calendar": true, "client": true, "connect": true, "consent": true,
	"copytrading": true, "dashboard": true, "database": true, "dbcopy": true, "dbtest": true, "demo": true, "feed": true, "feedtest": true, "fetch": true,
	"formula": true, "indicators": true, "jsonnum": true, "knowledge": true, "lru": true, "marketdata": true, "massive": true, "ohlcv": true,
	"paper": true, "portal": true, "profiledb": true, "profiles": true, "seal": true, "server": true, "studies": true, "testkit": true,
	"tradekit": true, "webhook": true,
}

// kindTexts are the messages of the error kinds of [tradekit], which
// errors end with (": invalid argument") and plainText drops there.
var kindTexts = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []error{tradekit.ErrNotFound, tradekit.ErrInvalid, tradekit.ErrConflict, tradekit.ErrRejected,
		tradekit.ErrUnauthorized, tradekit.ErrForbidden, tradekit.ErrRateLimited, tradekit.ErrUnavailable} {
		m[k.Error()] = true
	}
	return m
}()

// plainText returns the message of err without what only a programmer
// reads: the ": "-separated segments that are a package's name
// ("marketdata", "paper", "database"), a last segment that is only an
// error kind ("invalid argument"), the operation of a file error ("stat
// PATH: …" reads "PATH: …") and a segment that repeats the one before.
// keepFirst keeps the first segment whatever it is: the CLI's errors
// start with the command's name, and "paper" or "profiles" is one.
func plainText(err error, keepFirst bool) string {
	msg := err.Error()
	path := ""
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		path = pe.Path
		msg = strings.Replace(msg, pe.Error(), pe.Path+": "+pe.Err.Error(), 1)
	}
	segs := strings.Split(msg, ": ")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		first := i == 0 && keepFirst
		switch {
		case !first && packageNames[s]:
			continue
		case !first && i == len(segs)-1 && len(out) > 0 && kindTexts[s]:
			continue
		case len(out) > 0 && out[len(out)-1] == s:
			continue
		}
		if !first && path != "" && i+1 < len(segs) && segs[i+1] == path && strings.HasSuffix(s, " "+path) {
			continue // "create /tmp/x.db: /tmp/x.db: no such file": the path says it
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return msg
	}
	return strings.Join(out, ": ")
}

// chain returns the message of err with the whole chain of its causes, as
// --verbose prints it: the wheres of the [*cmdError] values it starts with,
// then the cause's own message, package prefixes and all.
func chain(err error) string {
	if ce, ok := err.(*cmdError); ok {
		return ce.where + ": " + chain(ce.err)
	}
	return err.Error()
}

// withCommand returns err as an error of the command cmd when its
// message does not name cmd already: every error a command returns then
// reads "cmd: …", whatever layer made it.
func withCommand(cmd string, err error) error {
	if err == nil || cmd == "" || strings.HasPrefix(err.Error(), cmd+": ") {
		return err
	}
	return fail(cmd, err)
}

// lineBreaks turns line breaks into spaces.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// oneLine returns msg on one line, its line breaks turned into spaces, so
// that an error is always the single line on stderr that scripts expect.
func oneLine(msg string) string { return lineBreaks.Replace(msg) }
