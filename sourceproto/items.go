package sourceproto

import (
	"errors"

	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// Item is one observation of an append or replace batch: a one-member
// object whose member name is the topic, e.g. {"console":{…}}. The name is
// the discriminant so the decoder checks the topic against the source's
// declared topics before it reads a single field of the item.
type Item struct {
	Topic   Topic         `json:"-"`
	Console *ConsoleEvent `json:"console,omitempty"`
	Page    *PageInfo     `json:"page,omitempty"`
	Script  *ScriptInfo   `json:"script,omitempty"`
	Fetch   *FetchEvent   `json:"fetch,omitempty"`
	App     *AppEvent     `json:"app,omitempty"`
}

var (
	errUndeclaredTopic = errors.New("undeclared topic")
	errUnion           = errors.New("union must have exactly one member")
	errUnknownMember   = errors.New("unknown member")
	errMissingMember   = errors.New("missing member")
)

// decodeItem reads one item, refusing topics outside allowed.
func decodeItem(l *jlexer.Lexer, allowed Topic, it *Item) {
	*it = Item{}
	l.Delim('{')
	for !l.IsDelim('}') {
		t := topicOf(l.UnsafeFieldName(false))
		l.WantColon()
		switch {
		case t == 0:
			l.AddError(errUnknownMember)
			return
		case allowed&t == 0:
			l.AddError(errUndeclaredTopic)
			return
		case it.Topic != 0:
			l.AddError(errUnion)
			return
		}
		it.Topic = t
		switch t {
		case TopicConsole:
			it.Console = new(ConsoleEvent)
			it.Console.UnmarshalEasyJSON(l)
		case TopicPage:
			it.Page = new(PageInfo)
			it.Page.UnmarshalEasyJSON(l)
		case TopicScript:
			it.Script = new(ScriptInfo)
			it.Script.UnmarshalEasyJSON(l)
		case TopicFetch:
			it.Fetch = new(FetchEvent)
			it.Fetch.UnmarshalEasyJSON(l)
		case TopicApp:
			it.App = new(AppEvent)
			it.App.UnmarshalEasyJSON(l)
		}
		l.WantComma()
	}
	l.Delim('}')
	if it.Topic == 0 {
		l.AddError(errUnion)
	}
}

// MarshalEasyJSON writes the one-member object.
func (it *Item) MarshalEasyJSON(w *jwriter.Writer) {
	w.RawByte('{')
	switch {
	case it.Console != nil:
		w.RawString(`"console":`)
		it.Console.MarshalEasyJSON(w)
	case it.Page != nil:
		w.RawString(`"page":`)
		it.Page.MarshalEasyJSON(w)
	case it.Script != nil:
		w.RawString(`"script":`)
		it.Script.MarshalEasyJSON(w)
	case it.Fetch != nil:
		w.RawString(`"fetch":`)
		it.Fetch.MarshalEasyJSON(w)
	case it.App != nil:
		w.RawString(`"app":`)
		it.App.MarshalEasyJSON(w)
	}
	w.RawByte('}')
}

// decodeItems reads a JSON array of items into dst[:0], reusing its
// backing array (the Registry reuses one Append per source).
func decodeItems(l *jlexer.Lexer, allowed Topic, dst []Item) []Item {
	dst = dst[:0]
	if l.IsNull() {
		l.Skip()
		return dst
	}
	l.Delim('[')
	for !l.IsDelim(']') && l.Ok() {
		dst = append(dst, Item{})
		decodeItem(l, allowed, &dst[len(dst)-1])
		l.WantComma()
	}
	l.Delim(']')
	return dst
}

func marshalItems(w *jwriter.Writer, items []Item) {
	w.RawByte('[')
	for i := range items {
		if i > 0 {
			w.RawByte(',')
		}
		items[i].MarshalEasyJSON(w)
	}
	w.RawByte(']')
}

// decodeAppend reads an append body; members: dropped, items.
func decodeAppend(l *jlexer.Lexer, allowed Topic, a *Append) {
	a.Dropped = 0
	a.Items = a.Items[:0]
	seen := false
	l.Delim('{')
	for !l.IsDelim('}') && l.Ok() {
		key := l.UnsafeFieldName(false)
		l.WantColon()
		switch key {
		case "dropped":
			a.Dropped = l.Uint64()
		case "items":
			a.Items = decodeItems(l, allowed, a.Items)
			seen = true
		default:
			l.AddError(errUnknownMember)
		}
		l.WantComma()
	}
	l.Delim('}')
	if !seen {
		l.AddError(errMissingMember)
	}
}

// decodeReplace reads a replace body; members: reason, items.
func decodeReplace(l *jlexer.Lexer, allowed Topic, r *Replace) {
	var seenItems, seenReason bool
	l.Delim('{')
	for !l.IsDelim('}') && l.Ok() {
		key := l.UnsafeFieldName(false)
		l.WantColon()
		switch key {
		case "reason":
			r.Reason.UnmarshalEasyJSON(l)
			seenReason = true
		case "items":
			r.Items = decodeItems(l, allowed, r.Items)
			seenItems = true
		default:
			l.AddError(errUnknownMember)
		}
		l.WantComma()
	}
	l.Delim('}')
	if !seenItems || !seenReason {
		l.AddError(errMissingMember)
	}
}

// MarshalEasyJSON writes the append body.
func (a *Append) MarshalEasyJSON(w *jwriter.Writer) {
	w.RawByte('{')
	if a.Dropped != 0 {
		w.RawString(`"dropped":`)
		w.Uint64(a.Dropped)
		w.RawByte(',')
	}
	w.RawString(`"items":`)
	marshalItems(w, a.Items)
	w.RawByte('}')
}

// MarshalEasyJSON writes the replace body.
func (r *Replace) MarshalEasyJSON(w *jwriter.Writer) {
	w.RawString(`{"reason":`)
	r.Reason.MarshalEasyJSON(w)
	w.RawString(`,"items":`)
	marshalItems(w, r.Items)
	w.RawByte('}')
}

// UnmarshalEasyJSON decodes with every topic allowed (tools and tests; the
// Registry uses the declared topics).
func (a *Append) UnmarshalEasyJSON(l *jlexer.Lexer) { decodeAppend(l, topicAll, a) }

// UnmarshalEasyJSON decodes with every topic allowed.
func (r *Replace) UnmarshalEasyJSON(l *jlexer.Lexer) { decodeReplace(l, topicAll, r) }
