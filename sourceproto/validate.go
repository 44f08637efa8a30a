package sourceproto

import "math"

// Semantic rules the generated decoders cannot express. Each returns the
// first violation; messages are fixed text (never the input).

func checkID(s string, what string) *RejectError {
	if !validIDString(s) {
		return malformed(what + " must be 1-128 of [A-Za-z0-9._:-]")
	}
	return nil
}

func checkOptID(s string, what string) *RejectError {
	if s == "" {
		return nil
	}
	return checkID(s, what)
}

func validIDString(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func checkSafe(n uint64, what string) *RejectError {
	if n > MaxSafeInteger {
		return malformed(what + " above 2^53-1")
	}
	return nil
}

func checkNonNeg(n int64, what string) *RejectError {
	if n < 0 || n > MaxSafeInteger {
		return malformed(what + " must be in 0..2^53-1")
	}
	return nil
}

func checkTimestamp(t float64) *RejectError {
	if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
		return malformed("timestamp must be finite and not negative")
	}
	return nil
}

func checkCount(n, max int, limit string) *RejectError {
	if n > max {
		return overLimit(limit, int64(max))
	}
	return nil
}

func checkValueBytes(v RawJSON) *RejectError {
	return checkCount(len(v), MaxValueBytes, "MaxValueBytes")
}

// first returns the first non-nil error.
func first(errs ...*RejectError) *RejectError {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// validUnserializable reports whether s is one of CDP's unserializable
// number spellings or a bigint literal ("-12n").
func validUnserializable(s string) bool {
	switch s {
	case "Infinity", "-Infinity", "NaN", "-0":
		return true
	}
	if len(s) < 2 || s[len(s)-1] != 'n' {
		return false
	}
	digits := s[:len(s)-1]
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

func (o *RemoteObject) validate() *RejectError {
	switch {
	case o.Type == "":
		return malformed("remote object without type")
	case o.Subtype != "" && o.Type != TypeObject:
		return malformed("subtype on a non-object")
	case len(o.Value) > 0 && o.UnserializableValue != "":
		return malformed("value and unserializableValue are exclusive")
	case o.UnserializableValue != "" && !validUnserializable(o.UnserializableValue):
		return malformed("invalid unserializableValue")
	}
	if o.Handle != "" {
		switch o.Type {
		case TypeUndefined, TypeString, TypeNumber, TypeBoolean:
			return malformed("handle on a primitive")
		}
	}
	if err := first(checkOptID(o.Handle, "handle"), checkValueBytes(o.Value)); err != nil {
		return err
	}
	if o.Preview != nil {
		return o.Preview.validate(0)
	}
	return nil
}

func (p *ObjectPreview) validate(depth int) *RejectError {
	if depth > MaxPreviewDepth {
		return overLimit("MaxPreviewDepth", MaxPreviewDepth)
	}
	if p.Type == "" {
		return malformed("preview without type")
	}
	if err := first(checkCount(len(p.Properties), MaxPreviewItems, "MaxPreviewItems"),
		checkCount(len(p.Entries), MaxPreviewItems, "MaxPreviewItems")); err != nil {
		return err
	}
	for i := range p.Properties {
		pp := &p.Properties[i]
		if pp.Type == "" {
			return malformed("property preview without type")
		}
		if pp.ValuePreview != nil {
			if err := pp.ValuePreview.validate(depth + 1); err != nil {
				return err
			}
		}
	}
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Key != nil {
			if err := e.Key.validate(depth + 1); err != nil {
				return err
			}
		}
		if err := e.Value.validate(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

func (s *StackTrace) validate() *RejectError {
	if s == nil {
		return nil
	}
	if err := checkCount(len(s.CallFrames), MaxStackFrames, "MaxStackFrames"); err != nil {
		return err
	}
	for i := range s.CallFrames {
		f := &s.CallFrames[i]
		if err := first(checkNonNeg(f.LineNumber, "lineNumber"), checkNonNeg(f.ColumnNumber, "columnNumber")); err != nil {
			return err
		}
	}
	return nil
}

func (d *ExceptionDetails) validate() *RejectError {
	if d == nil {
		return nil
	}
	err := first(checkNonNeg(d.ExceptionID, "exceptionId"), checkNonNeg(d.LineNumber, "lineNumber"),
		checkNonNeg(d.ColumnNumber, "columnNumber"), d.StackTrace.validate())
	if err == nil && d.Exception != nil {
		err = d.Exception.validate()
	}
	return err
}

func optObject(o *RemoteObject) *RejectError {
	if o == nil {
		return nil
	}
	return o.validate()
}

func (e *TransportError) validate() *RejectError {
	if e != nil && e.Code == "" {
		return malformed("error without code")
	}
	return nil
}

// Console.

func (e *ConsoleEvent) validate() *RejectError {
	if e.Type == "" {
		return malformed("console event without type")
	}
	err := first(checkOptID(e.Session, "session"), checkCount(len(e.Args), MaxConsoleArgs, "MaxConsoleArgs"),
		checkTimestamp(e.Timestamp), e.StackTrace.validate())
	if err != nil {
		return err
	}
	for i := range e.Args {
		a := &e.Args[i]
		if err := a.validate(); err != nil {
			return err
		}
		// A handle belongs to one DevTools session's object group; an
		// event without a session could be shown to any session.
		if a.Handle != "" && e.Session == "" {
			return malformed("console argument handle without session")
		}
	}
	return nil
}

func (c *ConsoleEnable) validate() *RejectError  { return checkID(c.Session, "session") }
func (c *ConsoleDisable) validate() *RejectError { return checkID(c.Session, "session") }
func (c *ConsoleDiscard) validate() *RejectError { return checkID(c.Session, "session") }

// Items of the other topics.

func (p *PageInfo) validate() *RejectError { return nil }

func (s *ScriptInfo) validate() *RejectError {
	if s.URL == "" {
		return malformed("script without url")
	}
	return checkNonNeg(s.Length, "length")
}

func (a *AppEvent) validate() *RejectError {
	return first(checkID(a.Name, "app event name"), checkTimestamp(a.Timestamp), checkValueBytes(a.Data))
}

func (it *Item) validate() *RejectError {
	switch it.Topic {
	case TopicConsole:
		return it.Console.validate()
	case TopicPage:
		return it.Page.validate()
	case TopicScript:
		return it.Script.validate()
	case TopicFetch:
		return it.Fetch.validate()
	case TopicApp:
		return it.App.validate()
	}
	return malformed("item without topic")
}

func validateItems(items []Item) *RejectError {
	if err := checkCount(len(items), MaxBatchItems, "MaxBatchItems"); err != nil {
		return err
	}
	for i := range items {
		if err := items[i].validate(); err != nil {
			return err
		}
	}
	return nil
}
