// Command tradekit serves the Tradekit API and administers its database.
//
//	tradekit serve [--addr HOST:PORT] [--db DSN] [--no-seed] [--allow-private-webhooks] [--log-format text|json]
//	tradekit migrate [--db DSN]
//	tradekit keys create --email EMAIL --name NAME [--plan SLUG] [--admin] [--db DSN]
//	tradekit keys list --email EMAIL [--db DSN]
//	tradekit keys delete --id ID [--db DSN]
//	tradekit seed [--db DSN]
//	tradekit import prices --symbol SYM --file PATH [--name NAME] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
//	tradekit import industries|assets|indexes|constituents|profiles|fundamentals --file PATH [--format csv|json] [--db DSN]
//	tradekit profiles build [--all] [--shard I/N] [--workers N] [--db DSN]
//	tradekit help [COMMAND [SUBCOMMAND]]
//
// Help is printed to stdout with exit status 0 at every level: tradekit -h,
// tradekit keys -h, tradekit import prices -h, tradekit help keys create.
//
// The database is the --db flag, else the TRADEKIT_DB environment variable,
// else tradekit.db in the working directory. A DSN starting with
// postgres:// or postgresql:// selects PostgreSQL; anything else is a
// SQLite file. Every command applies pending migrations first.
package main
