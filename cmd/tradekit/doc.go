// Command tradekit serves the Tradekit API and administers its database.
//
//	tradekit serve [--addr HOST:PORT] [--db DSN] [--no-seed] [flags]   (tradekit serve -h lists every flag)
//	tradekit migrate [--db DSN] [--verbose]
//	tradekit keys create --email EMAIL --name NAME [--plan SLUG] [--admin] [--db DSN]
//	tradekit keys list --email EMAIL [--db DSN]
//	tradekit keys delete --id ID [--db DSN]
//	tradekit users create --email EMAIL [--name NAME] [--plan SLUG] [--admin] [--account-of EMAIL] [--db DSN]
//	tradekit users set-password --email EMAIL [--db DSN]
//	tradekit users set-role --email EMAIL --role admin|member [--db DSN]
//	tradekit users list --account-of EMAIL [--db DSN]
//	tradekit seed [--db DSN]
//	tradekit import prices --symbol SYM --file PATH [--name NAME] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
//	tradekit import industries|assets|indexes|constituents|profiles|fundamentals --file PATH [--format csv|json] [--db DSN]
//	tradekit profiles build [--all] [--shard I/N] [--workers N] [--db DSN]
//	tradekit version   (or tradekit --version)
//	tradekit help [COMMAND [SUBCOMMAND]]
//
// Help is printed to stdout with exit status 0 at every level: tradekit -h,
// tradekit keys -h, tradekit import prices -h, tradekit help keys create.
// An error is one line on stderr, "tradekit: COMMAND: MESSAGE", with exit
// status 1; the message names no Go package, and every command's --verbose
// shows the chain of causes behind it. An unknown command is one such
// line, with a hint to run tradekit help.
//
// Run by go run, serve exits when go run does (Linux; see serve -h and its
// --exit-with-parent). For a server in the background, build the binary:
// go build -o bin/tradekit ./cmd/tradekit.
//
// The database is the --db flag, else the TRADEKIT_DB environment variable,
// else tradekit.db in the working directory. A DSN starting with
// postgres:// or postgresql:// selects PostgreSQL; anything else is a
// SQLite file. Every command applies pending migrations first.
package main
