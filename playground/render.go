package playground

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	bkhtml "github.com/slackbot/slackbot/blockkit/html"
	"github.com/slackbot/slackbot/slack/emulator"
)

var pages = template.Must(template.ParseFS(web, "web/page.html", "web/message.html"))

// channelEntry is one line of the sidebar.
type channelEntry struct {
	ID, Name string
	DM       bool
	Active   bool
}

// page draws the workspace with one channel open; messages arrive over
// the event stream.
func (p *Playground) page(w http.ResponseWriter, r *http.Request) {
	current := r.URL.Query().Get("c")
	if current != p.dm {
		current = General
	}
	chans := []channelEntry{
		{ID: General, Name: "general", Active: current == General},
		{ID: p.dm, Name: "slackbot", DM: true, Active: current == p.dm},
	}
	title := "# general"
	placeholder := "Message #general — @slackbot question, or " + p.slash + " question"
	if current == p.dm {
		title = "slackbot"
		placeholder = "Message slackbot"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // it holds the token
	err := pages.ExecuteTemplate(w, "page.html", map[string]any{
		"Channels": chans, "Channel": current, "Title": title, "Placeholder": placeholder,
		"Setup": p.setup, "Slash": p.slash, "Token": p.token,
	})
	if err != nil {
		p.log.Warn("drawing the page")
	}
}

// messageView is what message.html draws.
type messageView struct {
	Channel, TS, ThreadTS string
	Bot                   bool
	Author, Initial, Time string
	Edited                bool
	Content               template.HTML
	Reactions             []string
	Replies               int
	InList                bool // in the channel's list, rather than the thread pane
	JSON, Builder         string
	Ephemeral             bool // shown only to the person it was sent to
	Files                 []fileView
}

// fragment draws one message for the list or the thread pane; st is the
// stream the message is, nil for a message posted whole.
func (p *Playground) fragment(m emulator.Message, st *emulator.Stream, inList bool, replies int, reactions []string) string {
	v := messageView{Channel: m.Channel, TS: m.TS, ThreadTS: m.ThreadTS, Bot: m.BotID != "",
		Author: p.author(m), Time: stamp(m.TS), Edited: len(m.History) > 0,
		Reactions: reactions, Replies: replies, InList: inList, Files: p.fileViews(m.Files)}
	if st != nil {
		v.Content = p.streamed(*st)
	} else {
		v.Content = p.drawer.Message(m.Blocks, m.Text)
	}
	v.Initial = strings.ToUpper(v.Author[:1])
	if len(m.Blocks) > 0 {
		v.JSON, v.Builder = blocksJSON(m.Blocks)
	}
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "message", v); err != nil {
		return "<div>" + esc(err.Error()) + "</div>"
	}
	return b.String()
}

// ephemeral draws a message the bot sent to the page's user alone (a
// refusal, "only the person who asked can stop this"), as Slack shows it.
func (p *Playground) ephemeral(e emulator.Ephemeral, inList bool) string {
	v := messageView{Channel: e.Channel, TS: e.TS, ThreadTS: e.ThreadTS, Bot: true, Author: "slackbot", Initial: "S",
		Time: stamp(e.TS), Content: p.drawer.Message(e.Blocks, e.Text), InList: inList, Ephemeral: true}
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "message", v); err != nil {
		return "<div>" + esc(err.Error()) + "</div>"
	}
	return b.String()
}

// userName names the people the page knows in mentions.
func (p *Playground) userName(id string) string {
	switch id {
	case User:
		return userName
	case p.srv.BotUserID():
		return "slackbot"
	}
	return ""
}

// channelName names the channels the page shows in mentions.
func channelName(id string) string {
	if id == General {
		return "general"
	}
	return ""
}

// blockKitCSS serves the Block Kit renderer's stylesheet.
func blockKitCSS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write([]byte(bkhtml.CSS))
}

func (p *Playground) author(m emulator.Message) string {
	switch {
	case m.BotID != "" || m.User == p.srv.BotUserID():
		return "slackbot"
	case m.User == User:
		return userName
	case m.User == "":
		return "someone"
	}
	return m.User
}

// blocksJSON is a message's blocks indented for reading, and the Block Kit
// Builder's address that shows them.
func blocksJSON(blocks json.RawMessage) (indented, builder string) {
	var b bytes.Buffer
	if json.Indent(&b, blocks, "", "  ") != nil {
		return string(blocks), ""
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(`{"blocks":`+string(blocks)+`}`))
	// The Builder reads its fragment as a URI component.
	frag := strings.ReplaceAll(url.QueryEscape(compact.String()), "+", "%20")
	return b.String(), "https://app.slack.com/block-kit-builder/#" + frag
}

// stamp is a message timestamp as the time of day it names.
func stamp(ts string) string {
	sec, _, _ := strings.Cut(ts, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return ""
	}
	return time.Unix(n, 0).Format("15:04")
}

// emoji draws the reactions the bot uses; others keep their :name:.
var emoji = map[string]string{
	"eyes": "👀", "white_check_mark": "✅", "x": "❌", "hourglass_flowing_sand": "⏳",
	"warning": "⚠️", "stop_sign": "🛑", "thumbsup": "👍", "+1": "👍",
}

func reactionText(name string) string {
	if e, ok := emoji[name]; ok {
		return e
	}
	return ":" + name + ":"
}
