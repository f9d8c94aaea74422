// Package fetch is the HTTP side the feed providers share: GET with JSON
// decoding, an optional client-side rate limit, retries of 429 (after
// Retry-After) and 5xx answers with exponential backoff, and errors that
// carry the provider's own message. Credentials refused (401, 403) stop
// the client: it remembers the refusal and returns it again without asking.
package fetch
