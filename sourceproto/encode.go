package sourceproto

import (
	"github.com/mailru/easyjson/jwriter"
)

// Header is the envelope of a frame to encode: who it is for and, for
// sequenced types, its sequence number. The type comes from the body.
type Header struct {
	Source string
	Gen    uint64
	Seq    uint64
}

// Marshal encodes one frame after checking it against the same rules the
// decoder applies, so the worker never sends what it would itself refuse.
func Marshal(h Header, b Body) ([]byte, error) {
	t := b.FrameType()
	rule := frameRules[t]
	switch {
	case !validIDString(h.Source) && !(t == FrameReject && h.Source == ""):
		return nil, malformed("source id must be 1-128 of [A-Za-z0-9._:-]")
	case rule.noGen && h.Gen != 0, !rule.noGen && t != FrameReject && h.Gen == 0:
		return nil, malformed("gen does not fit the frame type")
	case !rule.sequenced && h.Seq != 0, t == FrameAppend && h.Seq == 0:
		return nil, malformed("seq does not fit the frame type")
	case h.Gen > MaxSafeInteger || h.Seq > MaxSafeInteger:
		return nil, malformed("gen or seq above 2^53-1")
	}
	if err := b.validate(); err != nil {
		return nil, err
	}
	var w jwriter.Writer
	writeFrame(&w, t, h, b)
	out, err := w.BuildBytes()
	if err != nil {
		return nil, err
	}
	if len(out) > MaxFrameBytes {
		return nil, overLimit("MaxFrameBytes", MaxFrameBytes)
	}
	return out, nil
}

// writeFrame writes the envelope members in the canonical order v, type,
// source, gen, seq, body (decoders accept any order).
func writeFrame(w *jwriter.Writer, t FrameType, h Header, b Body) {
	w.RawString(`{"v":`)
	w.Int(Version)
	w.RawString(`,"type":"`)
	w.RawString(t.String())
	w.RawByte('"')
	if h.Source != "" {
		w.RawString(`,"source":"`)
		w.RawString(h.Source) // validated: no escaping needed
		w.RawByte('"')
	}
	if h.Gen != 0 {
		w.RawString(`,"gen":`)
		w.Uint64(h.Gen)
	}
	if frameRules[t].sequenced {
		w.RawString(`,"seq":`)
		w.Uint64(h.Seq)
	}
	w.RawString(`,"body":`)
	b.MarshalEasyJSON(w)
	w.RawByte('}')
}

// mustMarshal is for frames the worker builds from values it validated
// itself (acks, rejects, snapshot requests); an error there is a bug.
func mustMarshal(h Header, b Body) []byte {
	out, err := Marshal(h, b)
	if err != nil {
		panic("sourceproto: encoding a worker frame: " + err.Error())
	}
	return out
}
