package trace

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// CDP is decoded in two stages: a small envelope first, then params only for
// the five methods the engine captures. Node's inspector emits lone UTF-16
// surrogates in strings (V8 does); they are accepted and replaced.
var cdpDecode = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

type cdpEnvelope struct {
	ID     int64          `json:"id"`
	Method string         `json:"method"`
	Params jsontext.Value `json:"params"`
	Error  jsontext.Value `json:"error"`
}

// cdpResponse is what readLoop hands to controlLoop for every answer.
type cdpResponse struct {
	id  int64
	err string // the CDP error object as text, "" on success
}

type scriptParsed struct {
	ScriptID     string `json:"scriptId"`
	URL          string `json:"url"`
	SourceMapURL string `json:"sourceMapURL"`
}

type consoleAPICalled struct {
	Type       string            `json:"type"`
	Args       []cdpRemoteObject `json:"args"`
	StackTrace *cdpStackTrace    `json:"stackTrace"`
}

type exceptionThrown struct {
	ExceptionDetails struct {
		Text         string           `json:"text"`
		LineNumber   int              `json:"lineNumber"`
		ColumnNumber int              `json:"columnNumber"`
		ScriptID     string           `json:"scriptId"`
		URL          string           `json:"url"`
		StackTrace   *cdpStackTrace   `json:"stackTrace"`
		Exception    *cdpRemoteObject `json:"exception"`
	} `json:"exceptionDetails"`
}

type contextCreated struct {
	Context struct {
		ID      int    `json:"id"`
		Name    string `json:"name"`
		AuxData struct {
			IsDefault bool `json:"isDefault"`
		} `json:"auxData"`
	} `json:"context"`
}

type contextDestroyed struct {
	ExecutionContextID int `json:"executionContextId"`
}

// notice is what one CDP message means to the session.
type notice int

const (
	noticeNone     notice = iota
	noticePaused          // Debugger.paused: the control loop resumes
	noticeConsole         // a console event was stored (counts toward discardConsoleEntries)
	noticeMainGone        // the main (default) context was destroyed: the script has ended
	noticeThread          // a NodeWorker event: hostnode.Threads releases the thread
)

// decodeMessage turns one inspector message into an event, a response or a
// notice. Malformed messages and methods the engine does not capture yield
// nothing: the inspector is trusted to be Node, but a decoding problem must
// never stop the capture.
func decodeMessage(m *mapper, msg []byte) (ev *Event, resp *cdpResponse, n notice) {
	var env cdpEnvelope
	if err := json.Unmarshal(msg, &env, cdpDecode); err != nil {
		return nil, nil, noticeNone
	}
	if env.ID != 0 {
		r := &cdpResponse{id: env.ID}
		if len(env.Error) > 0 {
			r.err, _ = capText(string(env.Error), maxValueChars)
		}
		return nil, r, noticeNone
	}
	if hostnode.IsThreadEvent(env.Method) {
		return nil, nil, noticeThread
	}
	switch env.Method {
	case "Debugger.paused":
		return nil, nil, noticePaused
	case "Debugger.scriptParsed":
		return decodeScript(m, env.Params), nil, noticeNone
	case "Runtime.consoleAPICalled":
		ev := decodeConsole(m, env.Params)
		if ev == nil || ev.child != nil {
			return ev, nil, noticeNone
		}
		return ev, nil, noticeConsole
	case "Runtime.exceptionThrown":
		return decodeException(m, env.Params), nil, noticeNone
	case "Runtime.executionContextCreated":
		var p contextCreated
		if json.Unmarshal(env.Params, &p, cdpDecode) != nil {
			return nil, nil, noticeNone
		}
		if p.Context.AuxData.IsDefault && m.mainContext == 0 {
			m.mainContext = p.Context.ID
		}
		name, _ := capText(p.Context.Name, maxValueChars)
		return &Event{Kind: KindContext, Subtype: "created", Detail: "context " + strconv.Itoa(p.Context.ID) + " created: " + name}, nil, noticeNone
	case "Runtime.executionContextDestroyed":
		var p contextDestroyed
		if json.Unmarshal(env.Params, &p, cdpDecode) != nil {
			return nil, nil, noticeNone
		}
		n := noticeNone
		if p.ExecutionContextID != 0 && p.ExecutionContextID == m.mainContext {
			n = noticeMainGone
		}
		return &Event{Kind: KindContext, Subtype: "destroyed", Detail: "context " + strconv.Itoa(p.ExecutionContextID) + " destroyed"}, nil, n
	}
	return nil, nil, noticeNone
}

