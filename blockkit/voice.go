package blockkit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/slack-go/slack"
)

// VoicePolicy says what a message posted in the bot's name may do. The zero
// value is the strictest: nothing notifies anyone, no host is trusted.
type VoicePolicy struct {
	// AllowBroadcasts keeps @channel, @here, @everyone and user-group
	// mentions as notifying tokens; otherwise they are plain words.
	AllowBroadcasts bool
	// PingAll lets every user mention notify.
	PingAll bool
	// Pingable are the user ids a mention may notify (the asker, the
	// people who wrote in the thread); any other is shown as @name.
	Pingable map[string]bool
	// Name is a user's display name, "" when unknown ("@someone" is
	// shown then). Nil: every name is unknown.
	Name func(id string) string
	// TrustedHosts are the hosts URL buttons, menu options and images may
	// point at: "a.example" is that host only, "*.a.example" its
	// subdomains. A button, option url or image elsewhere becomes a link
	// with its host in view.
	TrustedHosts []string
	// ReservedActionIDs may be carried only by the message's Controls;
	// any other element with one gets another id.
	ReservedActionIDs []string
}

// reservedPrefix is put before a reserved action id on an element that is
// not the sender's own, so that a click on it does nothing.
const reservedPrefix = "model_"

// Voice returns m as it may be posted in the bot's name under p: in every
// mrkdwn text (the notification text, sections, fields, context, option
// descriptions, confirmations), every Markdown block and every rich_text
// element, broadcasts and mentions that p does not allow are words that
// notify nobody, links whose label names another host show their real
// target, URL buttons, images and videos on untrusted hosts become links
// with their host in view (as do the urls of menu options, which stay in
// their menu without one), and reserved action ids stay on the message's
// Controls. m is not modified; blocks Voice does not change are shared.
func Voice(m Message, p VoicePolicy) Message {
	out := Message{Text: p.mrkdwn(m.Text), Controls: m.Controls}
	out.Blocks = make([]slack.Block, 0, len(m.Blocks))
	for _, b := range m.Blocks {
		if isControl(m.Controls, b) {
			out.Blocks = append(out.Blocks, b)
			continue
		}
		if nb, changed := p.block(b); changed {
			out.Blocks = append(out.Blocks, nb...)
			continue
		}
		out.Blocks = append(out.Blocks, b)
	}
	if len(out.Blocks) == 0 {
		out.Blocks = nil
	}
	return out
}

// isControl reports whether b is one of controls, by identity.
func isControl(controls []slack.Block, b slack.Block) bool {
	if b == nil {
		return false
	}
	v := reflect.ValueOf(b)
	if v.Kind() != reflect.Pointer {
		return false
	}
	for _, c := range controls {
		if c != nil && reflect.ValueOf(c).Kind() == reflect.Pointer && reflect.ValueOf(c).Pointer() == v.Pointer() &&
			reflect.TypeOf(c) == v.Type() {
			return true
		}
	}
	return false
}

// voiceHints are the bytes of a block's JSON without which Voice has
// nothing to change in it (json.Marshal writes "<" as \u003c).
var voiceHints = [][]byte{[]byte(`\u003c`), []byte(`<`), []byte(`url"`), []byte(`"action_id"`),
	[]byte(`"broadcast"`), []byte(`"user"`), []byte(`"usergroup"`), []byte(`"link"`), []byte(`](`)}

// block returns the blocks that replace b, and whether they differ from it.
// A block is read as JSON, so that every element kind slack-go knows —
// and those it will know — is walked the same way.
func (p *VoicePolicy) block(b slack.Block) ([]slack.Block, bool) {
	if b == nil || !mayNeedVoice(b) {
		return nil, false
	}
	raw, err := json.Marshal(b)
	if err != nil || !slices.ContainsFunc(voiceHints, func(h []byte) bool { return bytes.Contains(raw, h) }) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil {
		return nil, false
	}
	w := voiceWalk{p: p, options: bytes.Contains(raw, []byte(`"url"`)) &&
		(bytes.Contains(raw, []byte(`"option`)) || bytes.Contains(raw, []byte(`"initial_option`)))}
	repl := w.block(obj)
	if !w.changed {
		return nil, false
	}
	data, err := json.Marshal(repl)
	if err != nil {
		return nil, false
	}
	var bs slack.Blocks
	if json.Unmarshal(data, &bs) != nil {
		return nil, false
	}
	return bs.BlockSet, true
}

// voiceWalk rewrites one block held as decoded JSON, recording whether it
// changed anything.
type voiceWalk struct {
	p       *VoicePolicy
	changed bool
	options bool // the block may hold option objects with a url
}

