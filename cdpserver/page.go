package cdpserver

import (
	"net/url"
	"path"

	"github.com/chromedp/cdproto/cdp"

	"github.com/inspector-worker/inspector-worker/cdpproject"
)

// The page-target scaffold: the worker is one "page" whose main frame is the
// host. Its frame id is the target id (as in Chrome), and every host
// execution context names it in auxData.frameId (hostrealm/rewrite.go), which
// is how the frontend ties the Console's context to the frame.

// mainFrame describes the host as the page's main frame. Its URL is the host
// script's directory, not the script itself: when frame and script share a
// URL, Sources lists the script twice.
func (s *Server) mainFrame() cdpproject.Frame {
	u := s.hostInfo.URL
	frameURL := "node://host/"
	if pu, err := url.Parse(u); err == nil && pu.Scheme == "file" && pu.Path != "" {
		frameURL = (&url.URL{Scheme: "file", Path: path.Dir(pu.Path) + "/"}).String()
	}
	return cdpproject.Frame{
		ID:             cdp.FrameID(s.targetID),
		LoaderID:       cdp.LoaderID(s.targetID),
		Name:           s.hostInfo.Title,
		URL:            frameURL,
		SecurityOrigin: "file://",
		MimeType:       "text/html",
	}
}

// hostContextName is the label of the host's context in the Console's
// context selector: the script's file name, or "Host" when Node reported no
// script file (node -e, a REPL).
func (s *Server) hostContextName() string {
	if u, err := url.Parse(s.hostInfo.URL); err == nil && u.Scheme == "file" && u.Path != "" && path.Base(u.Path) != "/" {
		return path.Base(u.Path)
	}
	return "Host"
}

// resourceTree answers Page.getResourceTree: the host as the main frame, one
// child frame per client page.
func (s *Server) resourceTree(children []cdpproject.FrameTree) []byte {
	main := s.mainFrame()
	return cdpproject.ResourceTree(cdpproject.FrameTree{Frame: main, Resources: hostFrameResources(main), ChildFrames: children})
}

// hostFrameResources lists the host frame's own URL (the script's
// directory) as a resource of type Other. The frontend gives every frame a
// Document resource for its URL unless the tree already lists that URL, and
// Sources shows Documents: the directory appeared in the navigator and
// opening it asked Page.getResourceContent, which has nothing to read (there
// is no host document), so the user saw "'Page.getResourceContent' wasn't
// found". Sources leaves Other resources out.
func hostFrameResources(main cdpproject.Frame) []cdpproject.FrameResource {
	return []cdpproject.FrameResource{{URL: main.URL, Type: "Other", MimeType: "text/directory"}}
}

func (s *Server) frameTreeAnswer() []byte { return cdpproject.FrameTreeAnswer(s.mainFrame()) }

// targetInfo answers Target.getTargetInfo.
func (s *Server) targetInfo() []byte {
	return cdpproject.TargetInfo(s.targetID, s.hostInfo.Title, s.hostInfo.URL)
}

// pageFrameTree answers Page.getFrameTree: the host's frame alone (client
// frames are in Page.getResourceTree).
func pageFrameTree(s *Session, req request) {
	s.enqueue(appendResult(nil, req.ID, s.srv.frameTreeAnswer()))
}

// targetGetInfo answers Target.getTargetInfo.
func targetGetInfo(s *Session, req request) { s.enqueue(appendResult(nil, req.ID, s.srv.targetInfo())) }
