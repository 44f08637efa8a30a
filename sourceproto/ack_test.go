package sourceproto

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// openCoalescing opens id with a hello asking for acks held back up to
// delayMs, through a carrier that coalesces (or not), and sends its
// initial replace.
func openCoalescing(t *testing.T, reg *Registry, id string, delayMs int64, coalesce bool) *Source {
	t.Helper()
	hello := strings.Replace(helloFrame(id, `"console"`, `"console"`), `"role":"client",`,
		fmt.Sprintf(`"role":"client","ackDelayMs":%d,`, delayMs), 1)
	src, res := reg.Open([]byte(hello), OpenOptions{Role: RoleClient, Token: testToken, CoalesceAcks: coalesce})
	if src == nil {
		t.Fatalf("open %s: %v (%s)", id, res.Err, replies(res))
	}
	r := src.Ingest([]byte(replaceFrame(id, src.Ref().Gen, 0, "initial")))
	expectReplies(t, r, ackText(src, 0, ""))
	return src
}

func ackText(src *Source, seq uint64, body string) string {
	ref := src.Ref()
	return fmt.Sprintf(`{"v":1,"type":"ack","source":%q,"gen":%d,"seq":%d,"body":{%s}}`, ref.ID, ref.Gen, seq, body)
}

func appendTo(src *Source, seq uint64) []byte {
	ref := src.Ref()
	return []byte(appendFrame(ref.ID, ref.Gen, seq, 0, consoleItem))
}

// TestCoalescedAcks: with ackDelayMs, appends are answered by one
// cumulative ack every AckCoalesceFrames appends, or by FlushAck when the
// carrier's AckAfter timer ends; nothing is acked twice.
func TestCoalescedAcks(t *testing.T) {
	reg := NewRegistry(&recorder{})
	src := openCoalescing(t, reg, "page-1", 500, true)
	var seq uint64
	for range AckCoalesceFrames - 1 {
		seq++
		r := src.Ingest(appendTo(src, seq))
		expectReplies(t, r)
		if r.Err != nil || r.AckAfter != 500*time.Millisecond {
			t.Fatalf("append %d: err %v, AckAfter %v; want a held-back ack within 500ms", seq, r.Err, r.AckAfter)
		}
	}
	seq++
	r := src.Ingest(appendTo(src, seq))
	expectReplies(t, r, ackText(src, seq, "")) // the 8th: one ack for all
	if r.AckAfter != 0 {
		t.Fatalf("AckAfter %v after an ack went out", r.AckAfter)
	}
	if f := src.FlushAck(); f != nil {
		t.Fatalf("FlushAck with nothing held back: %s", f)
	}
	for range 3 {
		seq++
		expectReplies(t, src.Ingest(appendTo(src, seq)))
	}
	if got, want := string(src.FlushAck()), ackText(src, seq, ""); got != want {
		t.Fatalf("FlushAck:\n got %s\nwant %s", got, want)
	}
	if f := src.FlushAck(); f != nil {
		t.Fatalf("second FlushAck: %s", f)
	}
	if st := src.Stats(); st.Items != uint64(seq) {
		t.Fatalf("items %d, want %d", st.Items, seq)
	}
}

// TestCoalescedAckOrder: a gap is acked at once (with its count), the
// acks held back go before a reject, a replace's ack covers them, and a
// closed source flushes none.
func TestCoalescedAckOrder(t *testing.T) {
	reg := NewRegistry(&recorder{})
	src := openCoalescing(t, reg, "page-1", 100, true)
	ref := src.Ref()
	expectReplies(t, src.Ingest(appendTo(src, 1)))
	// seq 2..3 lost: an append at 4 reports the gap in an ack at once,
	// covering the held-back one.
	r := src.Ingest([]byte(appendFrame(ref.ID, ref.Gen, 4, 2, consoleItem)))
	expectReplies(t, r, ackText(src, 4, `"dropped":2`))
	if f := src.FlushAck(); f != nil {
		t.Fatalf("FlushAck after the gap's ack: %s", f)
	}

	expectReplies(t, src.Ingest(appendTo(src, 5)))
	r = src.Ingest(appendTo(src, 5)) // a regression: rejected
	if r.Err == nil || len(r.Replies) != 2 || string(r.Replies[0]) != ackText(src, 5, "") ||
		!strings.Contains(string(r.Replies[1]), `"type":"reject"`) {
		t.Fatalf("reject with an ack held back: err %v, replies\n%s", r.Err, replies(r))
	}

	expectReplies(t, src.Ingest(appendTo(src, 6)))
	r = src.Ingest([]byte(replaceFrame(ref.ID, ref.Gen, 6, "requested")))
	expectReplies(t, r, ackText(src, 6, ""))
	if f := src.FlushAck(); f != nil {
		t.Fatalf("FlushAck after the replace's ack: %s", f)
	}

	expectReplies(t, src.Ingest(appendTo(src, 7)))
	src.Close(CloseNormal)
	if f := src.FlushAck(); f != nil {
		t.Fatalf("FlushAck on a closed source: %s", f)
	}
}

// TestAckDelayIgnoredWithoutCarrier: a carrier that runs no AckAfter timer
// (the host pipe) acks every append at once, whatever the hello asked.
func TestAckDelayIgnoredWithoutCarrier(t *testing.T) {
	reg := NewRegistry(&recorder{})
	src := openCoalescing(t, reg, "page-1", 500, false)
	for seq := uint64(1); seq <= 3; seq++ {
		r := src.Ingest(appendTo(src, seq))
		expectReplies(t, r, ackText(src, seq, ""))
		if r.AckAfter != 0 {
			t.Fatalf("AckAfter %v without CoalesceAcks", r.AckAfter)
		}
	}
}

// TestAckDelayBounds: ackDelayMs outside 0…MaxAckDelayMs refuses the hello.
func TestAckDelayBounds(t *testing.T) {
	reg := NewRegistry(&recorder{})
	for _, d := range []string{"-1", fmt.Sprint(MaxAckDelayMs + 1), "1e3", `"5"`} {
		hello := strings.Replace(helloFrame("page-1", `"console"`, `"console"`), `"role":"client",`,
			`"role":"client","ackDelayMs":`+d+`,`, 1)
		src, res := reg.Open([]byte(hello), OpenOptions{Role: RoleClient, Token: testToken, CoalesceAcks: true})
		if src != nil || res.Err == nil || !res.Close {
			t.Errorf("ackDelayMs %s: opened (err %v); want a refused hello", d, res.Err)
		}
	}
	openCoalescing(t, reg, "page-2", MaxAckDelayMs, true)
}
