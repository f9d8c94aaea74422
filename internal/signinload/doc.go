// Command signinload measures what a flood of dashboard sign-ins for
// unknown emails costs a `tradekit serve` process: its resident memory
// and the latency of /healthz meanwhile. Each sign-in checks a password
// with Argon2id (64 MiB), which billing bounds to GOMAXPROCS at once.
//
// Usage (scripts/signinload builds the binary and passes -bin):
//
//	signinload -bin PATH [-concurrency 128] [-seconds 10] [-spread=true]
//
// The run, all on loopback:
//
//  1. `tradekit serve --no-seed` on a fresh SQLite file in a temporary
//     directory, and a wait until /healthz answers.
//  2. Load: -concurrency workers start together and post the sign-in form
//     of /dashboard/sign-in (with a form token of their own in the cookie
//     and the form, as the double-submit check asks) for an email no user
//     has, each as soon as its previous answer came, for -seconds (0: one
//     post each). With -spread, each worker sends from its own loopback
//     address (127.1.x.y), so that the per-address sign-in throttle does
//     not stop it and the run measures the hashing bound alone.
//  3. Meanwhile, the server's VmRSS is read from /proc every 10 ms and
//     /healthz is asked every 50 ms from 127.0.0.1.
//  4. It prints the answers by status (and how many 503s carried
//     Retry-After), the longest sign-in answer, the peak resident memory
//     (VmHWM, the kernel's own high-water mark, and the highest VmRSS
//     read), and the /healthz latencies.
//
// The exit status is 0 when the peak resident memory stayed under
// -max-rss-mb (512) and every /healthz answered within -max-healthz (100
// ms), 1 when one did not, and 2 when the run could not be carried out.
// The figures depend on the machine and what else runs on it; the run
// prints its CPU count.
package main
