package sourceproto

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type family string

const (
	famSource  family = "source"
	famRuntime family = "runtime"
	famConsole family = "console"
	famScript  family = "script"
	famQuery   family = "query"
	famFetch   family = "fetch"
	famDOM     family = "dom"
)

type decodeCase struct {
	name  string
	fam   family
	frame string
	// want is the reject code, or "" for a frame that decodes.
	want RejectCode
}

const env = `"source":"c1","gen":3`

var decodeCases = []decodeCase{
	// Source lifecycle.
	{"hello", famSource, helloFrame("c1", `"runtime","console"`, `"console","page"`), ""},
	{"hello no caps", famSource, `{"v":1,"type":"hello","source":"host","body":{"role":"host","capabilities":[],"topics":["fetch","app"],"agent":{"name":"preload","version":"1"}}}`, ""},
	{"welcome", famSource, `{"v":1,"type":"welcome",` + env + `,"body":{"capabilities":["runtime"],"topics":["console"],"limits":{"maxFrameBytes":1048576,"maxBatchItems":512,"maxStringBytes":65536,"maxChunkBytes":49152,"maxValueBytes":262144}}}`, ""},
	{"replace", famSource, `{"v":1,"type":"replace",` + env + `,"seq":0,"body":{"reason":"initial","items":[{"page":{"url":"u","title":"t"}}]}}`, ""},
	{"append", famSource, appendFrame("c1", 3, 1, 0, consoleItem), ""},
	{"append dropped", famSource, appendFrame("c1", 3, 9, 2, `{"app":{"name":"login","timestamp":1,"data":{"user":"x"}}}`), ""},
	{"ack", famSource, `{"v":1,"type":"ack",` + env + `,"seq":7,"body":{"dropped":2}}`, ""},
	{"snapshot-request", famSource, `{"v":1,"type":"snapshot-request",` + env + `,"body":{"expected":3,"received":9,"missing":6}}`, ""},
	{"reject", famSource, `{"v":1,"type":"reject",` + env + `,"body":{"code":"oversized","reason":"over MaxFrameBytes","refType":"append","refSeq":4,"limit":"MaxFrameBytes","max":1048576}}`, ""},
	{"reject anonymous", famSource, `{"v":1,"type":"reject","body":{"code":"malformed"}}`, ""},
	{"close", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"going-away"}}`, ""},
	{"script item", famSource, appendFrame("c1", 3, 1, 0, `{"script":{"url":"http://x/client.js","length":10}}`), ""},
	{"not json", famSource, `{"v":1,`, RejectMalformed},
	{"not an object", famSource, `[1]`, RejectMalformed},
	{"trailing data", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"normal"}} x`, RejectMalformed},
	{"version 2", famSource, `{"v":2,"type":"close",` + env + `,"body":{"code":"normal"}}`, RejectUnsupportedVersion},
	{"version 2 with new member", famSource, `{"v":2,"type":"close","x":1,` + env + `,"body":{}}`, RejectUnsupportedVersion},
	{"version missing", famSource, `{"type":"close",` + env + `,"body":{"code":"normal"}}`, RejectMalformed},
	{"version 1.0", famSource, `{"v":1.0,"type":"close",` + env + `,"body":{"code":"normal"}}`, RejectMalformed},
	{"unknown envelope member", famSource, `{"v":1,"type":"close","x":1,` + env + `,"body":{"code":"normal"}}`, RejectMalformed},
	{"duplicate envelope member", famSource, `{"v":1,"type":"close",` + env + `,"gen":4,"body":{"code":"normal"}}`, RejectMalformed},
	{"escaped envelope key", famSource, `{"v":1,"\u0074ype":"close",` + env + `,"body":{"code":"normal"}}`, RejectMalformed},
	{"unknown type", famSource, `{"v":1,"type":"shout",` + env + `,"body":{}}`, RejectUnknownType},
	{"bad source id", famSource, `{"v":1,"type":"close","source":"a b","gen":3,"body":{"code":"normal"}}`, RejectMalformed},
	{"hello with gen", famSource, `{"v":1,"type":"hello","source":"c1","gen":1,"body":{"role":"client","capabilities":[],"topics":[],"agent":{"name":"","version":""}}}`, RejectMalformed},
	{"gen zero", famSource, `{"v":1,"type":"close","source":"c1","gen":0,"body":{"code":"normal"}}`, RejectMalformed},
	{"gen above 2^53-1", famSource, `{"v":1,"type":"close","source":"c1","gen":9007199254740992,"body":{"code":"normal"}}`, RejectMalformed},
	{"seq on close", famSource, `{"v":1,"type":"close",` + env + `,"seq":1,"body":{"code":"normal"}}`, RejectMalformed},
	{"append seq 0", famSource, appendFrame("c1", 3, 0, 0, consoleItem), RejectMalformed},
	{"append no items", famSource, appendFrame("c1", 3, 1, 0), RejectMalformed},
	{"append unknown body member", famSource, `{"v":1,"type":"append",` + env + `,"seq":1,"body":{"items":[` + consoleItem + `],"extra":1}}`, RejectMalformed},
	{"item two topics", famSource, appendFrame("c1", 3, 1, 0, `{"page":{"url":"","title":""},"app":{"name":"a","timestamp":0}}`), RejectMalformed},
	{"item unknown topic", famSource, appendFrame("c1", 3, 1, 0, `{"tweet":{}}`), RejectMalformed},
	{"body not object", famSource, `{"v":1,"type":"close",` + env + `,"body":[]}`, RejectMalformed},
	{"leading zero in body", famSource, `{"v":1,"type":"ack",` + env + `,"seq":7,"body":{"dropped":02}}`, RejectMalformed},
	{"control char in string", famSource, "{\"v\":1,\"type\":\"close\"," + env + ",\"body\":{\"code\":\"normal\",\"reason\":\"a\x01\"}}", RejectMalformed},
	{"invalid utf8", famSource, "{\"v\":1,\"type\":\"close\"," + env + ",\"body\":{\"code\":\"normal\",\"reason\":\"\xff\"}}", RejectMalformed},
	{"unknown close code", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"bye"}}`, RejectMalformed},
	{"string too long", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"normal","reason":"` + strings.Repeat("a", MaxStringBytes+1) + `"}}`, RejectOversized},
	{"too deep", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"normal","x":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}}`, RejectOversized},
	{"frame too large", famSource, `{"v":1,"type":"close",` + env + `,"body":{"code":"normal","reason":"` + strings.Repeat("a", MaxFrameBytes) + `"}}`, RejectOversized},
	{"batch too large", famSource, appendFrame("c1", 3, 1, 0, strings.Repeat(`{"page":{"url":"","title":""}},`, MaxBatchItems)+`{"page":{"url":"","title":""}}`), RejectOversized},

	// Runtime.
	{"evaluate", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"expression":"1+1","objectGroup":"console","generatePreview":true}}}`, ""},
	{"getProperties", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":8,"method":"getProperties","getProperties":{"handle":"h:1","ownProperties":true}}}`, ""},
	{"callFunctionOn", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":9,"method":"callFunctionOn","callFunctionOn":{"functionDeclaration":"function(a){return this[a]}","handle":"h:1","arguments":[{"value":"x"},{"unserializableValue":"-0"},{"handle":"h:2"},{}]}}}`, ""},
	{"awaitPromise", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":10,"method":"awaitPromise","awaitPromise":{"handle":"h:3"}}}`, ""},
	{"releaseObject", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":11,"method":"releaseObject","releaseObject":{"handle":"h:3"}}}`, ""},
	{"releaseObjectGroup", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":12,"method":"releaseObjectGroup","releaseObjectGroup":{"objectGroup":"console"}}}`, ""},
	{"globalLexicalScopeNames", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":13,"method":"globalLexicalScopeNames","globalLexicalScopeNames":{}}}`, ""},
	{"command member mismatch", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","releaseObject":{"handle":"h"}}}`, RejectMalformed},
	{"command two members", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"expression":""},"releaseObject":{"handle":"h"}}}`, RejectMalformed},
	{"command unknown method", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":7,"method":"compileScript"}}`, RejectMalformed},
	{"command unknown param", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"expression":"1","contextId":1}}}`, RejectMalformed},
	{"argument two values", famRuntime, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"s1","id":9,"method":"callFunctionOn","callFunctionOn":{"functionDeclaration":"f","arguments":[{"value":1,"handle":"h"}]}}}`, RejectMalformed},
	{"evaluate result", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"object","className":"Object","description":"Object","handle":"h:9","preview":{"type":"object","overflow":false,"properties":[{"name":"a","type":"number","value":"1"},{"name":"m","type":"object","subtype":"map","valuePreview":{"type":"object","subtype":"map","overflow":false,"properties":[],"entries":[{"key":{"type":"string","overflow":false,"properties":[]},"value":{"type":"number","overflow":false,"properties":[]}}]}}]}}}}}`, ""},
	{"evaluate exception", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"object","subtype":"error","description":"Error: x","handle":"h:1"},"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":0,"columnNumber":6,"exception":{"type":"object","subtype":"error","handle":"h:1"}}}}}`, ""},
	{"getProperties result", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":8,"method":"getProperties","getProperties":{"result":[{"name":"a","value":{"type":"number","value":1,"description":"1"},"writable":true,"configurable":true,"enumerable":true,"isOwn":true},{"name":"g","get":{"type":"function","handle":"h:4"},"configurable":false,"enumerable":false}],"internalProperties":[{"name":"[[Prototype]]","value":{"type":"object","handle":"h:5"}}],"privateProperties":[{"name":"#x","value":{"type":"bigint","unserializableValue":"12n"}}]}}}`, ""},
	{"scope names result", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":13,"method":"globalLexicalScopeNames","globalLexicalScopeNames":{"names":["a","b"]}}}`, ""},
	{"release result", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":11,"method":"releaseObject","releaseObject":{}}}`, ""},
	{"error result", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","error":{"code":"cancelled"}}}`, ""},
	{"result and error", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"undefined"}},"error":{"code":"internal"}}}`, RejectMalformed},
	{"handle on primitive", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"number","value":1,"handle":"h"}}}}`, RejectMalformed},
	{"bad unserializable", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"number","unserializableValue":"1e999"}}}}`, RejectMalformed},
	{"preview too deep", famRuntime, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","evaluate":{"result":{"type":"object","preview":{"type":"object","overflow":false,"properties":[{"name":"a","type":"object","valuePreview":{"type":"object","overflow":false,"properties":[{"name":"b","type":"object","valuePreview":{"type":"object","overflow":false,"properties":[{"name":"c","type":"object","valuePreview":{"type":"object","overflow":false,"properties":[]}}]}}]}}]}}}}}`, RejectOversized},
	{"cancel", famRuntime, `{"v":1,"type":"runtime.cancel",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate"}}`, ""},
	{"runtime ack", famRuntime, `{"v":1,"type":"runtime.ack",` + env + `,"body":{"session":"s1","id":7,"method":"evaluate","accepted":true}}`, ""},
	{"ack without session", famRuntime, `{"v":1,"type":"runtime.ack",` + env + `,"body":{"session":"","id":7,"method":"evaluate","accepted":true}}`, RejectMalformed},

	// Console.
	{"console.enable", famConsole, `{"v":1,"type":"console.enable",` + env + `,"body":{"session":"s1"}}`, ""},
	{"console.disable", famConsole, `{"v":1,"type":"console.disable",` + env + `,"body":{"session":"s1"}}`, ""},
	{"console.discard", famConsole, `{"v":1,"type":"console.discard",` + env + `,"body":{"session":"s1"}}`, ""},
	{"console.enable no session", famConsole, `{"v":1,"type":"console.enable",` + env + `,"body":{}}`, RejectMalformed},
	{"console event", famConsole, appendFrame("c1", 3, 1, 0, consoleItem), ""},
	{"console event with handles", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"session":"s1","type":"table","args":[{"type":"object","subtype":"array","handle":"h:1","description":"Array(2)","preview":{"type":"object","subtype":"array","description":"Array(2)","overflow":false,"properties":[{"name":"0","type":"number","value":"1"}]}}],"timestamp":1,"context":"ctx","url":"http://x/"}}`), ""},
	{"console handle without session", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"type":"log","args":[{"type":"object","handle":"h:1"}],"timestamp":1}}`), RejectMalformed},
	{"console unknown type", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"type":"shout","args":[],"timestamp":1}}`), RejectMalformed},
	{"console negative line", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"type":"log","args":[],"timestamp":1,"stackTrace":{"callFrames":[{"functionName":"","url":"","lineNumber":-1,"columnNumber":0}]}}}`), RejectMalformed},
	{"console too many args", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"type":"log","args":[`+strings.Repeat(`{"type":"undefined"},`, MaxConsoleArgs)+`{"type":"undefined"}],"timestamp":1}}`), RejectOversized},
	{"console negative timestamp", famConsole, appendFrame("c1", 3, 1, 0, `{"console":{"type":"log","args":[],"timestamp":-1}}`), RejectMalformed},

	// Fetch (docs/protocol.md "Items and topics": kind, stackTrace, bodiesNotRead are optional).
	{"fetch request", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[{"name":"a","value":"b"}]}}}`), ""},
	{"fetch body", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"body","timestamp":5,"body":{"part":"response","offset":0,"data":"aGVsbG8="}}}`), ""},
	{"fetch phase mismatch", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"response","timestamp":5,"body":{"part":"response","offset":0,"data":""}}}`), RejectMalformed},
	{"fetch request kind xhr", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f2","phase":"request","timestamp":5,"request":{"url":"http://x/a","method":"POST","headers":[],"hasBody":true,"kind":"xhr"}}}`), ""},
	{"fetch request http stack", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f3","phase":"request","timestamp":5.5,"request":{"url":"http://x/b","method":"GET","headers":[],"kind":"http","bodiesNotRead":true,"stackTrace":{"callFrames":[{"functionName":"load","scriptId":"12","url":"file:///app/main.js","lineNumber":3,"columnNumber":9}]}}}}`), ""},
	{"fetch request unknown kind", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"kind":"websocket"}}}`), RejectMalformed},
	{"fetch request empty kind", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"kind":""}}}`), RejectMalformed},
	{"fetch request bad stack", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"stackTrace":{"callFrames":[{"functionName":"","url":"","lineNumber":-1,"columnNumber":0}]}}}}`), RejectMalformed},
	{"fetch request stack too deep", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"stackTrace":{"callFrames":[`+strings.Repeat(`{"functionName":"f","url":"u","lineNumber":1,"columnNumber":1},`, MaxStackFrames)+`{"functionName":"f","url":"u","lineNumber":1,"columnNumber":1}]}}}}`), RejectOversized},
	{"fetch request unknown member", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"bodiesRead":true}}}`), RejectMalformed},
	{"fetch bodiesNotRead not bool", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"request","timestamp":5,"request":{"url":"http://x/","method":"GET","headers":[],"bodiesNotRead":"yes"}}}`), RejectMalformed},
	{"fetch response redirected", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"response","timestamp":6,"response":{"url":"http://x/final","status":200,"statusText":"OK","headers":[{"name":"content-type","value":"text/plain"}],"redirected":true,"type":"basic"}}}`), ""},
	{"fetch finished truncated", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"finished","timestamp":7,"finished":{"requestBytes":0,"responseBytes":2000000,"responseTruncated":true}}}`), ""},
	{"fetch failed aborted", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"failed","timestamp":7,"failed":{"message":"This operation was aborted","aborted":true}}}`), ""},
	{"fetch failed refused", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"failed","timestamp":7,"failed":{"message":"fetch failed: connect ECONNREFUSED 127.0.0.1:9"}}}`), ""},
	{"fetch body negative offset", famFetch, appendFrame("c1", 3, 1, 0, `{"fetch":{"id":"f1","phase":"body","timestamp":5,"body":{"part":"request","offset":-1,"data":""}}}`), RejectMalformed},

	// Script reads.
	{"script.read", famScript, `{"v":1,"type":"script.read",` + env + `,"body":{"id":1,"url":"http://x/client.js","content":true}}`, ""},
	{"script.meta", famScript, `{"v":1,"type":"script.meta",` + env + `,"body":{"id":1,"url":"http://x/client.js","length":5,"sourceMapURL":"client.js.map"}}`, ""},
	{"script.chunk", famScript, `{"v":1,"type":"script.chunk",` + env + `,"body":{"id":1,"offset":0,"data":"aGVsbG8="}}`, ""},
	{"script.chunk bad base64", famScript, `{"v":1,"type":"script.chunk",` + env + `,"body":{"id":1,"offset":0,"data":"!!"}}`, RejectMalformed},
	{"script.chunk negative offset", famScript, `{"v":1,"type":"script.chunk",` + env + `,"body":{"id":1,"offset":-1,"data":""}}`, RejectMalformed},
	{"script.end", famScript, `{"v":1,"type":"script.end",` + env + `,"body":{"id":1,"length":5}}`, ""},
	{"script.end error", famScript, `{"v":1,"type":"script.end",` + env + `,"body":{"id":1,"length":0,"error":{"code":"no-such-script","message":"not served"}}}`, ""},
	{"script.meta too long", famScript, `{"v":1,"type":"script.meta",` + env + `,"body":{"id":1,"url":"u","length":16777217}}`, RejectOversized},

	// Queries.
	{"dom.event", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":3,"events":[{"kind":"childNodeInserted","parent":4,"previous":5,"inserted":{"nodeId":9,"nodeType":1,"nodeName":"DIV","localName":"div","attributes":["id","x"]}},{"kind":"attributeModified","node":9,"name":"class","value":"a"},{"kind":"childNodeRemoved","parent":4,"node":5},{"kind":"setChildNodes","parent":9,"nodes":[{"nodeId":10,"nodeType":3,"nodeName":"#text","nodeValue":"hi"}]},{"kind":"documentUpdated"}]}}`, ""},
	{"dom.event no doc", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":0,"events":[{"kind":"documentUpdated"}]}}`, RejectMalformed},
	{"dom.event bad kind", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"nodeExploded"}]}}`, RejectMalformed},
	{"dom.event members of another kind", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"attributeRemoved","node":3,"name":"a","value":"v"}]}}`, RejectMalformed},
	{"dom.event odd attributes", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"childNodeInserted","parent":1,"inserted":{"nodeId":2,"nodeType":1,"nodeName":"P","attributes":["id"]}}]}}`, RejectMalformed},
	{"dom.event node type", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"setChildNodes","parent":1,"nodes":[{"nodeId":2,"nodeType":13,"nodeName":"X"}]}]}}`, RejectMalformed},
	{"runtime.command domChildren", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"depth":1}}}`, ""},
	{"runtime.command domEdit", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"doc":2,"node":7,"edit":"setAttributeValue","name":"id","value":"x"}}}`, ""},
	{"runtime.command domPush handle", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPush","domPush":{"doc":2,"handle":"h:3"}}}`, ""},
	{"runtime.command domPush both", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPush","domPush":{"doc":2,"handle":"h:3","nodes":[1]}}}`, RejectMalformed},
	{"runtime.command domChildren edit", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"edit":"removeNode"}}}`, RejectMalformed},
	{"runtime.command dom two members", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1},"domDisable":{"doc":2}}}`, RejectMalformed},
	{"runtime.result domChildren", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"children":[{"parent":1,"nodes":[{"nodeId":2,"nodeType":10,"nodeName":"html","publicId":"","systemId":""},{"nodeId":3,"nodeType":1,"nodeName":"HTML","localName":"html","childNodeCount":2}]}]}}}`, ""},
	{"runtime.result domPush", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domPush","domPush":{"nodes":[7],"children":[{"parent":1,"nodes":[{"nodeId":7,"nodeType":1,"nodeName":"HTML"}]}]}}}`, ""},
	{"runtime.result domOuterHTML", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domOuterHTML","domOuterHTML":{"html":["<p>","</p>"]}}}`, ""},
	{"runtime.result domEdit with node", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"nodes":[1]}}}`, RejectMalformed},
	{"runtime.result domDescribe zero id", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":0,"nodeType":1,"nodeName":"P"}}}}`, RejectMalformed},
	{"runtime.command domSearch", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domSearch","domSearch":{"doc":2,"search":"s1","text":"li.item"}}}`, ""},
	{"runtime.command domSearch with a node", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domSearch","domSearch":{"doc":2,"search":"s1","text":"x","node":3}}}`, RejectMalformed},
	{"runtime.command domResults", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domResults","domResults":{"doc":2,"search":"s1","from":3,"to":4}}}`, ""},
	{"runtime.command domResults empty range", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domResults","domResults":{"doc":2,"search":"s1","from":4,"to":4}}}`, RejectMalformed},
	{"runtime.command domChildren with search", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"search":"s1"}}}`, RejectMalformed},
	{"runtime.result domSearch", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domSearch","domSearch":{"count":12}}}`, ""},
	{"runtime.result domSearch none", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domSearch","domSearch":{}}}`, ""},
	{"runtime.command domCSS matched", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"doc":2,"css":"matched","node":7}}}`, ""},
	{"runtime.command domCSS setStyle", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"doc":2,"css":"setStyle","sheet":"s1","line":3,"text":"color: red;"}}}`, ""},
	{"runtime.command domCSS unknown query", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"doc":2,"css":"hover","node":7}}}`, RejectMalformed},
	{"runtime.command domCSS without css", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"doc":2,"node":7}}}`, RejectMalformed},
	{"runtime.command domCSS forged sheet", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"doc":2,"css":"sheetText","sheet":"3.s1"}}}`, RejectMalformed},
	{"dom.event shadow root pushed", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"shadowRootPushed","parent":4,"inserted":{"nodeId":9,"nodeType":11,"nodeName":"#document-fragment","shadowRootType":"closed"}},{"kind":"nodeHighlightRequested","node":9}]}}`, ""},
	{"dom.event shadow root pushed without type", famDOM, `{"v":1,"type":"dom.event",` + env + `,"body":{"session":"w1","doc":1,"events":[{"kind":"shadowRootPushed","parent":4,"inserted":{"nodeId":9,"nodeType":11,"nodeName":"#document-fragment"}}]}}`, RejectMalformed},
	{"runtime.result domDescribe trees", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":3,"nodeType":1,"nodeName":"IFRAME","shadowRoots":[{"nodeId":4,"nodeType":11,"nodeName":"#document-fragment","shadowRootType":"open"}],"templateContent":{"nodeId":5,"nodeType":11,"nodeName":"#document-fragment"},"contentDocument":{"nodeId":6,"nodeType":9,"nodeName":"#document"}}}}}`, ""},
	{"runtime.result domDescribe shadowRootType on an element", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":3,"nodeType":1,"nodeName":"P","shadowRootType":"open"}}}}`, RejectMalformed},
	{"runtime.result domDescribe two shadow roots", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":3,"nodeType":1,"nodeName":"P","shadowRoots":[{"nodeId":4,"nodeType":11,"nodeName":"#document-fragment","shadowRootType":"open"},{"nodeId":5,"nodeType":11,"nodeName":"#document-fragment","shadowRootType":"open"}]}}}}`, RejectMalformed},
	{"runtime.result domDescribe contentDocument not a document", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":3,"nodeType":1,"nodeName":"IFRAME","contentDocument":{"nodeId":6,"nodeType":11,"nodeName":"#document-fragment"}}}}}`, RejectMalformed},
	{"runtime.command domChildren pierce", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"depth":-1,"pierce":true}}}`, ""},
	{"runtime.command domEdit pierce", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"doc":2,"node":7,"edit":"removeNode","pierce":true}}}`, RejectMalformed},
	{"runtime.command domOverlay rect", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"rect","rect":[1,2,3.5,4],"colors":["rgba(255, 0, 0, 1)","transparent"]}}}`, ""},
	{"runtime.command domOverlay rect of three", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"rect","rect":[1,2,3],"colors":["red","blue"]}}}`, RejectMalformed},
	{"runtime.command domOverlay highlight with rect", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"highlight","node":3,"rect":[1,2,3,4],"colors":["red","blue"]}}}`, RejectMalformed},
	{"runtime.command domChildren with css", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"css":"matched"}}}`, RejectMalformed},
	{"runtime.result domCSS computed", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"computed":[{"name":"color","value":"red"}]}}}}`, ""},
	{"runtime.result domCSS unknown member", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"computed":[{"name":"color","value":"red","x":1}]}}}}`, RejectMalformed},
	{"runtime.result domCSS without css", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"count":1}}}`, RejectMalformed},
	{"runtime.result domEdit with css", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"css":{}}}}`, RejectMalformed},
	{"runtime.result domEdit with count", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"count":1}}}`, RejectMalformed},
	{"runtime.command domBox", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domBox","domBox":{"doc":2,"node":7}}}`, ""},
	{"runtime.command domBox no node", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domBox","domBox":{"doc":2}}}`, RejectMalformed},
	{"runtime.command domOverlay highlight", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"highlight","handle":"h:3"}}}`, ""},
	{"runtime.command domOverlay hide", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"hide"}}}`, ""},
	{"runtime.command domOverlay hide with node", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"hide","node":7}}}`, RejectMalformed},
	{"runtime.command domOverlay unknown", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{"doc":2,"overlay":"paint","node":7}}}`, RejectMalformed},
	{"runtime.command domChildren with overlay", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"overlay":"hide"}}}`, RejectMalformed},
	{"runtime.result domBox", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domBox","domBox":{"box":{"content":[1,2,3,2,3,4,1,4],"padding":[1,2,3,2,3,4,1,4],"border":[1,2,3,2,3,4,1,4],"margin":[1,2,3,2,3,4,1,4],"width":2,"height":2}}}}`, ""},
	{"runtime.result domBox short quad", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domBox","domBox":{"box":{"content":[1,2],"padding":[1,2,3,2,3,4,1,4],"border":[1,2,3,2,3,4,1,4],"margin":[1,2,3,2,3,4,1,4],"width":2,"height":2}}}}`, RejectMalformed},
	{"runtime.result domEdit with box", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"box":{"content":[1,2,3,2,3,4,1,4],"padding":[1,2,3,2,3,4,1,4],"border":[1,2,3,2,3,4,1,4],"margin":[1,2,3,2,3,4,1,4],"width":2,"height":2}}}}`, RejectMalformed},
	{"runtime.command domPlace moveTo", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"doc":2,"node":7,"edit":"moveTo","nodes":[3,9]}}}`, ""},
	{"runtime.command domPlace moveTo without target", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"doc":2,"node":7,"edit":"moveTo"}}}`, RejectMalformed},
	{"runtime.command domPlace setNodeName without name", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"doc":2,"node":7,"edit":"setNodeName"}}}`, RejectMalformed},
	{"runtime.command domEdit moveTo", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"doc":2,"node":7,"edit":"moveTo","nodes":[3]}}}`, RejectMalformed},
	{"runtime.command domPlace removeNode", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"doc":2,"node":7,"edit":"removeNode"}}}`, RejectMalformed},
	{"runtime.result domPlace", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"nodes":[12],"children":[{"parent":3,"nodes":[{"nodeId":12,"nodeType":1,"nodeName":"I"}]}]}}}`, ""},
	{"runtime.result domPlace two nodes", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domPlace","domPlace":{"nodes":[12,13]}}}`, RejectMalformed},
	{"runtime.command domLocate", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domLocate","domLocate":{"doc":2,"x":10.5,"y":3,"ignorePointerEventsNone":true}}}`, ""},
	{"runtime.command domLocate with node", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domLocate","domLocate":{"doc":2,"x":1,"y":1,"node":3}}}`, RejectMalformed},
	{"runtime.command domChildren with x", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domChildren","domChildren":{"doc":2,"node":1,"x":4}}}`, RejectMalformed},
	{"runtime.result domLocate none", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domLocate","domLocate":{}}}`, ""},
	{"runtime.command domClasses", famDOM, `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":4,"method":"domClasses","domClasses":{"doc":2,"node":3}}}`, ""},
	{"runtime.result domClasses", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domClasses","domClasses":{"classNames":["a","b"]}}}`, ""},
	{"runtime.result domEdit with classNames", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domEdit","domEdit":{"classNames":["a"]}}}`, RejectMalformed},
	{"runtime.result domOverlay", famDOM, `{"v":1,"type":"runtime.result",` + env + `,"body":{"session":"w1","id":4,"method":"domOverlay","domOverlay":{}}}`, ""},
	{"query.request", famQuery, `{"v":1,"type":"query.request",` + env + `,"body":{"session":"s1","id":1,"name":"cordis.context","params":{"handle":"h:1"}}}`, ""},
	{"query.result", famQuery, `{"v":1,"type":"query.result",` + env + `,"body":{"session":"s1","id":1,"name":"cordis.context","result":{"node":12}}}`, ""},
	{"query.result error", famQuery, `{"v":1,"type":"query.result",` + env + `,"body":{"id":1,"name":"cordis.context","error":{"code":"unsupported"}}}`, ""},
	{"query.result both", famQuery, `{"v":1,"type":"query.result",` + env + `,"body":{"id":1,"name":"q","result":1,"error":{"code":"internal"}}}`, RejectMalformed},
	{"query bad name", famQuery, `{"v":1,"type":"query.request",` + env + `,"body":{"id":1,"name":"no spaces"}}`, RejectMalformed},
}

func TestDecodeTable(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Decode([]byte(tc.frame))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				checkRoundTrip(t, []byte(tc.frame), f)
				return
			}
			var rerr *RejectError
			if !errors.As(err, &rerr) || rerr.Code != tc.want {
				t.Fatalf("Decode error = %v, want code %s", err, tc.want)
			}
			if !errors.Is(err, codeSentinels[tc.want]) {
				t.Fatalf("errors.Is(%v, sentinel of %s) is false", err, tc.want)
			}
		})
	}
}

// checkRoundTrip re-encodes a decoded frame and decodes it again: the
// encoder must produce what the decoder accepts, and the second encoding
// must equal the first (the canonical form is a fixed point).
func checkRoundTrip(t testing.TB, in []byte, f Frame) {
	t.Helper()
	out, err := Marshal(Header{Source: f.Source, Gen: f.Gen, Seq: f.Seq}, f.Body)
	if err != nil {
		t.Fatalf("re-encode %s: %v\ninput: %.300s", f.Type, err, in)
	}
	g, err := Decode(out)
	if err != nil {
		t.Fatalf("decode of re-encoded %s: %v\n%s", f.Type, err, out)
	}
	out2, err := Marshal(Header{Source: g.Source, Gen: g.Gen, Seq: g.Seq}, g.Body)
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("encoding not stable (%v):\n%s\n%s", err, out, out2)
	}
}

