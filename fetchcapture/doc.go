// Package fetchcapture keeps the bounded journal of fetch observations: the
// "fetch" items (sourceproto.FetchEvent) that the host preload and every page
// send, reassembled into one entry per request.
//
// The Journal is a sourceproto.Consumer (give it to sourceproto.NewRegistry
// next to the client hub). It owns:
//
//   - entries keyed by (source, generation, producer id), each with a
//     worker-unique request id (RequestID, "iw-net.<n>");
//   - the entry-count and byte budgets (Options; defaults DefaultMaxEntries and
//     DefaultMaxBytes) over everything an entry keeps, per source, per side
//     (pages together hold at most half; the rest is the host's reserve) and
//     in total, and who gives way over them (budget.go);
//   - closing the unfinished entries of a source that disconnects or sends a
//     replacement snapshot (they end as failed, saying why); a disconnected
//     source's are reduced to their request line;
//   - MaxRedirects hops per request;
//   - body reassembly by offset: a chunk that does not continue the body
//     exactly (a gap or an overlap) makes the body "broken", never trusted;
//   - redaction of the header values named in Options.RedactHeaders, applied
//     when recording, so a redacted value never reaches memory past the call;
//   - normalised steps (request, redirect hop, response, data, finished,
//     failed) and Subscribe: a consistent snapshot plus a live stream with no
//     loss and no duplication across the cut-over, bounded per reader in
//     steps and in the bytes they pin; notices (StepNotice) when one source's
//     entries were pushed out by another's.
//
// It never builds CDP (package network does) and never writes to a socket.
// The wire it consumes is docs/protocol.md "Items and topics" (FetchEvent).
package fetchcapture
