package emulator

import (
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// Files people attach, and the files the bot uploads once they are shared:
// the emulator keeps them in one store, shows
// them in a message's files[] (a message event of subtype file_share, and
// an app_mention carrying them), describes them with files.info and serves
// their bytes at url_private_download — only to a request carrying the bot
// token, as Slack does; anything else is sent to a sign-in page.

// File is an attached file as Slack describes it in files[] and files.info.
type File struct {
	ID       string
	Name     string
	Title    string
	Mimetype string
	Filetype string
	User     string
	Size     int
	Created  int64
	// URLPrivate and URLPrivateDownload point at the emulator unless the
	// test gave URLPrivateDownload another address.
	URLPrivate, URLPrivateDownload string
}

// NewFile is what a test attaches: AddFile stores it.
type NewFile struct {
	Name     string
	Mimetype string // default application/octet-stream
	Filetype string // default the name's extension
	User     string // who uploaded it
	Data     []byte
	// URLPrivateDownload, when set, is the address files[] shows instead
	// of the emulator's own (a file pointing off Slack's host).
	URLPrivateDownload string
	// RedirectTo, when set, makes the download answer 302 to it (after the
	// token check), as a CDN hop would.
	RedirectTo string
}

// Download is one request for a file's bytes.
type Download struct {
	FileID string
	// Token is the bearer token the request carried ("" without one).
	Token string
	// Status is what the emulator answered: 200, 302 (to the sign-in page
	// or RedirectTo) or 404.
	Status int
	At     time.Time
}

type storedFile struct {
	File
	data       []byte
	redirectTo string
}

// AddFile stores a file uploaded by f.User and returns its description, for
// Share and for the test's own checks.
func (s *Server) AddFile(f NewFile) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.User != "" {
		s.ensureUser(f.User)
	}
	if f.Mimetype == "" {
		f.Mimetype = "application/octet-stream"
	}
	if f.Filetype == "" {
		f.Filetype = strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), ".")
	}
	file := s.storeFile(s.nextID("F"), f.Name, f.Name, f.Mimetype, f.Filetype, f.User, f.Data)
	if f.URLPrivateDownload != "" || f.RedirectTo != "" {
		sf := s.files[file.ID]
		if f.URLPrivateDownload != "" {
			sf.URLPrivateDownload = f.URLPrivateDownload
		}
		sf.redirectTo = f.RedirectTo
		file = sf.File
	}
	s.notify()
	return file
}

// storeFile keeps a file under id, served from the emulator's file host,
// and returns its description; s.mu held. Files people attach and files
// the bot uploads are kept alike.
func (s *Server) storeFile(id, name, title, mimetype, filetype, user string, data []byte) File {
	base := s.url + "/files-pri/" + s.opts.TeamID + "-" + id + "/"
	escaped := url.PathEscape(name)
	file := File{ID: id, Name: name, Title: title, Mimetype: mimetype, Filetype: filetype, User: user,
		Size: len(data), Created: time.Now().Unix(), URLPrivate: base + escaped, URLPrivateDownload: base + "download/" + escaped}
	if s.files == nil {
		s.files = map[string]*storedFile{}
	}
	s.files[id] = &storedFile{File: file, data: data}
	return file
}

// Share posts text with files as user in the thread threadTS of channel
// ("" for a top-level message): a message event of subtype file_share with
// files[], plus an app_mention carrying them when the text mentions the
// bot outside a DM. Each file comes from AddFile.
func (s *Server) Share(channel, threadTS, user, text string, files ...File) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.ensureChannel(channel)
	return s.userMessage(c, threadTS, user, text, files...).TS
}

// ShareDM sends text with files from user to the bot in their DM and
// returns the channel id and the message ts.
func (s *Server) ShareDM(user, text string, files ...File) (channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.imWith(user)
	return c.id, s.userMessage(c, "", user, text, files...).TS
}

// Downloads lists the requests for files' bytes, oldest first.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.downloads...)
}

// filesJSON is files as files[] shows them.
func filesJSON(files []File) []map[string]any {
	out := make([]map[string]any, 0, len(files))
	for _, f := range files {
		out = append(out, fileJSON(f))
	}
	return out
}

func fileJSON(f File) map[string]any {
	return map[string]any{
		"id": f.ID, "name": f.Name, "title": f.Title, "mimetype": f.Mimetype, "filetype": f.Filetype,
		"pretty_type": strings.ToUpper(f.Filetype), "user": f.User, "size": f.Size, "created": f.Created, "timestamp": f.Created,
		"mode": "hosted", "is_external": false, "url_private": f.URLPrivate, "url_private_download": f.URLPrivateDownload,
	}
}

// filesInfo describes one file, as files.info does (without comments).
func (s *Server) filesInfo(p url.Values) (result, *apiError) {
	f, ok := s.files[p.Get("file")]
	if !ok {
		return nil, fail("file_not_found")
	}
	return result{"file": fileJSON(f.File), "comments": []any{}, "response_metadata": map[string]any{"next_cursor": ""}}, nil
}

// serveFile answers a download at /files-pri/<team>-<id>/[download/]<name>:
// the bytes to the bot token, a redirect to the sign-in page to anyone
// else (Slack answers a browser without a session the same way).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	team, id, _ := strings.Cut(strings.SplitN(rest, "/", 2)[0], "-")
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	f, ok := s.files[id]
	status := http.StatusOK
	switch {
	case !ok || team != s.opts.TeamID:
		status = http.StatusNotFound
	case token != s.opts.BotToken:
		status = http.StatusFound
	case f.redirectTo != "":
		status = http.StatusFound
	}
	s.downloads = append(s.downloads, Download{FileID: id, Token: token, Status: status, At: time.Now()})
	s.notify()
	s.mu.Unlock()
	switch {
	case status == http.StatusNotFound:
		http.NotFound(w, r)
	case token != s.opts.BotToken:
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	case status == http.StatusFound:
		http.Redirect(w, r, f.redirectTo, http.StatusFound)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
		_, _ = w.Write(f.data)
	}
}

// serveSignIn is the page a download without the bot token lands on.
func serveSignIn(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>Sign in | Slack</title></head><body>Sign in to your workspace.</body></html>"))
}

// FileData is a stored file's description and bytes (the playground shows
// pictures and offers downloads from it).
func (s *Server) FileData(id string) (File, []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	if !ok {
		return File{}, nil, false
	}
	return f.File, f.data, true
}
