package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Files the bot uploads, in Slack's three steps: files.getUploadURLExternal
// reserves a file id and an upload URL for a declared length; the bytes are
// POSTed to that URL (raw, or as the multipart field "file" slack-go
// sends), and must be exactly that long; files.completeUploadExternal
// shares the uploaded files in a channel, or a thread of it, as one
// message of the bot's carrying them in files[], delivered as a message
// event of subtype file_share as Slack delivers it. A shared file joins the
// store of attached files: files.info describes it and url_private_download
// serves it to the bot token, like any other. Both methods need the
// files:write scope.

// MaxUploadBytes is the largest file Slack takes (1 GB).
const MaxUploadBytes = 1 << 30

// Upload is a file the bot uploaded.
type Upload struct {
	ID    string
	Name  string // the filename given to files.getUploadURLExternal
	Title string // the title given to files.completeUploadExternal
	Data  []byte // nil until the bytes were posted
	// Channel, ThreadTS and TS say where the file was shared: the channel,
	// the thread ("" at the top level) and the message that carries it.
	// Empty until files.completeUploadExternal shared it.
	Channel, ThreadTS, TS string
	// Comment is the initial_comment of the message that shared it.
	Comment string
	At      time.Time
}

// upload is an Upload as the emulator holds it, with its declared length.
type upload struct {
	Upload
	length    int
	posted    bool
	completed bool
}

// Uploads returns the files the bot shared in channel, in the order they
// were shared.
func (s *Server) Uploads(channel string) []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for _, u := range s.uploads {
		if u.completed && u.Channel == channel {
			c := u.Upload
			c.Data = slices.Clone(u.Data)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Upload) int { return strings.Compare(a.TS, b.TS) })
	return out
}

// filesGetUploadURLExternal reserves a file id and an upload URL.
func (s *Server) filesGetUploadURLExternal(p url.Values) (result, *apiError) {
	name := strings.TrimSpace(p.Get("filename"))
	length, err := strconv.Atoi(p.Get("length"))
	if name == "" || err != nil || length < 1 {
		return nil, fail("invalid_arguments")
	}
	if length > MaxUploadBytes {
		return nil, fail("file_too_large")
	}
	if s.uploads == nil {
		s.uploads = map[string]*upload{}
	}
	id := s.nextID("F")
	s.uploads[id] = &upload{Upload: Upload{ID: id, Name: name, Title: name}, length: length}
	return result{"upload_url": s.url + "/upload/v1/" + id, "file_id": id}, nil
}

// serveUpload takes the bytes of a reserved file: 200 "OK - <length>", as
// Slack answers, or 404 for an unknown id and 400 for bytes of another
// length than declared or a second post.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	data, err := uploadBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.uploads[id]
	switch {
	case !ok:
		http.Error(w, "upload not found", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "unreadable upload: "+err.Error(), http.StatusBadRequest)
		return
	case u.posted:
		http.Error(w, "already uploaded", http.StatusBadRequest)
		return
	case len(data) != u.length:
		http.Error(w, fmt.Sprintf("length mismatch: declared %d bytes, received %d", u.length, len(data)), http.StatusBadRequest)
		return
	}
	u.Data, u.posted = data, true
	s.notify()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(data))
}

// uploadBody reads an upload's bytes: the multipart field "file", or the
// whole body.
func uploadBody(r *http.Request) ([]byte, error) {
	body := io.LimitReader(r.Body, MaxUploadBytes+1)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(body)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no file field: %w", err)
		}
		if part.FormName() == "file" {
			return io.ReadAll(part)
		}
	}
}

// filesCompleteUploadExternal completes uploaded files and, with a
// channel_id, shares them in one message of the bot's.
func (s *Server) filesCompleteUploadExternal(p url.Values) (result, *apiError) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p.Get("files")), &files); err != nil || len(files) == 0 {
		return nil, fail("invalid_arguments")
	}
	var ups []*upload
	for _, f := range files {
		u, ok := s.uploads[f.ID]
		if !ok || !u.posted || u.completed {
			// Slack knows no file until its bytes have arrived.
			return nil, fail("file_not_found")
		}
		ups = append(ups, u)
	}
	var c *channel
	if id := p.Get("channel_id"); id != "" {
		var aerr *apiError
		if c, aerr = s.postTarget(id); aerr != nil {
			return nil, aerr
		}
	}
	threadTS := p.Get("thread_ts")
	if threadTS != "" && (c == nil || c.find(threadTS) == nil) {
		return nil, fail("invalid_thread_ts")
	}
	out := make([]map[string]any, 0, len(ups))
	for i, u := range ups {
		u.completed, u.At = true, time.Now()
		if t := strings.TrimSpace(files[i].Title); t != "" {
			u.Title = t
		}
		out = append(out, map[string]any{"id": u.ID, "title": u.Title})
	}
	if c != nil {
		s.shareUploads(c, threadTS, p.Get("initial_comment"), ups)
	}
	s.notify()
	return result{"files": out}, nil
}

// shareUploads posts the bot's message carrying ups; s.mu held.
func (s *Server) shareUploads(c *channel, threadTS, comment string, ups []*upload) {
	m := &Message{Channel: c.id, TS: s.nextTS(), ThreadTS: threadTS, User: s.opts.BotUserID, BotID: s.opts.BotID, Text: comment}
	if threadTS != "" {
		if root := c.find(threadTS); root != nil && root.ThreadTS == "" {
			root.ThreadTS = root.TS
		}
	}
	c.messages = append(c.messages, m)
	for _, u := range ups {
		u.Channel, u.ThreadTS, u.TS, u.Comment = c.id, threadTS, m.TS, comment
		m.Files = append(m.Files, s.storeFile(u.ID, u.Name, u.Title, mimetypeOf(u.Name),
			strings.TrimPrefix(extOf(u.Name), "."), s.opts.BotUserID, u.Data))
	}
	if c.member {
		ev := s.messageJSON(m)
		ev["subtype"] = "file_share"
		ev["channel"] = c.id
		ev["event_ts"] = m.TS
		ev["channel_type"] = c.kind()
		s.deliverEvent(ev)
	}
}

// mimetypeOf is the type Slack gives an uploaded file by its name.
func mimetypeOf(name string) string {
	switch extOf(name) {
	case ".md":
		return "text/markdown"
	case ".csv":
		return "text/csv"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}

// extOf is a file name's extension with its dot, lower case.
func extOf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return strings.ToLower(name[i:])
	}
	return ""
}
