package knowledge

import "github.com/google/uuid"

// namespace is the UUID under which every content id is derived. It is the
// version 5 UUID of the name "https://github.com/tradekit/tradekit/knowledge"
// in the RFC 9562 URL namespace; it must never change, or every id would.
var namespace = uuid.MustParse("adafcebb-cd19-51f3-bb2c-4280f7c9c67a")

// newID returns the name-based (version 5, SHA-1) UUID of kind + ":" + slug
// in [namespace]:
//
//	uuid = SHA-1(namespace || kind ":" slug)[0:16], version 5, variant RFC 9562
//
// The same kind and slug always give the same id, across runs and machines.
func newID(kind, slug string) string {
	return uuid.NewSHA1(namespace, []byte(kind+":"+slug)).String()
}
