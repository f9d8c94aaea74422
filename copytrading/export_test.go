package copytrading

// Internals the external tests check against.
var (
	// CopyOrderID is copyOrderID: the client order id of a fill's copy.
	CopyOrderID = copyOrderID
)

// LeaseFor is how long a claim on a copy lasts unless renewed.
const LeaseFor = leaseFor
