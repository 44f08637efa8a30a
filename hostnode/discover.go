package hostnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxDiscoverBody bounds Node's /json/list answer: one entry of ~600 bytes
// per target (a Node process has one), so 1 MiB only stops a confused peer.
const maxDiscoverBody = 1 << 20

// Discover asks a Node inspector at hostport ("127.0.0.1:9229") for its
// /json/list and returns the first target's webSocketDebuggerUrl. It refuses
// non-loopback hosts. The Host header is hostport itself (an IP literal or
// localhost), which Node's DNS-rebinding check accepts and which it echoes in
// the URL it returns.
func Discover(ctx context.Context, hostport string) (string, error) {
	if err := checkHostPort(hostport); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostport+"/json/list", nil)
	if err != nil {
		return "", fmt.Errorf("hostnode: discover %s: %w", hostport, err)
	}
	req.Host = hostport
	resp, err := discoverClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("hostnode: discover %s: %w (is node running with --inspect on that port?)", hostport, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("hostnode: discover %s: GET /json/list answered %s (is that port a Node inspector?)", hostport, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoverBody+1))
	if err != nil {
		return "", fmt.Errorf("hostnode: discover %s: reading /json/list: %w", hostport, err)
	}
	if len(body) > maxDiscoverBody {
		return "", fmt.Errorf("hostnode: discover %s: /json/list is larger than %d bytes (is that port a Node inspector?)", hostport, maxDiscoverBody)
	}
	return firstTarget(hostport, body)
}

func firstTarget(hostport string, body []byte) (string, error) {
	var targets []struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &targets); err != nil {
		return "", fmt.Errorf("hostnode: discover %s: /json/list is not a JSON array of targets (is that port a Node inspector?): %w", hostport, err)
	}
	for _, t := range targets {
		if t.WebSocketDebuggerURL == "" {
			continue
		}
		if _, err := parseWSURL(t.WebSocketDebuggerURL); err != nil {
			return "", fmt.Errorf("hostnode: discover %s: listed URL refused: %w", hostport, err)
		}
		return t.WebSocketDebuggerURL, nil
	}
	return "", fmt.Errorf("%w at %s", ErrNoTarget, hostport)
}
