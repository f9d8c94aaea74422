package database

// Redact returns dsn with its password, if any, replaced by "xxxxx", for
// messages: a PostgreSQL DSN may carry one, which is never printed.
func Redact(dsn string) string { return redact(dsn) }
