package sourceproto

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"log/slog"

	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// TokenBytes is the entropy of a client token: 256 bits, twice the 128
// the design requires, so a token stays out of reach of guessing even if a
// few bits leak through a side channel.
const TokenBytes = 32

const redacted = "[redacted]"

// Token is the per-run secret a client page presents in its hello. The
// worker creates one per run, hands Reveal() to the page it serves (and to
// nobody else), and gives the Token to Registry.Open for client carriers.
// Its printing and logging forms are redacted.
type Token struct {
	s string // base64url, no padding; never printed
}

// NewToken draws a fresh token from crypto/rand.
func NewToken() (Token, error) {
	var b [TokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Token{}, fmt.Errorf("sourceproto: new token: %w", err)
	}
	return Token{s: base64.RawURLEncoding.EncodeToString(b[:])}, nil
}

// Reveal returns the token text to embed in the client page. Call it only
// where the text goes to the page; never log the result.
func (t Token) Reveal() string { return t.s }

// IsZero reports whether t was never set.
func (t Token) IsZero() bool { return t.s == "" }

// Matches compares in constant time (for tokens of equal length; the
// length is public). A zero Token matches nothing.
func (t Token) Matches(s Secret) bool {
	if t.s == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(t.s), []byte(s)) == 1
}

func (t Token) String() string             { return redacted }
func (t Token) GoString() string           { return redacted }
func (t Token) LogValue() slog.Value       { return slog.StringValue(redacted) }
func (t Token) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// Secret is a credential received on the wire (Hello.Token). It encodes as
// itself only through the easyjson codec that writes frames; fmt, slog and
// encoding/json see "[redacted]", so logging a decoded Hello leaks nothing.
type Secret string

func (s Secret) String() string             { return redacted }
func (s Secret) GoString() string           { return redacted }
func (s Secret) LogValue() slog.Value       { return slog.StringValue(redacted) }
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON redacts: encoding/json is for logs and tools, not frames.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalEasyJSON writes the real value: this is the frame encoder.
func (s Secret) MarshalEasyJSON(w *jwriter.Writer) { w.String(string(s)) }

// UnmarshalEasyJSON reads the value.
func (s *Secret) UnmarshalEasyJSON(l *jlexer.Lexer) { *s = Secret(l.String()) }

// ParseToken accepts a token made elsewhere (the embedding helper draws it
// in the app and hands it to `serve` through the environment): base64url
// without padding, exactly TokenBytes of entropy.
func ParseToken(s string) (Token, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != TokenBytes {
		return Token{}, fmt.Errorf("sourceproto: a client token must be %d random bytes in unpadded base64url", TokenBytes)
	}
	return Token{s: s}, nil
}
