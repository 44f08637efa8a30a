// Package network projects the fetch journal (package fetchcapture) onto the CDP
// Network domain: replay on Network.enable, live stream, response bodies.
// It does not exist as behaviour yet: until it does, cdpserver answers
// Network.getResponseBody and Network.getRequestPostData with an explicit error.
package network
