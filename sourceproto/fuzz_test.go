package sourceproto

import (
	"errors"
	"testing"
)

// One fuzz target per frame family, seeded from the decode table (and, for
// the source family, the isolation table's frames). Each input goes
// through Decode and through a live Registry:
//   - Decode either accepts (then the frame round-trips to a stable
//     canonical encoding) or returns a *RejectError with a known code;
//   - Ingest never accepts what Decode refuses, every reply it produces is
//     itself a valid frame, and a second source on the same registry
//     still flows afterwards.
// Run one for real with: go test -run '^$' -fuzz FuzzRuntimeFrames -parallel 1

func FuzzSourceFrames(f *testing.F)  { fuzzFamily(f, famSource) }
func FuzzRuntimeFrames(f *testing.F) { fuzzFamily(f, famRuntime) }
func FuzzConsoleFrames(f *testing.F) { fuzzFamily(f, famConsole) }
func FuzzScriptFrames(f *testing.F)  { fuzzFamily(f, famScript) }
func FuzzQueryFrames(f *testing.F)   { fuzzFamily(f, famQuery) }
func FuzzFetchFrames(f *testing.F)   { fuzzFamily(f, famFetch) }
func FuzzDOMFrames(f *testing.F)     { fuzzFamily(f, famDOM) }

func fuzzFamily(f *testing.F, fam family) {
	for _, tc := range decodeCases {
		// The 1 MiB seeds would dominate the corpus; their limit is covered
		// by the table tests.
		if tc.fam == fam && len(tc.frame) < 64<<10 {
			f.Add([]byte(tc.frame))
		}
	}
	if fam == famSource {
		f.Add([]byte(replaceFrame("c1", 3, 5, "requested")))
		f.Add([]byte(appendFrame("c1", 3, 4, 1, consoleItem, consoleItem)))
		f.Add([]byte(`{"v":1,"type":"close","source":"c1","gen":1,"body":{"code":"normal"}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, decErr := Decode(data)
		if decErr != nil {
			var rerr *RejectError
			if !errors.As(decErr, &rerr) || codeSentinels[rerr.Code] == nil {
				t.Fatalf("Decode returned a non-reject error: %v", decErr)
			}
		} else {
			checkRoundTrip(t, data, fr)
		}
		checkIngest(t, data, decErr)
	})
}

// checkIngest feeds data to source "c1" (generation 3, streaming, every
// capability and topic declared) next to a healthy source "x".
func checkIngest(t *testing.T, data []byte, decErr error) {
	reg := NewRegistry(nil)
	all := `"runtime","console","scripts","query","dom"`
	allTopics := `"console","page","script","fetch","app"`
	x := openStreaming(t, reg, "x", all, allTopics)
	openStreaming(t, reg, "y", all, allTopics)
	c1 := openStreaming(t, reg, "c1", all, allTopics)
	res := c1.Ingest(data)
	if decErr != nil && res.Err == nil {
		t.Fatalf("Ingest accepted what Decode refused (%v)", decErr)
	}
	for _, r := range res.Replies {
		if _, err := Decode(r); err != nil {
			t.Fatalf("reply does not decode: %v\n%s", err, r)
		}
	}
	expectFlowing(t, x, 1)
}
