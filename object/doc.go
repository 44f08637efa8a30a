// Package object is the connection-local object table.
//
// Each DevTools connection owns one Table that maps a backend handle (realm,
// generation, handle) to a CDP objectId and back, with object groups and
// release. V8 objectIds of the host stay with the host's inspector session and
// are passed through unchanged (Owns tells them apart); handles of client
// realms are given table-owned objectIds, so a handle can cross neither
// realms nor windows. Closing a connection drains its table (Drain) so its
// caller can release the handles in their backends. The table never talks to a
// backend itself: callers release backend handles it hands back.
package object
