module github.com/inspector-worker/inspector-worker

go 1.26.0

require (
	github.com/chromedp/cdproto v0.160.1
	github.com/chromedp/chromedp v0.23.1
	github.com/coder/websocket v1.8.15
	github.com/fsnotify/fsnotify v1.10.1
	github.com/go-json-experiment/json v1.27.2
	github.com/mailru/easyjson v0.9.2
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.13.0
)

require github.com/josharian/intern v1.0.0 // indirect