func TestRejectErrorText(t *testing.T) {
	// Rejects never quote the frame: a token in a bad hello stays out of logs.
	_, err := Decode([]byte(`{"v":1,"type":"hello","source":"c1","body":{"role":"client","token":"SECRET-TOKEN","capabilities":[],"topics":[],"agent":{"name":"x","version":"1"},"junk":"SECRET-TOKEN"}}`))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v", err)
	}
	e := overLimit("MaxFrameBytes", MaxFrameBytes)
	if got := e.Error(); got != "sourceproto: oversized: over MaxFrameBytes (MaxFrameBytes 1048576)" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestEnvelopeAnyMemberOrder(t *testing.T) {
	a, err := DecodeEnvelope([]byte(` { "body" : {"code":"normal"} , "gen":3, "source":"c1", "type":"close", "v":1 } `))
	if err != nil || a.Type != FrameClose || a.Gen != 3 || a.Source != "c1" || string(a.Body) != `{"code":"normal"}` {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestSecretRedacted(t *testing.T) {
	f, err := Decode([]byte(helloFrame("c1", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Body.(*Hello)
	for _, s := range []string{h.Token.String(), strings.TrimSpace(sprint(h)), sprintGo(h)} {
		if strings.Contains(s, "tok") && !strings.Contains(s, "redacted") {
			t.Fatalf("token printed: %s", s)
		}
	}
	tok, err := NewToken()
	if err != nil || len(tok.Reveal()) < 22 || tok.Matches(Secret("x")) || !tok.Matches(Secret(tok.Reveal())) {
		t.Fatalf("token: %v", err)
	}
	if strings.Contains(sprint(tok)+sprintGo(tok), tok.Reveal()) || (Token{}).Matches(Secret("")) {
		t.Fatal("token printed or zero token matched")
	}
}
