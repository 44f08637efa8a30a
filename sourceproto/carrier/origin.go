package carrier

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// DefaultAllowedOrigins is the allow-list when ClientOptions.AllowedOrigins
// is nil: pages served from loopback, over http or https, on any port —
// the dev servers and the app under test run there. It returns a fresh
// slice.
func DefaultAllowedOrigins() []string {
	return []string{
		"http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
		"https://127.0.0.1:*", "https://localhost:*", "https://[::1]:*",
	}
}

// originPattern is one parsed allow-list entry, "scheme://host[:port]".
// host is matched with path.Match after lowercasing (so "*.test" works);
// port "*" matches any port including none, an absent port matches only
// the scheme's default port, anything else matches itself.
type originPattern struct {
	scheme, host, port string
}

func parseOriginPattern(p string) (originPattern, error) {
	scheme, rest, ok := strings.Cut(strings.ToLower(p), "://")
	if !ok || scheme == "" || rest == "" || strings.ContainsAny(rest, "/?#@") {
		return originPattern{}, fmt.Errorf("carrier: origin pattern %q: want scheme://host[:port]", p)
	}
	host, port := splitHostPort(rest)
	if _, err := path.Match(host, ""); err != nil || host == "" {
		return originPattern{}, fmt.Errorf("carrier: origin pattern %q: bad host pattern", p)
	}
	if port != "*" && strings.Trim(port, "0123456789") != "" {
		return originPattern{}, fmt.Errorf("carrier: origin pattern %q: port must be digits or *", p)
	}
	return originPattern{scheme: scheme, host: host, port: defaultPort(scheme, port)}, nil
}

// splitHostPort splits "host[:port]" and "[v6]:port", keeping the port
// text as is (it may be "*", which net.SplitHostPort accepts but url does
// not).
func splitHostPort(s string) (host, port string) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", ""
		}
		host, rest := s[1:end], s[end+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			return host, p
		}
		if rest != "" {
			return "", ""
		}
		return host, ""
	}
	host, port, _ = strings.Cut(s, ":")
	return host, port
}

// defaultPort maps a scheme's default port to "", as browsers serialize
// origins without it.
func defaultPort(scheme, port string) string {
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return ""
	}
	return port
}

func (p originPattern) matches(scheme, host, port string) bool {
	if scheme != p.scheme || (p.port != "*" && p.port != port) {
		return false
	}
	ok, _ := path.Match(p.host, host) // the pattern was validated
	return ok
}

// parseOrigin splits an Origin header value, which must be exactly a
// serialized origin: "scheme://host[:port]", nothing else. The opaque
// origin "null" (sandboxed frames, file: pages) does not parse and so is
// never allowed.
func parseOrigin(s string) (scheme, host, port string, ok bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", "", "", false
	}
	scheme = strings.ToLower(u.Scheme)
	return scheme, strings.ToLower(u.Hostname()), defaultPort(scheme, u.Port()), true
}

// originAllowed checks the request's Origin header values against the
// allow-list and says why when it refuses.
func originAllowed(allow []originPattern, values []string) (reason string, ok bool) {
	switch {
	case len(values) == 0:
		// Every browser sends Origin on a WebSocket handshake, and only
		// browser pages connect to /client (the host has its own pipe). A
		// request without one is some other local process, which has no
		// business posing as a page; refusing it also means such a process
		// cannot use a leaked token without forging a header on purpose.
		return "missing Origin: /client is for browser pages", false
	case len(values) > 1:
		return "more than one Origin header", false
	}
	scheme, host, port, ok := parseOrigin(values[0])
	if !ok {
		return "origin is not a serialized scheme://host[:port] origin", false
	}
	for _, p := range allow {
		if p.matches(scheme, host, port) {
			return "", true
		}
	}
	return "origin not allowed", false
}
