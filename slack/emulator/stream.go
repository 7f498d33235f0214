package emulator

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Streamed messages: chat.startStream posts a message in a thread that
// chat.appendStream adds to while it is open and chat.stopStream ends,
// with Slack's rules — a thread to stream in; in a channel (not a DM) the
// asker as recipient_user_id and recipient_team_id, the asker a member of
// this workspace (a Slack Connect asker is user_not_found); at most 12,000
// characters of markdown_text per call; at most 50 blocks; appends and the
// stop only while the stream is open (message_not_in_streaming_state).
// Every chunk is kept, and the tasks and plan they draw, so tests read the
// timeline as Slack would draw it.

const (
	maxStreamMarkdown = 12000
	maxStreamBlocks   = 50
	maxTaskText       = 256
)

// Stream is a streamed message as the emulator holds it.
type Stream struct {
	Channel, TS, ThreadTS        string
	RecipientUser, RecipientTeam string
	TaskDisplayMode              string // "timeline" unless startStream said "plan"
	Open                         bool
	// Markdown is every markdown_text sent, in order.
	Markdown string
	// Chunks are every chunk sent, start to stop, as sent.
	Chunks []json.RawMessage
	// Tasks are the tasks the task_update chunks drew, each as its last
	// update left it, in the order they first appeared.
	Tasks []Task
	// Updates counts each task's task_update chunks, by id.
	Updates map[string]int
	Plan    string          // the last plan_update's title
	Blocks  json.RawMessage // the blocks the stop ended it with
	Appends int             // chat.appendStream calls taken
	// StoppedBy is the user whose Slack Stop halted the stream ("" when
	// the app stopped it).
	StoppedBy string
}

// Task is one task of a streamed message.
type Task struct {
	ID, Title, Status, Details, Output string
}

func streamKey(channel, ts string) string { return channel + "/" + ts }

// Streams are the streamed messages of a channel, oldest first.
func (s *Server) Streams(channel string) []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Stream
	for _, st := range s.streams {
		if st.Channel == channel {
			out = append(out, st.clone())
		}
	}
	slices.SortFunc(out, func(a, b Stream) int { return strings.Compare(a.TS, b.TS) })
	return out
}

func (st *Stream) clone() Stream {
	c := *st
	c.Chunks = slices.Clone(st.Chunks)
	c.Tasks = slices.Clone(st.Tasks)
	c.Updates = make(map[string]int, len(st.Updates))
	for k, v := range st.Updates {
		c.Updates[k] = v
	}
	return c
}

func (s *Server) chatStartStream(p url.Values) (result, *apiError) {
	c, aerr := s.postTarget(p.Get("channel"))
	if aerr != nil {
		return nil, aerr
	}
	threadTS := p.Get("thread_ts")
	if threadTS == "" || c.find(threadTS) == nil {
		return nil, fail("invalid_thread_ts")
	}
	mode := p.Get("task_display_mode")
	switch mode {
	case "":
		mode = "timeline"
	case "timeline", "plan":
	default:
		return nil, fail("invalid_arguments")
	}
	user, team := p.Get("recipient_user_id"), p.Get("recipient_team_id")
	if !c.im {
		switch {
		case user == "":
			return nil, fail("missing_recipient_user_id")
		case team == "":
			return nil, fail("missing_recipient_team_id")
		}
		u, ok := s.users[user]
		if !ok || u.IsBot {
			return nil, fail("user_not_found")
		}
		if ut, _ := s.teamOf(user); ut != s.opts.TeamID || team != ut {
			return nil, fail("user_not_found") // Slack Connect askers cannot be streamed to
		}
	}
	st := &Stream{Channel: c.id, ThreadTS: threadTS, RecipientUser: user, RecipientTeam: team, TaskDisplayMode: mode,
		Open: true, Updates: map[string]int{}}
	if aerr := st.take(p, false); aerr != nil {
		return nil, aerr
	}
	m := s.addMessage(c, s.nextTS(), threadTS, s.opts.BotUserID, st.Markdown, nil)
	st.TS = m.TS
	if s.streams == nil {
		s.streams = map[string]*Stream{}
	}
	s.streams[streamKey(c.id, m.TS)] = st
	return result{"channel": c.id, "ts": m.TS}, nil
}

func (s *Server) chatAppendStream(p url.Values) (result, *apiError) {
	c, m, st, aerr := s.openStream(p)
	if aerr != nil {
		return nil, aerr
	}
	if !p.Has("markdown_text") && !p.Has("chunks") {
		return nil, fail("no_text")
	}
	if aerr := st.take(p, false); aerr != nil {
		return nil, aerr
	}
	st.Appends++
	m.Text = st.Markdown
	s.notify()
	return result{"channel": c.id, "ts": m.TS}, nil
}

