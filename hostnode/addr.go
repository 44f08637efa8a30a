package hostnode

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ParseInspectorAddr accepts either a Node inspector WebSocket URL
// ("ws://127.0.0.1:9229/0f2c…", returned unchanged as wsURL, with its
// host:port as hostport) or a bare loopback address ("127.0.0.1:9229",
// "localhost:9229", "[::1]:9229", returned as hostport with
// needsDiscover=true, to be resolved with Discover). Hosts must be loopback:
// Node's inspector hands full code execution to whoever connects.
func ParseInspectorAddr(s string) (wsURL string, hostport string, needsDiscover bool, err error) {
	if strings.Contains(s, "://") {
		hostport, err = parseWSURL(s)
		if err != nil {
			return "", "", false, err
		}
		return s, hostport, false, nil
	}
	if err := checkHostPort(s); err != nil {
		return "", "", false, err
	}
	return "", s, true, nil
}

func parseWSURL(s string) (hostport string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrBadAddr, s, err)
	}
	if u.Scheme != "ws" {
		return "", fmt.Errorf("%w %q: scheme %q, want ws:// (Node's inspector speaks plain WebSocket on loopback)", ErrBadAddr, s, u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w %q: want ws://HOST:PORT/ID without user, query or fragment", ErrBadAddr, s)
	}
	if err := checkHostPort(u.Host); err != nil {
		return "", err
	}
	if strings.Trim(u.Path, "/") == "" {
		return "", fmt.Errorf("%w %q: no target id in the path (want ws://HOST:PORT/ID as printed by node; pass HOST:PORT alone to discover it)", ErrBadAddr, s)
	}
	return u.Host, nil
}

// checkHostPort accepts HOST:PORT with a loopback HOST and a port in 1..65535.
func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return fmt.Errorf("%w %q: want ws://127.0.0.1:PORT/ID or 127.0.0.1:PORT: %v", ErrBadAddr, hp, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return fmt.Errorf("%w %q: port %q is not a number in 1..65535", ErrBadAddr, hp, port)
	}
	return checkLoopbackHost(host)
}

func checkLoopbackHost(host string) error {
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return fmt.Errorf("%w: host %q is not an IP literal or localhost; use 127.0.0.1 (names are refused so DNS cannot redirect a debugger session)", ErrNotLoopback, host)
	case ip.Zone() != "":
		return fmt.Errorf("%w: host %q has a zone; use 127.0.0.1 or [::1]", ErrNotLoopback, host)
	case ip.IsUnspecified():
		return fmt.Errorf("%w: host %q means every interface; use 127.0.0.1", ErrNotLoopback, host)
	case !ip.Unmap().IsLoopback():
		return fmt.Errorf("%w: host %q is reachable from other machines; Node's inspector allows arbitrary code execution, so only 127.0.0.1, ::1 or localhost are accepted", ErrNotLoopback, host)
	}
	return nil
}
