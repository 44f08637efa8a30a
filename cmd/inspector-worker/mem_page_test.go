//go:build linux

package main

import (
	"fmt"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// goPage is a page as the worker sees it over ws /client, played by
// sourceprototest's scripted producer: no console capability, so its
// events carry no window's handles and feed every window and the replay.
type goPage struct {
	p   *sourceprototest.Producer
	url string
}

func newGoPage(id, token string) *goPage {
	return &goPage{p: sourceprototest.New(id, token), url: "http://127.0.0.1:1/" + id}
}

func (g *goPage) hello(tb testing.TB) []byte {
	return g.p.Hello(tb, 0, sourceproto.TopicConsole|sourceproto.TopicPage)
}

func (g *goPage) welcomed(tb testing.TB, frame []byte) { g.p.Welcomed(tb, frame) }

func (g *goPage) initial(tb testing.TB) []byte {
	return g.p.Replace(tb, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: g.url, Title: g.p.ID}})
}

// appendLogs is n console.log('message i', {i, user, ok}) calls from i0 on.
func (g *goPage) appendLogs(tb testing.TB, i0, n int) []byte {
	items := make([]sourceproto.Item, n)
	for k := range items {
		i := i0 + k
		ev := &sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Timestamp: 1.7e12 + float64(i), Args: []sourceproto.RemoteObject{
			{Type: sourceproto.TypeString, Value: sourceproto.RawJSON(fmt.Sprintf("%q", fmt.Sprintf("message %d from %s", i, g.p.ID)))},
			{Type: sourceproto.TypeObject, ClassName: "Object", Description: "Object", Preview: &sourceproto.ObjectPreview{
				Type: sourceproto.TypeObject, Description: "Object", Properties: []sourceproto.PropertyPreview{
					{Name: "i", Type: "number", Value: fmt.Sprint(i)},
					{Name: "user", Type: "string", Value: "alice@example.com"},
					{Name: "ok", Type: "boolean", Value: "true"},
				}}},
		}, StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{
			{FunctionName: "handleClick", URL: g.url + "app.js", LineNumber: 41, ColumnNumber: 12},
			{FunctionName: "dispatch", URL: g.url + "vendor.js", LineNumber: 1200, ColumnNumber: 3},
			{FunctionName: "", URL: g.url + "app.js", LineNumber: 7, ColumnNumber: 1},
		}}}
		items[k] = sourceprototest.Console(ev)
	}
	return g.p.Append(tb, items...)
}
