package cdpproject

import (
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The console projection alone, hand encoder against the typed path it is
// held to (TestConsoleHandMatchesTyped): the event of
// BenchmarkClientConsoleToDevTools (two short strings), with a stack frame.
//
//	go test -run '^$' -bench Console -benchmem ./cdpproject
func benchConsole(b *testing.B, typed bool) {
	ev := &sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Timestamp: 1_700_000_000_123.5, Args: []sourceproto.RemoteObject{
		{Type: sourceproto.TypeString, Value: sourceproto.RawJSON(`"benchmark message with a few words"`)},
		{Type: sourceproto.TypeString, Value: sourceproto.RawJSON(`"and a second argument"`)}},
		StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{{FunctionName: "tick", URL: "http://127.0.0.1:3000/app.js", LineNumber: 12, ColumnNumber: 8}}}}
	v := Values{ScriptID: func(string) string { return "7" }, ContextID: -1}
	size := 0
	b.ReportAllocs()
	for b.Loop() {
		var msg []byte
		if typed {
			msg = Event("Runtime.consoleAPICalled", v.consoleParams(ev, nil))
		} else {
			msg = v.AppendConsoleAPICalled(make([]byte, 0, size+64), ev, nil)
		}
		size = len(msg)
	}
}

func BenchmarkConsoleHand(b *testing.B)  { benchConsole(b, false) }
func BenchmarkConsoleTyped(b *testing.B) { benchConsole(b, true) }
