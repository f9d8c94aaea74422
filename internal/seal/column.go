package seal

// Column names a database column whose non-NULL values may be sealed
// ([IsSealed] tells them from values stored before sealing), and the
// context each is sealed under: Prefix followed by the text of the row's
// ContextColumn, such as "access:" and the id of a broker connection.
// Tools that handle sealed values without opening them (tradekit db copy)
// use it to check that a key opens them.
type Column struct {
	Table, Column         string
	Prefix, ContextColumn string
}
