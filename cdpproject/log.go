package cdpproject

import (
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Log sources of the entries the worker says.
const (
	SourceOther   = cdplog.EntrySourceOther   // the worker's own notices, host observations
	SourceNetwork = cdplog.EntrySourceNetwork // the Network domain's notices
)

// LogEntry is a Log.entryAdded at ms, a CDP timestamp (milliseconds since
// the epoch), kept exact when it comes from a producer.
func LogEntry(source cdplog.EntrySource, level cdplog.EntryLevel, text string, ms float64) []byte {
	return Event("Log.entryAdded", &cdplog.EventEntryAdded{Entry: &cdplog.Entry{
		Source: source, Level: level, Text: text, Timestamp: cdpruntime.Timestamp(ms)}})
}

// Millis is t as a CDP timestamp.
func Millis(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

// AppObservation is a host observation (inspectorWorker.observe(name,
// data)) as the Console line `observe("name") data`, at the producer's
// time, or at now when it sent none. The name is quoted as JSON, like the
// data beside it: Go's %q wrote "\x7f" and "\xff", which are neither JSON
// nor JavaScript. Data is validated JSON (the decoder's) and bounded by the
// producer (a value over its limit arrives as {"truncated":true,"bytes":N}).
func AppObservation(ev *sourceproto.AppEvent, now time.Time) []byte {
	text := make([]byte, 0, len("observe() ")+len(ev.Name)+2+len(ev.Data))
	text = append(text, "observe("...)
	text, _ = jsontext.AppendQuote(text, ev.Name) // invalid bytes become U+FFFD
	text = append(text, ')')
	if len(ev.Data) > 0 {
		text = append(append(text, ' '), ev.Data...)
	}
	ms := ev.Timestamp
	if ms <= 0 {
		ms = Millis(now)
	}
	return LogEntry(SourceOther, cdplog.EntryLevelInfo, string(text), ms)
}
