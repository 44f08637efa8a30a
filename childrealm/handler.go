package childrealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// maxRegistrationBytes bounds a registration body: a pid, a URL and the
// child's argv, which is a command line (Linux caps one argument at
// 128 KiB, a whole command line far higher, but a title needs no more).
const maxRegistrationBytes = 64 << 10

// Handler serves POST /child for reg. A child proves it belongs to this run
// with "Authorization: Bearer <token>", the run's child token. Answers:
// 204 followed; 401 bad token; 400 bad body; 429 past the limit; 502 when
// the child's inspector cannot be attached. Every refusal's body says why
// in one line (the preload prints it on the child's stderr).
func Handler(reg *Registry, token sourceproto.Token) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || !token.Matches(sourceproto.Secret(got)) {
			http.Error(w, "bad child token", http.StatusUnauthorized)
			return
		}
		var r Registration
		body, err := io.ReadAll(io.LimitReader(req.Body, maxRegistrationBytes+1))
		if err == nil && len(body) > maxRegistrationBytes {
			err = fmt.Errorf("over %d bytes", maxRegistrationBytes)
		}
		if err == nil {
			err = json.Unmarshal(body, &r)
		}
		if err != nil {
			http.Error(w, "bad child registration: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := reg.Register(req.Context(), r); err != nil {
			code := http.StatusBadGateway
			var le *LimitError
			if errors.As(err, &le) {
				code = http.StatusTooManyRequests
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
