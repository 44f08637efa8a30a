// Command inspector-worker is the one Chrome DevTools endpoint for a Node.js host
// and the browser pages it serves.
//
// Subcommands: run, serve, demo (see README.md).
package main
