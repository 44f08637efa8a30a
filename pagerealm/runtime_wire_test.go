package pagerealm

import (
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

var runtimeMethodsForPages = []string{
	"Runtime.evaluate", "Runtime.getProperties", "Runtime.callFunctionOn", "Runtime.awaitPromise",
	"Runtime.releaseObject", "Runtime.globalLexicalScopeNames", "Runtime.compileScript",
}

// handlers are the handlers the method table (cdpserver/methods.go) names
// for runtimeMethodsForPages.
var handlers = map[string]*Runtime{
	"Runtime.evaluate": Evaluate, "Runtime.getProperties": GetProperties, "Runtime.callFunctionOn": CallFunctionOn,
	"Runtime.awaitPromise": AwaitPromise, "Runtime.releaseObject": ReleaseObject,
	"Runtime.globalLexicalScopeNames": GlobalLexicalScopeNames, "Runtime.compileScript": CompileScript,
}

// resolverFixture is a window's table holding one object of page a
// (generation 2), one of an earlier load, and one of page b.
func resolverFixture() (*handleResolver, map[string]string) {
	t := object.NewTable()
	ids := map[string]string{}
	ids["cur"], _ = t.Add(object.Handle{Realm: "client:a", Generation: 2, ID: "h:cur"}, "console")
	ids["old"], _ = t.Add(object.Handle{Realm: "client:a", Generation: 1, ID: "h:old"}, "console")
	ids["other"], _ = t.Add(object.Handle{Realm: "client:b", Generation: 2, ID: "h:other"}, "")
	return &handleResolver{t: t, realm: "client:a", gen: 2, page: "page a"}, ids
}

func TestRuntimeCommandResolves(t *testing.T) {
	r, ids := resolverFixture()
	for _, tc := range []struct {
		name, method, params, want string // want: "" = ok, else error substring
	}{
		{"getProperties", "Runtime.getProperties", `{"objectId":"` + ids["cur"] + `"}`, ""},
		{"earlier load", "Runtime.getProperties", `{"objectId":"` + ids["old"] + `"}`, "earlier load"},
		{"other page", "Runtime.getProperties", `{"objectId":"` + ids["other"] + `"}`, "another page"},
		{"host id", "Runtime.getProperties", `{"objectId":"-4511.1.3"}`, "Node host"},
		{"unknown", "Runtime.getProperties", `{"objectId":"iw:999"}`, "Could not find object"},
		{"no object", "Runtime.getProperties", `{}`, "objectId is required"},
		{"host argument", "Runtime.callFunctionOn", `{"functionDeclaration":"f","arguments":[{"objectId":"1.2.3"}]}`, "Node host"},
		{"argument", "Runtime.callFunctionOn", `{"objectId":"` + ids["cur"] + `","functionDeclaration":"f","arguments":[{"objectId":"` + ids["cur"] + `"},{"value":{"a":1}}]}`, ""},
		{"bad json", "Runtime.evaluate", `{"expression":`, "invalid params"},
		{"compile", "Runtime.compileScript", `{"expression":"a(","sourceURL":"","persistScript":false}`, ""},
		{"persist", "Runtime.compileScript", `{"expression":"1","persistScript":true}`, "persistScript"},
		{"not offered", "Runtime.runScript", `{}`, "not offered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, _, err := runtimeCommand(handlers[tc.method], tc.method, []byte(tc.params), r, runtimeMethodsForPages)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("runtimeCommand = %+v, %v; want an error with %q", cmd, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cmd.Session, cmd.ID = "w1", 1
			if _, err := sourceproto.Marshal(sourceproto.Header{Source: "a", Gen: 2}, cmd); err != nil {
				t.Fatalf("the command does not marshal: %v", err)
			}
		})
	}
}

// FuzzRuntimeCommand: whatever a window sends, translating it never panics
// and never hands the page a handle that is not the page's own (current
// generation, in the window's table).
func FuzzRuntimeCommand(f *testing.F) {
	_, ids := resolverFixture()
	for i := range runtimeMethodsForPages {
		f.Add(uint8(i), []byte(`{"objectId":"`+ids["cur"]+`","expression":"1"}`))
		f.Add(uint8(i), []byte(`{"promiseObjectId":"`+ids["old"]+`","arguments":[{"objectId":"`+ids["other"]+`"},{"value":1}]}`))
		f.Add(uint8(i), []byte(`{"functionDeclaration":"f","arguments":[{"objectId":"`+ids["cur"]+`"}],"objectGroup":"g"}`))
	}
	f.Add(uint8(0), []byte(`null`))
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		r, _ := resolverFixture()
		method := runtimeMethodsForPages[int(which)%len(runtimeMethodsForPages)]
		cmd, _, err := runtimeCommand(handlers[method], method, params, r, runtimeMethodsForPages)
		if err != nil {
			return
		}
		var handles []string
		switch {
		case cmd.GetProperties != nil:
			handles = append(handles, cmd.GetProperties.Handle)
		case cmd.AwaitPromise != nil:
			handles = append(handles, cmd.AwaitPromise.Handle)
		case cmd.ReleaseObject != nil:
			handles = append(handles, cmd.ReleaseObject.Handle)
		case cmd.CallFunctionOn != nil:
			if cmd.CallFunctionOn.Handle != "" {
				handles = append(handles, cmd.CallFunctionOn.Handle)
			}
			for _, a := range cmd.CallFunctionOn.Arguments {
				if a.Handle != "" {
					handles = append(handles, a.Handle)
				}
			}
		}
		for _, h := range handles {
			if h != "h:cur" {
				t.Fatalf("%s %s gave the page handle %q", method, params, h)
			}
		}
		cmd.Session, cmd.ID = "w1", 1
		_, _ = sourceproto.Marshal(sourceproto.Header{Source: "a", Gen: 2}, cmd) // may refuse (limits); must not panic
	})
}
