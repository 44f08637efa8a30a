// Package sourceproto is the versioned internal observation protocol: frame
// types, exact decoders, limits, and the per-source sequence/generation state
// machine shared by the host pipe and the client WebSocket carriers.
//
// Spec: docs/protocol.md.
package sourceproto

//go:generate easyjson -disallow_unknown_fields -no_std_marshalers values.go lifecycle.go console.go observe.go script.go query.go runtime.go
