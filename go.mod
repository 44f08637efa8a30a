module github.com/inspector-worker/inspector-worker

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.3 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/mailru/easyjson v0.9.2 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
