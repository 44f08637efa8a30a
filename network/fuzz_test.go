package network

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/inspector-worker/inspector-worker/fetchcapture"
)

// FuzzBodyParams feeds arbitrary params to the two body methods: each
// answers exactly once, with valid JSON or an *Error, never a panic.
// Run: go test -run '^$' -fuzz FuzzBodyParams ./network
func FuzzBodyParams(f *testing.F) {
	for _, s := range []string{`{"requestId":"iw-net.1"}`, `{"requestId":"iw-net.2"}`, `{}`, `{"requestId":1}`, `null`, `{"requestId":"x","extra":true}`, `[`} {
		f.Add([]byte(s))
	}
	j := newJournal(fetchcapture.Options{})
	feed(j, host, fetchOK("a", "http://x/a", []byte("hello"), true)...)
	w := New(j).NewWindow(&out{})
	f.Fuzz(func(t *testing.T, params []byte) {
		check := func(answer []byte, err error) {
			var e *Error
			switch {
			case err != nil && !errors.As(err, &e):
				t.Fatalf("error of type %T: %v", err, err)
			case err == nil && !json.Valid(answer):
				t.Fatalf("answer is not JSON: %q", answer)
			}
		}
		a, _, err := w.ResponseBody(params)
		check(a, err)
		check(w.RequestPostData(params))
	})
}