func (s *Server) chatStopStream(p url.Values) (result, *apiError) {
	c, m, st, aerr := s.openStream(p)
	if aerr != nil {
		return nil, aerr
	}
	var blocks json.RawMessage
	if raw := strings.TrimSpace(p.Get("blocks")); raw != "" && raw != "[]" && raw != "null" {
		if aerr := checkStreamBlocks(json.RawMessage(raw)); aerr != nil {
			return nil, aerr
		}
		blocks = json.RawMessage(raw)
	}
	if aerr := st.take(p, true); aerr != nil {
		return nil, aerr
	}
	st.Open = false
	if blocks != nil {
		st.Blocks = blocks
		m.Blocks = blocks
	}
	m.Text = st.Markdown
	s.notify()
	return result{"channel": c.id, "ts": m.TS, "message": s.messageJSON(m)}, nil
}

// openStream finds the open stream a call names; s.mu held.
func (s *Server) openStream(p url.Values) (*channel, *Message, *Stream, *apiError) {
	c, ok := s.channels[p.Get("channel")]
	if !ok {
		return nil, nil, nil, fail("channel_not_found")
	}
	m := c.find(p.Get("ts"))
	if m == nil || m.Deleted {
		return nil, nil, nil, fail("message_not_found")
	}
	st := s.streams[streamKey(c.id, m.TS)]
	if st == nil || !st.Open {
		return nil, nil, nil, fail("message_not_in_streaming_state")
	}
	return c, m, st, nil
}

// take checks and keeps a call's markdown_text and chunks; nothing is
// kept when the call is refused. stop allows the last blocks.
func (st *Stream) take(p url.Values, stop bool) *apiError {
	md := p.Get("markdown_text")
	var chunks []json.RawMessage
	if raw := strings.TrimSpace(p.Get("chunks")); raw != "" {
		if json.Unmarshal([]byte(raw), &chunks) != nil {
			return fail("invalid_chunks")
		}
	}
	next := st.clone()
	next.Markdown += md
	total := utf8.RuneCountInString(md)
	for _, raw := range chunks {
		var c struct {
			Type, ID, Title, Status, Details, Output, Text string
			Blocks                                         json.RawMessage
		}
		if json.Unmarshal(raw, &c) != nil {
			return fail("invalid_chunks")
		}
		switch c.Type {
		case "markdown_text":
			total += utf8.RuneCountInString(c.Text)
			next.Markdown += c.Text
		case "task_update":
			if c.ID == "" || c.Title == "" || utf8.RuneCountInString(c.Details) > maxTaskText || utf8.RuneCountInString(c.Output) > maxTaskText {
				return fail("invalid_chunks")
			}
			switch c.Status {
			case "", "pending", "in_progress", "complete", "error":
			default:
				return fail("invalid_chunks")
			}
			next.update(Task{ID: c.ID, Title: c.Title, Status: c.Status, Details: c.Details, Output: c.Output})
		case "plan_update":
			if c.Title == "" {
				return fail("invalid_chunks")
			}
			next.Plan = c.Title
		case "blocks":
			if aerr := checkStreamBlocks(c.Blocks); aerr != nil {
				return aerr
			}
			if stop {
				next.Blocks = c.Blocks
			}
		default:
			return fail("invalid_chunks")
		}
		next.Chunks = append(next.Chunks, raw)
	}
	if total > maxStreamMarkdown {
		return fail("msg_too_long")
	}
	*st = next
	return nil
}

// update applies a task_update: fields it leaves out keep their value.
func (st *Stream) update(t Task) {
	st.Updates[t.ID]++
	for i := range st.Tasks {
		if st.Tasks[i].ID != t.ID {
			continue
		}
		old := &st.Tasks[i]
		old.Title = t.Title
		if t.Status != "" {
			old.Status = t.Status
		}
		if t.Details != "" {
			old.Details = t.Details
		}
		if t.Output != "" {
			old.Output = t.Output
		}
		return
	}
	if t.Status == "" {
		t.Status = "pending"
	}
	st.Tasks = append(st.Tasks, t)
}

// checkStreamBlocks checks blocks as a message's, and their number.
func checkStreamBlocks(blocks json.RawMessage) *apiError {
	var arr []json.RawMessage
	if json.Unmarshal(blocks, &arr) != nil {
		return fail("invalid_blocks_format")
	}
	if len(arr) > maxStreamBlocks {
		return fail("invalid_blocks")
	}
	return checkBlocks(blocks)
}