func decodeScript(m *mapper, params jsontext.Value) *Event {
	var p scriptParsed
	if json.Unmarshal(params, &p, cdpDecode) != nil {
		return nil
	}
	info := m.addScript(p.ScriptID, p.URL, p.SourceMapURL)
	if info == nil {
		return nil // node:internal, eval, …: never an event
	}
	detail := info.path
	switch {
	case info.smap != nil:
		detail += " (source map: " + strings.Join(mapSources(info.smap), ", ") + ")"
	case info.note != "":
		detail += " (source map not used: " + info.note + ")"
	}
	detail, cut := capText(detail, maxValueChars)
	return &Event{Kind: KindScript, Detail: detail, Location: &Location{File: info.path}, Truncated: cut}
}

// mapSources lists up to three original files of a map, for the detail text.
func mapSources(sm *sourceMap) []string {
	var out []string
	for _, s := range sm.sources {
		if s != "" {
			out = append(out, s)
		}
		if len(out) == 3 {
			break
		}
	}
	if len(out) < len(sm.sources) {
		out = append(out, "…")
	}
	return out
}

func decodeConsole(m *mapper, params jsontext.Value) *Event {
	var p consoleAPICalled
	if json.Unmarshal(params, &p, cdpDecode) != nil {
		return nil
	}
	if rep := m.parseChildReport(p); rep != nil {
		if rep.Event == "test-fail" {
			return m.testEvent(rep)
		}
		return &Event{child: rep}
	}
	ev := &Event{Kind: KindConsole, Subtype: p.Type, CallStack: m.frames(p.StackTrace)}
	texts := make([]string, 0, min(len(p.Args), maxValues))
	for i, a := range p.Args {
		if i == maxValues {
			texts = append(texts, "(+"+strconv.Itoa(len(p.Args)-maxValues)+" more)")
			break
		}
		v := valueOf(a)
		ev.Values = append(ev.Values, v)
		texts = append(texts, v.Text)
	}
	ev.Detail, ev.Truncated = capText(strings.Join(texts, " "), maxValueChars)
	if len(ev.CallStack) > 0 {
		top := ev.CallStack[0]
		ev.Location, ev.Generated, ev.SourceMapNote = &top.Location, top.Generated, top.mapNote
	}
	return ev
}

func decodeException(m *mapper, params jsontext.Value) *Event {
	var p exceptionThrown
	if json.Unmarshal(params, &p, cdpDecode) != nil {
		return nil
	}
	d := p.ExceptionDetails
	ev := &Event{Kind: KindException, CallStack: m.frames(d.StackTrace)}
	// The top user frame first: V8 records it exactly, and it is the first
	// "at" line of the stack Node prints. exceptionDetails' own position
	// is only the fallback (a SyntaxError has no user frame), by line
	// alone: Node 20 hands V8 a 0-based start column where V8 expects a
	// 1-based one, so lineNumber is right but columnNumber is one short.
	var arrow syntaxArrow
	var isArrow bool
	if len(ev.CallStack) == 0 && d.Exception != nil && d.Exception.Subtype == "error" {
		arrow, isArrow = parseSyntaxArrow(d.Exception.Description, d.Exception.ClassName)
	}
	switch {
	case len(ev.CallStack) > 0:
		top := ev.CallStack[0]
		ev.Location, ev.Generated, ev.SourceMapNote = &top.Location, top.Generated, top.mapNote
	case isArrow: // a CommonJS parse error: V8's position is Node's loader
		ev.Location, ev.SourceLine = &arrow.loc, arrow.source
	default:
		ev.Location, ev.Generated, ev.SourceMapNote = m.position(d.ScriptID, d.URL, d.LineNumber, -1)
		if ev.Location != nil && ev.Generated == nil && d.Exception != nil && d.Exception.ClassName == "SyntaxError" {
			ev.SourceLine = sourceLine(m.root, ev.Location.File, ev.Location.Line)
		}
	}
	msg := d.Text
	if d.Exception != nil {
		v := valueOf(*d.Exception)
		ev.Values = []Value{v}
		first, _, _ := strings.Cut(remoteText(*d.Exception), "\n")
		msg = first
		if isArrow {
			msg = arrow.message
		}
		if d.Exception.Subtype == "error" {
			ev.Stack = userStack(d.Exception.Description)
		}
	}
	ev.ErrorMessage, _ = capText(msg, maxValueChars)
	text := d.Text
	if isArrow {
		text = "Uncaught" // V8's text is the arrow's "file:line", not the error
	}
	ev.Detail, ev.Truncated = capText(strings.TrimSpace(text+" "+msg), maxValueChars)
	return ev
}
