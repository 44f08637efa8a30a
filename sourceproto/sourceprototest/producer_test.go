package sourceprototest

import (
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// TestProducerAgainstRegistry plays a whole generation: hello, initial
// replace, appends, an explained drop, an unexplained loss and its
// snapshot, close.
func TestProducerAgainstRegistry(t *testing.T) {
	tok, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	reg := sourceproto.NewRegistry(nil)
	p := New("page-1", tok.Reveal())
	src, res := reg.Open(p.Hello(t, sourceproto.CapConsole, sourceproto.TopicConsole),
		sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: tok})
	if src == nil {
		t.Fatalf("open: %v", res.Err)
	}
	p.Welcomed(t, res.Replies[0])

	ExpectAck(t, src.Ingest(p.Replace(t, sourceproto.ReplaceInitial)).Replies[0], 0)
	ExpectAck(t, src.Ingest(p.Append(t, Log("a"), Log("b", "c"))).Replies[0], 2)
	p.Drop(3)
	if d := ExpectAck(t, src.Ingest(p.Append(t, Log("d"))).Replies[0], 6); d != 3 {
		t.Fatalf("dropped %d", d)
	}
	p.Lose(2)
	res = src.Ingest(p.Append(t, Log("e")))
	ExpectAck(t, res.Replies[0], 9)
	req := Expect(t, res.Replies[1], sourceproto.FrameSnapshotRequest).Body.(*sourceproto.SnapshotRequest)
	if req.Missing != 2 || req.Expected != 7 {
		t.Fatalf("snapshot request %+v", req)
	}
	ExpectAck(t, src.Ingest(p.Replace(t, sourceproto.ReplaceRequested)).Replies[0], 9)
	ExpectReject(t, src.Ingest(p.Frame(t, &sourceproto.QueryResult{ID: 1, Name: "q"})).Replies[0],
		sourceproto.RejectUndeclaredCapability)
	if r := src.Ingest(p.Frame(t, &sourceproto.Close{Code: sourceproto.CloseNormal})); !r.Close {
		t.Fatal("close not honoured")
	}
	if got := src.Stats(); got.Items != 4 || got.Missing != 5 || got.SnapshotRequests != 1 || got.Rejects != 1 {
		t.Fatalf("stats %+v", got)
	}
}