// block returns the block objects replacing b: b itself, rewritten, then a
// section of links for the buttons, images and option urls it lost, or
// only the links when nothing of b is left.
func (w *voiceWalk) block(b map[string]any) []any {
	var links []string
	keep := true
	switch b["type"] {
	case "image":
		if u := str(b["image_url"]); u != "" && !w.p.trusted(u) {
			label := str(b["alt_text"])
			if t, ok := b["title"].(map[string]any); ok && str(t["text"]) != "" {
				label = str(t["text"])
			}
			links, keep = append(links, linkLine(u, label)), false
		}
	case "video":
		u := str(b["title_url"])
		if u == "" {
			u = str(b["video_url"])
		}
		for _, k := range []string{"video_url", "thumbnail_url", "title_url", "provider_icon_url"} {
			if v := str(b[k]); v != "" && !w.p.trusted(v) {
				label := ""
				if t, ok := b["title"].(map[string]any); ok {
					label = str(t["text"])
				}
				links, keep = append(links, linkLine(u, label)), false
				break
			}
		}
	case "section":
		if acc, ok := b["accessory"].(map[string]any); ok {
			if line, bad := w.untrustedMedia(acc); bad {
				delete(b, "accessory")
				links = append(links, line)
			}
		}
	case "actions":
		els, _ := b["elements"].([]any)
		kept := els[:0:0]
		for _, e := range els {
			if el, ok := e.(map[string]any); ok {
				if line, bad := w.untrustedMedia(el); bad {
					links = append(links, line)
					continue
				}
			}
			kept = append(kept, e)
		}
		b["elements"] = kept
		keep = len(kept) > 0
	case "context":
		els, _ := b["elements"].([]any)
		for i, e := range els {
			if el, ok := e.(map[string]any); ok {
				if line, bad := w.untrustedMedia(el); bad {
					els[i] = map[string]any{"type": "mrkdwn", "text": line}
				}
			}
		}
	}
	if keep && w.options {
		if l := w.optionLinks(b); l != "" {
			links = append(links, l)
		}
	}
	if len(links) > 0 {
		w.changed = true
	}
	var out []any
	if keep {
		w.walk(b)
		out = append(out, b)
	}
	for _, l := range links {
		out = append(out, map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": l}})
	}
	return out
}

// untrustedMedia reports whether el is an image or a URL button on a host
// the policy does not trust, and the link line it becomes.
func (w *voiceWalk) untrustedMedia(el map[string]any) (string, bool) {
	switch el["type"] {
	case "image":
		if u := str(el["image_url"]); u != "" && !w.p.trusted(u) {
			return linkLine(u, str(el["alt_text"])), true
		}
	case "button":
		if u := str(el["url"]); u != "" && !w.p.trusted(u) {
			label := ""
			if t, ok := el["text"].(map[string]any); ok {
				label = str(t["text"])
			}
			return linkLine(u, label), true
		}
	}
	return "", false
}

// walk rewrites every text object, Markdown block, rich_text element and
// action id under v.
func (w *voiceWalk) walk(v any) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["action_id"].(string); ok && slices.Contains(w.p.ReservedActionIDs, id) {
			x["action_id"] = clampID(reservedPrefix + id)
			w.changed = true
		}
		switch x["type"] {
		case "mrkdwn":
			w.text(x, w.p.mrkdwn)
		case "markdown":
			w.text(x, w.p.markdown)
		}
		if els, ok := x["elements"].([]any); ok {
			for i, e := range els {
				if el, ok := e.(map[string]any); ok {
					if r := w.richElement(el); r != nil {
						els[i] = r
					}
				}
			}
		}
		for _, c := range x {
			w.walk(c)
		}
	case []any:
		for _, c := range x {
			w.walk(c)
		}
	}
}

// text rewrites x's "text" with f.
func (w *voiceWalk) text(x map[string]any, f func(string) string) {
	if t, ok := x["text"].(string); ok {
		if nt := f(t); nt != t {
			x["text"] = nt
			w.changed = true
		}
	}
}

// richElement is what replaces a rich_text element, nil to keep it. Its
// text elements are shown literally and need nothing.
func (w *voiceWalk) richElement(el map[string]any) map[string]any {
	p := w.p
	var words string
	switch el["type"] {
	case "broadcast":
		if p.AllowBroadcasts {
			return nil
		}
		words = "@" + str(el["range"])
	case "usergroup":
		if p.AllowBroadcasts {
			return nil
		}
		words = "@group"
	case "user":
		id := str(el["user_id"])
		if p.pings(id) {
			return nil
		}
		words = "@" + p.name(id)
	case "link":
		if t := str(el["text"]); t != "" && disguised(t, str(el["url"])) {
			delete(el, "text")
			w.changed = true
		}
		return nil
	default:
		return nil
	}
	w.changed = true
	out := map[string]any{"type": "text", "text": words}
	if st, ok := el["style"]; ok {
		out["style"] = st
	}
	return out
}

// clampID keeps an action id within Slack's 255 characters.
func clampID(id string) string {
	if len(id) > actionIDLimit {
		id = id[:actionIDLimit]
	}
	return id
}

// str is v as a string, "" when it is not one.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// pings reports whether a mention of user id may notify.
func (p *VoicePolicy) pings(id string) bool { return p.PingAll || p.Pingable[id] }

// name is how user id is shown when its mention may not notify.
func (p *VoicePolicy) name(id string) string {
	if p.Name != nil {
		if n := strings.TrimSpace(p.Name(id)); n != "" && n != id {
			return n
		}
	}
	return "someone"
}

// mayNeedVoice reports whether Voice may have to change b: false for the
// blocks answers are mostly made of — sections, headers, context and
// dividers holding text with no "<" — which then cost no JSON round trip.
func mayNeedVoice(b slack.Block) bool {
	switch x := b.(type) {
	case *slack.SectionBlock:
		if x.Accessory != nil || x.Text != nil && x.Text.Type != slack.PlainTextType && strings.Contains(x.Text.Text, "<") {
			return true
		}
		for _, f := range x.Fields {
			if f != nil && f.Type != slack.PlainTextType && strings.Contains(f.Text, "<") {
				return true
			}
		}
		return false
	case *slack.HeaderBlock, *slack.DividerBlock:
		return false
	case *slack.ContextBlock:
		for _, e := range x.ContextElements.Elements {
			t, ok := e.(*slack.TextBlockObject)
			if !ok || t.Type != slack.PlainTextType && strings.Contains(t.Text, "<") {
				return true
			}
		}
		return false
	case *slack.MarkdownBlock:
		return strings.Contains(x.Text, "<") || strings.Contains(x.Text, "](")
	}
	return true
}
