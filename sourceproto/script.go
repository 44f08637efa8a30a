package sourceproto

// Chunked script reads: the worker asks for one script by url, the
// producer answers script.meta, zero or more script.chunk in offset order,
// then script.end. All four carry the worker's request ID.

// ScriptRead asks for a script's metadata, and its content when Content.
//
//easyjson:json
type ScriptRead struct {
	ID      uint64 `json:"id"`
	URL     string `json:"url"`
	Content bool   `json:"content,omitempty"`
}

// ScriptMeta is the first answer to a ScriptRead.
//
//easyjson:json
type ScriptMeta struct {
	ID           uint64 `json:"id"`
	URL          string `json:"url"`
	Length       int64  `json:"length"`
	SourceMapURL string `json:"sourceMapURL,omitempty"`
	Hash         string `json:"hash,omitempty"`
	ContentType  string `json:"contentType,omitempty"`
}

// ScriptChunk carries Data (base64 on the wire) at byte Offset. Chunks
// arrive in order, without holes: Offset is the sum of earlier chunks.
//
//easyjson:json
type ScriptChunk struct {
	ID     uint64 `json:"id"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// ScriptEnd closes a read: Length is the total of all chunks, or Error
// says why the read failed (after meta, or instead of it).
//
//easyjson:json
type ScriptEnd struct {
	ID     uint64          `json:"id"`
	Length int64           `json:"length"`
	Error  *TransportError `json:"error,omitempty"`
}
