package sourceproto_test

import (
	"fmt"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// consoleCounter is a domain consumer: it embeds NopConsumer and keeps
// only what it needs.
type consoleCounter struct {
	sourceproto.NopConsumer
	events int
}

func (c *consoleCounter) Appended(ref sourceproto.SourceRef, seq uint64, a *sourceproto.Append) {
	for _, it := range a.Items {
		if it.Console != nil {
			c.events++
		}
	}
}

// A carrier's read loop: Open with the first frame, Ingest every later
// one, send back the replies, hang up when told to.
func Example_carrier() {
	counter := &consoleCounter{}
	reg := sourceproto.NewRegistry(counter)
	token, _ := sourceproto.NewToken()

	hello := `{"v":1,"type":"hello","source":"page-1","body":{"role":"client","token":"` + token.Reveal() +
		`","capabilities":["console"],"topics":["console"],"agent":{"name":"example","version":"1"}}}`
	src, res := reg.Open([]byte(hello), sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: token})
	fmt.Printf("%s\n", res.Replies[0])

	for _, frame := range []string{
		`{"v":1,"type":"replace","source":"page-1","gen":1,"seq":0,"body":{"reason":"initial","items":[]}}`,
		`{"v":1,"type":"append","source":"page-1","gen":1,"seq":1,"body":{"items":[{"console":{"type":"log","args":[{"type":"string","value":"hi"}],"timestamp":1}}]}}`,
		`{"v":1,"type":"append","source":"page-1","gen":1,"seq":4,"body":{"dropped":2,"items":[{"page":{"url":"/","title":""}}]}}`,
		`{"v":1,"type":"close","source":"page-1","gen":1,"body":{"code":"going-away"}}`,
	} {
		res := src.Ingest([]byte(frame))
		for _, r := range res.Replies {
			fmt.Printf("%s\n", r)
		}
		if res.Close {
			break
		}
	}
	fmt.Println("console events:", counter.events)
	// Output:
	// {"v":1,"type":"welcome","source":"page-1","gen":1,"body":{"capabilities":["console"],"topics":["console"],"limits":{"maxFrameBytes":1048576,"maxBatchItems":512,"maxStringBytes":65536,"maxChunkBytes":49152,"maxValueBytes":262144}}}
	// {"v":1,"type":"ack","source":"page-1","gen":1,"seq":0,"body":{}}
	// {"v":1,"type":"ack","source":"page-1","gen":1,"seq":1,"body":{}}
	// {"v":1,"type":"reject","source":"page-1","gen":1,"body":{"code":"undeclared-topic","reason":"item topic not declared in hello","refType":"append","refSeq":4}}
	// console events: 1
}
