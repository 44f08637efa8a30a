// Package fetchcapture keeps the bounded journal of fetch observations sent by the
// host preload (request/response heads, bodies within budgets, truncation).
// It does not exist as behaviour yet; see the open issues.
package fetchcapture
