package cdpproject

import (
	"github.com/chromedp/cdproto/cdp"
	cdpnet "github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	cdptarget "github.com/chromedp/cdproto/target"
)

// Frame is a Page.Frame as the worker describes one: cdp.Frame's members
// minus those it has no value for. cdp.Frame sends domainAndRegistry,
// secureContextType, crossOriginIsolatedContextType and gatedAPIFeatures
// even when empty; the worker knows none of them for a page it did not
// load, and an empty enum is not a value the frontend expects.
type Frame struct {
	ID             cdp.FrameID  `json:"id"`
	ParentID       cdp.FrameID  `json:"parentId,omitempty"`
	LoaderID       cdp.LoaderID `json:"loaderId"`
	Name           string       `json:"name,omitempty"`
	URL            string       `json:"url"`
	SecurityOrigin string       `json:"securityOrigin"`
	MimeType       string       `json:"mimeType"`
}

// FrameResource is a Page.FrameResource without failed/canceled, which
// the worker never knows.
type FrameResource struct {
	URL      string              `json:"url"`
	Type     cdpnet.ResourceType `json:"type"`
	MimeType string              `json:"mimeType"`
}

// FrameTree is a Page.FrameResourceTree of Frames.
type FrameTree struct {
	Frame       Frame           `json:"frame"`
	Resources   []FrameResource `json:"resources"`
	ChildFrames []FrameTree     `json:"childFrames,omitempty"`
}

// ResourceTree is Page.getResourceTree's answer.
func ResourceTree(t FrameTree) []byte {
	if t.Resources == nil {
		t.Resources = []FrameResource{} // the frontend iterates it unchecked
	}
	return mustMarshal(struct {
		FrameTree FrameTree `json:"frameTree"`
	}{t})
}

// FrameTreeAnswer is Page.getFrameTree's answer for a single frame.
func FrameTreeAnswer(f Frame) []byte {
	type tree struct {
		Frame Frame `json:"frame"`
	}
	return mustMarshal(struct {
		FrameTree tree `json:"frameTree"`
	}{tree{f}})
}

// FrameAttached is Page.frameAttached.
func FrameAttached(id, parent string) []byte {
	return Event("Page.frameAttached", &cdppage.EventFrameAttached{FrameID: cdp.FrameID(id), ParentFrameID: cdp.FrameID(parent)})
}

// FrameNavigated is Page.frameNavigated for a navigation.
func FrameNavigated(f Frame) []byte {
	return Event("Page.frameNavigated", &struct {
		Frame Frame                  `json:"frame"`
		Type  cdppage.NavigationType `json:"type"`
	}{f, cdppage.NavigationTypeNavigation})
}

// DocumentOpened is Page.documentOpened.
func DocumentOpened(f Frame) []byte {
	return Event("Page.documentOpened", &struct {
		Frame Frame `json:"frame"`
	}{f})
}

// FrameDetached is Page.frameDetached of a frame that is gone.
func FrameDetached(id string) []byte {
	return Event("Page.frameDetached", &cdppage.EventFrameDetached{FrameID: cdp.FrameID(id), Reason: cdppage.FrameDetachedReasonRemove})
}

// Answers with a page file's text. Local types: cdproto's results omit an
// empty source (scriptSource is omitempty) and carry content as []byte,
// which encodes as base64.
type scriptSourceAnswer struct {
	ScriptSource string `json:"scriptSource"`
}

type resourceContentAnswer struct {
	Content       string `json:"content"`
	Base64Encoded bool   `json:"base64Encoded"`
}

// ScriptSource is Debugger.getScriptSource's answer; invalid UTF-8 in the
// page's file becomes U+FFFD.
func ScriptSource(src []byte) []byte { return mustMarshal(&scriptSourceAnswer{string(src)}) }

// ResourceContent is Page.getResourceContent's answer for a text file.
func ResourceContent(src []byte) []byte {
	return mustMarshal(&resourceContentAnswer{Content: string(src)})
}

// TargetInfo is Target.getTargetInfo's answer for the worker's one page
// target (attached: the asking window is attached to it).
func TargetInfo(id, title, url string) []byte {
	return mustMarshal(&cdptarget.GetTargetInfoResult{TargetInfo: &cdptarget.Info{
		TargetID: cdptarget.ID(id), Type: "page", Title: title, URL: url, Attached: true}})
}
