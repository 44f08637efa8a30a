package sourceproto

// Version is the protocol version this worker speaks. Every frame carries it
// in the envelope ("v") and a frame of any other version is rejected with
// RejectUnsupportedVersion before anything else in it is read: the two ends
// are built and shipped together (the preload and the client bundle are
// embedded in the worker binary), so there is no negotiation, only a check
// that catches a stale cached bundle or a foreign producer.
//
// History (keep in step with docs/protocol.md, "Versions"):
//
//	1  Initial protocol: envelope {v,type,source,gen,seq,body}; source
//	   lifecycle (hello, welcome, replace, append, ack, snapshot-request,
//	   reject, close); item topics console, page, script, fetch, app; Runtime
//	   command/result unions (evaluate, getProperties, callFunctionOn,
//	   awaitPromise, releaseObject, releaseObjectGroup,
//	   globalLexicalScopeNames) with cancel and result acknowledgement;
//	   console enable/disable/discard per DevTools session; chunked script
//	   reads; semantic queries.
const Version = 1
