package main

import (
	"errors"
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
// them, such as a file the system cannot open, has no other message than
// its own: userMessage returns err.Error().
func userMessage(err error) string {
	var ce *cmdError
	if errors.As(err, &ce) {
		return ce.Error()
	}
	if msg := tradekit.Message(err); msg != "" {
		return msg
	}
	return err.Error()
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
