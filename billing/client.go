package billing

import (
	"net"
	"net/netip"
	"strings"
)

// ClientAddress names the client at remoteAddr (an http.Request's
// RemoteAddr, "host:port") for counting its failures, as
// [Authenticator.Authenticate] and [SignInThrottle] do: the IP address,
// or its /64 network for IPv6, where one host commonly holds a whole /64.
// An IPv4 address mapped into IPv6 is the IPv4 address. Behind a reverse
// proxy every client has the proxy's address.
func ClientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if !strings.Contains(host, ":") {
		return host // IPv4 as Go's server writes it; no parsing, no allocation
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip.Is6() && !ip.Is4In6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.Unmap().String()
}
