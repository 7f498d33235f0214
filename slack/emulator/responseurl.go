package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// Slack's limits on a response_url.
const (
	responseURLPosts = 5
	responseURLTTL   = 30 * time.Minute
)

// responseURL is one issued response_url and what it is for.
type responseURL struct {
	kind, channel, user string
	messageTS           string // the message an interaction came from
	used                int
	expires             time.Time
}

// newResponseURL issues a response_url; s.mu held.
func (s *Server) newResponseURL(kind, channel, user, messageTS string) string {
	id := s.nextID("hook")
	s.responses[id] = &responseURL{kind: kind, channel: channel, user: user, messageTS: messageTS, expires: time.Now().Add(responseURLTTL)}
	return s.url + "/response/" + id
}

// serveResponseURL takes a POST to a response_url. Besides recording it, it
// does what Slack does with the common fields: an "in_channel" answer becomes
// a message by the bot, and replace_original / delete_original change the
// message an interaction came from.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ThreadTS        string          `json:"thread_ts"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ru, ok := s.responses[id]
	post := ResponseURLPost{URL: s.url + r.URL.Path, Body: body, At: time.Now()}
	status, code := http.StatusOK, ""
	switch {
	case !ok:
		status, code = http.StatusNotFound, "invalid_url"
	case time.Now().After(ru.expires):
		status, code = http.StatusNotFound, "expired_url"
	case ru.used >= responseURLPosts:
		status, code = http.StatusNotFound, "used_url"
	case json.Unmarshal(body, &msg) != nil:
		status, code = http.StatusBadRequest, "invalid_payload"
	}
	if ok {
		post.Kind, post.Channel, post.User = ru.kind, ru.channel, ru.user
	}
	if code == "" {
		ru.used++
		code = s.applyResponse(ru, msg.Text, msg.Blocks, msg.ThreadTS, msg.ResponseType, msg.ReplaceOriginal, msg.DeleteOriginal)
		if code != "" {
			status = http.StatusBadRequest
		}
	}
	post.Error = code
	s.posts = append(s.posts, post)
	s.notify()
	if code != "" {
		writeJSON(w, status, map[string]any{"ok": false, "error": code})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// applyResponse carries out a response_url post and returns a Slack error
// code, or "" on success; s.mu held.
func (s *Server) applyResponse(ru *responseURL, text string, blocks json.RawMessage, threadTS, responseType string, replace, del bool) string {
	c := s.channels[ru.channel]
	if c == nil {
		return "channel_not_found"
	}
	if len(blocks) > 0 && string(blocks) != "null" {
		if aerr := checkBlocks(blocks); aerr != nil {
			return aerr.code
		}
	} else {
		blocks = nil
	}
	if blockkitLen(text) > maxTextLen {
		return "msg_too_long"
	}
	if orig := c.find(ru.messageTS); orig != nil && (replace || del) {
		if del {
			orig.Deleted = true
			return ""
		}
		orig.History = append(orig.History, Version{Text: orig.Text, Blocks: orig.Blocks, At: time.Now()})
		orig.Text, orig.Blocks = text, blocks
		return ""
	}
	if text == "" && blocks == nil {
		return "no_text"
	}
	if responseType == "in_channel" {
		s.addMessage(c, s.nextTS(), threadTS, s.opts.BotUserID, text, blocks)
		return ""
	}
	s.ephemerals = append(s.ephemerals, Ephemeral{Channel: c.id, User: ru.user, ThreadTS: threadTS, TS: s.nextTS(), Text: text, Blocks: blocks})
	return ""
}
