package rest

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// A request may reach loopback, link-local, private and unspecified
// addresses only when the endpoint's configured host is such an address
// itself: a model that fills in a host, or an API that redirects, must not
// turn a tool into a way into the bot's own network. The address checked
// is the one a connection is being made to, after resolution, so a name
// that resolves to a public address first and an internal one later (DNS
// rebinding) gains nothing.

// errForbiddenAddress is why a request to an internal address was stopped.
var errForbiddenAddress = errors.New("the address is a loopback, link-local, private or unspecified one")

// sharedAddressSpace is carrier-grade NAT (100.64.0.0/10), internal to
// whoever runs it; thisNetwork (0.0.0.0/8) reaches this host on some
// systems.
var (
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork        = netip.MustParsePrefix("0.0.0.0/8")
)

// internal reports whether ip is an address a tool may reach only when its
// configured host is one.
func internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsPrivate() || ip.IsUnspecified() ||
		sharedAddressSpace.Contains(ip) || thisNetwork.Contains(ip)
}

// refuseInternal is a net.Dialer ControlContext hook: it stops a
// connection to an internal address before it is made.
func refuseInternal(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || internal(ap.Addr()) {
		return errForbiddenAddress
	}
	return nil
}

// localName reports whether host names this machine without asking DNS.
func localName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// hostIsInternal reports whether u's host is, or resolves to, an internal
// address. A name that does not resolve is not internal.
func hostIsInternal(ctx context.Context, u *url.URL) bool {
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		return internal(ip)
	}
	if ip, ok := inetAton(host); ok {
		return internal(ip)
	}
	if localName(host) {
		return true
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if internal(ip) {
			return true
		}
	}
	return false
}

// inetAton reads the IPv4 forms that C's inet_aton accepts and Go does
// not ("127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433"): a proxy or a
// server built on it would connect to the address they stand for.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil || p == "" {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 0xff {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*i)
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// reachKey marks a request's context with what its endpoint may reach.
type reachKey struct{}

// withInternalAllowed records in ctx whether the request may reach
// internal addresses.
func withInternalAllowed(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, reachKey{}, ok)
}

// internalAllowed reads what withInternalAllowed recorded; false when
// nothing was.
func internalAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(reachKey{}).(bool)
	return ok
}

// checkDestination refuses u when it leads to an internal address and ctx
// does not allow one. It is the check by name, for redirects and hosts the
// model chose; with the default client the dial hook checks the address
// actually connected to as well.
func checkDestination(ctx context.Context, u *url.URL) error {
	if internalAllowed(ctx) || !hostIsInternal(ctx, u) {
		return nil
	}
	return errForbiddenAddress
}

// Answers of endpoint.mayReachInternal once known.
const (
	reachUnknown int32 = iota
	reachPublicOnly
	reachInternal
)

// hostFromModel reports whether the model fills in any of the endpoint's
// host: then the host is not the operator's, and nothing internal is.
func (e *endpoint) hostFromModel() bool {
	_, rest, ok := strings.Cut(e.url, "://")
	if !ok {
		return true
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "{")
}

// mayReachInternal reports whether the endpoint's requests may reach
// internal addresses: only when its configured host is one. The answer is
// kept once the host was resolved.
func (e *endpoint) mayReachInternal(ctx context.Context) bool {
	switch e.reach.Load() {
	case reachPublicOnly:
		return false
	case reachInternal:
		return true
	}
	if e.hostFromModel() {
		e.reach.Store(reachPublicOnly)
		return false
	}
	u, err := url.Parse(placeholder.ReplaceAllString(e.url, "x"))
	if err != nil {
		return false
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		return e.keep(internal(ip))
	}
	if localName(host) {
		return e.keep(true)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false // asked again next time; the dial will fail anyway
	}
	for _, ip := range ips {
		if internal(ip) {
			return e.keep(true)
		}
	}
	return e.keep(false)
}

func (e *endpoint) keep(ok bool) bool {
	if ok {
		e.reach.Store(reachInternal)
	} else {
		e.reach.Store(reachPublicOnly)
	}
	return ok
}
