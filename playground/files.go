package playground

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/slack/emulator"
)

// Files: the page attaches a file (its button, or a drop on a composer) by
// posting it to /attach, which puts it in the emulator's file store; the
// message that follows carries the ids, and the emulator shares the files
// with it as Slack does (files[], file_share). A message's files are drawn
// under it: pictures shown, anything else as a download. The bytes come
// from /file, to the page alone, with a policy that runs nothing in them.

// maxAttachBytes bounds one file the page attaches: past the bot's default
// limit, so that the bot's refusal can be seen too.
const maxAttachBytes = 32 << 20

// attachRequest is a file the page attaches. The page posts JSON only, so
// the bytes come in base64.
type attachRequest struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Data []byte `json:"data"`
}

// attachFile stores a file the page attaches and returns its id.
func (p *Playground) attachFile(w http.ResponseWriter, r *http.Request) {
	var req attachRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAttachBytes/3*4+1<<16)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	name := strings.TrimSpace(req.Name)
	if name == "" || len(name) > 255 {
		http.Error(w, "a file needs a name of at most 255 bytes", http.StatusBadRequest)
		return
	}
	f := p.srv.AddFile(emulator.NewFile{Name: name, Mimetype: req.Type, User: User, Data: req.Data})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": f.ID})
}

// sharedFiles are the files the page attached, by id.
func (p *Playground) sharedFiles(ids []string) ([]emulator.File, error) {
	out := make([]emulator.File, 0, len(ids))
	for _, id := range ids {
		f, _, ok := p.srv.FileData(id)
		if !ok || f.User != User {
			return nil, fmt.Errorf("no file %q was attached here", id)
		}
		out = append(out, f)
	}
	return out, nil
}

// file serves a file's bytes: a picture as itself, anything else as a
// download; never as something the browser would run.
func (p *Playground) file(w http.ResponseWriter, r *http.Request) {
	f, data, ok := p.srv.FileData(r.URL.Query().Get("id"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	if kind, mt := attach.Sniff(f.Name, f.Mimetype, data); kind == attach.KindImage {
		h.Set("Content-Type", mt)
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", "attachment")
	}
	_, _ = w.Write(data)
}

// fileView is one file under a message.
type fileView struct {
	Name, Size, URL string
	Image           bool
}

// fileViews are a message's files as the page draws them.
func (p *Playground) fileViews(files []emulator.File) []fileView {
	out := make([]fileView, 0, len(files))
	for _, f := range files {
		_, data, ok := p.srv.FileData(f.ID)
		kind := attach.KindOther
		if ok {
			kind, _ = attach.Sniff(f.Name, f.Mimetype, data)
		}
		out = append(out, fileView{Name: f.Name, Size: attach.FormatSize(int64(f.Size)),
			URL: "/file?id=" + f.ID + "&" + tokenParam + "=" + p.token, Image: kind == attach.KindImage})
	}
	return out
}
