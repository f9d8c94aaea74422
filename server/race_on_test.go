//go:build race

package server_test

// raceDetector reports whether the tests run under the race detector,
// which makes each request several times dearer: the load tests then
// send fewer requests (see underLoad).
const raceDetector = true
