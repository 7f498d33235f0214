package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair: blocks. Each block is rebuilt from what the model wrote
// as a block Slack accepts, or several (text over a limit continues in the
// next block), or text that keeps its words when the block cannot be kept.

// typeAliases maps block types models invent to the block Repair builds.
var typeAliases = map[string]string{
	"heading": "header", "title": "header", "h1": "header", "h2": "header", "h3": "header",
	"text": "text", "mrkdwn": "text", "plain_text": "text", "paragraph": "text", "markdown_text": "text",
	"hr": "divider", "separator": "divider", "rule": "divider", "line": "divider", "horizontal_rule": "divider",
	"img": "image", "picture": "image", "photo": "image",
	"action": "actions", "buttons": "actions", "button": "actions",
	"sections": "section", "fields": "section",
	"footer": "context", "note": "context",
}

// blockTypes are the block types a message may hold.
var blockTypes = map[string]bool{
	"section": true, "header": true, "divider": true, "context": true, "image": true, "actions": true,
	"rich_text": true, "table": true, "markdown": true, "video": true, "file": true, "input": true,
	"context_actions": true,
}

// block rebuilds one block; it may return none (nothing readable), one, or
// several (split or converted).
func (r *repairer) block(n *jsonish.Value, path string) []slack.Block {
	typ := strings.TrimSpace(n.GetString("type"))
	if typ == "" {
		typ = r.inferType(n, path)
	} else if alias, ok := typeAliases[strings.ToLower(typ)]; ok {
		if alias == "text" {
			r.note(join(path, "type"), "type_fixed", fmt.Sprintf("block type %q is a text object: wrapped in a section", typ))
		} else {
			r.note(join(path, "type"), "type_fixed", fmt.Sprintf("block type %q read as %q", typ, alias))
		}
		typ = alias
	}
	id := r.blockID(n, path)
	var out []slack.Block
	switch typ {
	case "section":
		out = r.section(n, path, id)
	case "text":
		out = r.sectionFromText(n, path, id)
	case "header":
		out = r.header(n, path, id)
	case "context":
		out = r.context(n, path, id)
	case "divider":
		out = []slack.Block{&slack.DividerBlock{Type: slack.MBTDivider, BlockID: id}}
	case "image":
		out = r.image(n, path, id)
	case "video":
		out = r.video(n, path, id)
	case "actions":
		out = r.actions(n, path, id)
	case "markdown":
		out = r.markdownBlock(n, path)
	case "table":
		out = r.table(n, path, id)
	case "rich_text":
		out = r.richText(n, path, id)
	case "context_actions":
		out = r.contextActions(n, path, id)
	default:
		return r.convert(n, path, fmt.Sprintf("block type %q is not supported in messages", typ))
	}
	// Each block must be valid on its own; what is not becomes text.
	valid := out[:0:0]
	for _, b := range out {
		if err := Validate(Message{Text: "·", Blocks: []slack.Block{b}}); err != nil {
			r.note(path, "block_converted", "invalid "+string(b.BlockType())+" block: "+firstLine(err.Error()))
			valid = append(valid, r.blockAsText(b, path)...)
			continue
		}
		valid = append(valid, b)
	}
	return valid
}

// inferType guesses the type of a block written without one.
func (r *repairer) inferType(n *jsonish.Value, path string) string {
	typ := "unknown"
	switch {
	case n.Has("image_url") || n.Has("slack_file"):
		typ = "image"
	case n.Has("video_url"):
		typ = "video"
	case n.Has("rows"):
		typ = "table"
	case n.Has("elements"):
		typ = "context"
		for _, e := range n.Get("elements").Items() {
			et := e.GetString("type")
			switch {
			case et == "button" || actionElements[et] != nil:
				typ = "actions"
			case strings.HasPrefix(et, "rich_text_"):
				typ = "rich_text"
			}
		}
	case n.Has("text") || n.Has("fields") || n.Has("accessory"):
		typ = "section"
	case len(n.Keys) == 0 || (len(n.Keys) == 1 && n.Has("block_id")):
		typ = "divider"
	}
	r.note(path, "type_inferred", "missing block type inferred as "+typ)
	return typ
}

// blockID keeps a block_id that Slack accepts and that is not used twice.
func (r *repairer) blockID(n *jsonish.Value, path string) string {
	v := n.Get("block_id")
	if v == nil || v.Kind == jsonish.Null {
		return ""
	}
	id := v.Text()
	switch {
	case id == "" || Len(id) > BlockIDMax:
		r.note(join(path, "block_id"), "block_id_removed", "block_id empty or longer than 255 characters")
		return ""
	case r.ids[id]:
		r.note(join(path, "block_id"), "block_id_removed", fmt.Sprintf("duplicate block_id %q", id))
		return ""
	}
	r.ids[id] = true
	return id
}

// section rebuilds a section block: its text, fields and accessory.
func (r *repairer) section(n *jsonish.Value, path, id string) []slack.Block {
	if out, ok := r.payloadInText(n, path); ok {
		return out
	}
	text := r.textObject(n.Get("text"), join(path, "text"), "")
	var fields []*slack.TextBlockObject
	var moved []slack.Block
	if fv := n.Get("fields"); fv != nil && fv.Kind != jsonish.Null {
		if fv.Kind != jsonish.Array {
			r.note(join(path, "fields"), "shape_coerced", "a single field where a list belongs")
		}
		for i, item := range fv.Items() {
			ip := join(path, "fields")
			if fv.Kind == jsonish.Array {
				ip = index(ip, i)
			}
			f := r.textObject(item, ip, "")
			if f == nil {
				continue
			}
			if Len(f.Text) > FieldTextMax {
				r.note(ip, "field_moved", fmt.Sprintf("field over %d characters moved into its own section", FieldTextMax))
				moved = append(moved, r.sections(f, "", ip)...)
				continue
			}
			fields = append(fields, f)
		}
	}
	var accessory *slack.Accessory
	var accText []slack.Block
	if av := n.Get("accessory"); av != nil && av.Kind != jsonish.Null {
		accessory, accText = r.accessory(av, join(path, "accessory"))
	}
	if text == nil && len(fields) == 0 {
		if accessory != nil {
			// A section needs text or fields: show what the accessory says.
			r.note(path, "accessory_converted", "section with only an accessory")
			return append(moved, r.convert(n.Get("accessory"), join(path, "accessory"), "section had no text")...)
		}
		if len(moved) == 0 && len(accText) == 0 {
			r.note(path, "empty_dropped", "section without text or fields")
		}
		return append(moved, accText...)
	}
	var out []slack.Block
	if text != nil {
		secs := r.sectionsNoted(text, id, join(path, "text"))
		first := secs[0].(*slack.SectionBlock)
		first.Accessory = accessory
		if e := n.Get("expand"); e != nil && e.Kind == jsonish.Bool {
			first.Expand = e.Bool
		}
		out = append(out, secs...)
		id, accessory = "", nil
	}
	for i := 0; i < len(fields); i += MaxFields {
		chunk := fields[i:min(i+MaxFields, len(fields))]
		if i == 0 && len(out) > 0 {
			out[len(out)-1].(*slack.SectionBlock).Fields = chunk
			continue
		}
		out = append(out, &slack.SectionBlock{Type: slack.MBTSection, BlockID: id, Fields: chunk, Accessory: accessory})
		id, accessory = "", nil
	}
	if len(fields) > MaxFields {
		r.note(join(path, "fields"), "fields_split", fmt.Sprintf("%d fields spread over %d sections (at most %d each)", len(fields), (len(fields)+MaxFields-1)/MaxFields, MaxFields))
	}
	out = append(out, moved...)
	return append(out, accText...)
}

// payloadInText reads a section whose whole text is Block Kit JSON (in a
// ``` fence or not) as the blocks it holds: the model put its answer one
// level too deep.
func (r *repairer) payloadInText(n *jsonish.Value, path string) ([]slack.Block, bool) {
	tv := n.Get("text")
	if tv != nil && tv.Kind == jsonish.Object {
		tv = tv.Get("text")
	}
	if tv == nil || tv.Kind != jsonish.String || len(n.Keys) > 3 {
		return nil, false
	}
	t := strings.TrimSpace(tv.Str)
	if t == "" || !strings.ContainsAny(t[:1], "[{`~") {
		return nil, false
	}
	v, fixes, err := jsonish.Decode(t)
	if err != nil || !isBlockPayload(v) {
		return nil, false
	}
	r.note(join(path, "text"), "json_decoded", "the section's whole text is Block Kit JSON: read as its blocks")
	r.noteFixes(join(path, "text"), fixes)
	return r.blocks(v, join(path, "text"), 1), true
}

// isBlockPayload reports whether v is unmistakably Block Kit: a message
// with blocks, a block of a known type, or a list of those.
func isBlockPayload(v *jsonish.Value) bool {
	switch v.Kind {
	case jsonish.Object:
		return v.Has("blocks") || v.Has("messages") || blockTypes[v.GetString("type")]
	case jsonish.Array:
		for _, item := range v.Vals {
			if !isBlockPayload(item) {
				return false
			}
		}
		return len(v.Vals) > 0
	}
	return false
}

// sectionFromText builds a section from a text object written as a block.
func (r *repairer) sectionFromText(n *jsonish.Value, path, id string) []slack.Block {
	obj := n.Copy()
	switch n.GetString("type") {
	case slack.PlainTextType, slack.MarkdownType, "markdown":
	default:
		obj.Set("type", jsonish.NewString(slack.MarkdownType))
	}
	obj.Del("block_id")
	t := r.textObject(obj, path, "")
	if t == nil {
		r.note(path, "empty_dropped", "text block without text")
		return nil
	}
	return r.sectionsNoted(t, id, join(path, "text"))
}

// sectionsNoted is sections plus a Change when the text had to be split.
func (r *repairer) sectionsNoted(t *slack.TextBlockObject, id, path string) []slack.Block {
	out := r.sections(t, id, path)
	if len(out) > 1 {
		r.note(path, "section_split", fmt.Sprintf("%d characters continued over %d sections (at most %d each)", Len(t.Text), len(out), SectionTextMax))
	}
	return out
}

// sections puts text into one section, or several when it is longer than
// SectionTextMax; the first gets id. Nothing is dropped: a link too long
// for a section is written as its label and address (see SplitMrkdwn).
func (r *repairer) sections(t *slack.TextBlockObject, id, path string) []slack.Block {
	if t.Type == slack.MarkdownType && Len(t.Text) > SectionTextMax && flattenTokens(t.Text, SectionTextMax-len("```\n\n```")) != t.Text {
		r.note(path, "link_flattened", fmt.Sprintf("a link longer than a section holds (%d characters) is shown as its label and address", SectionTextMax))
	}
	var out []slack.Block
	for _, p := range splitText(t.Text, SectionTextMax, t.Type == slack.MarkdownType) {
		if strings.TrimSpace(p) == "" {
			continue
		}
		tt := *t
		tt.Text = p
		out = append(out, &slack.SectionBlock{Type: slack.MBTSection, BlockID: id, Text: &tt})
		id = ""
	}
	return out
}

// splitText splits mrkdwn with SplitMrkdwn and plain text between words.
func splitText(s string, max int, mrkdwn bool) []string {
	if mrkdwn {
		return SplitMrkdwn(s, max)
	}
	var out []string
	for s != "" {
		head, rest := cutWords(s, max)
		if head == "" { // a first word longer than max
			end := prefixWithin(s, max)
			head, rest = s[:end], s[end:]
		}
		out, s = append(out, head), rest
	}
	return out
}

// textSections turns text written for mrkdwn into sections.
func (r *repairer) textSections(s, path string) []slack.Block {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	t := &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(s, path)}
	if strings.TrimSpace(t.Text) == "" {
		return nil
	}
	return r.sections(t, "", path)
}

// convert replaces a block Slack would refuse by sections holding its
// readable text.
func (r *repairer) convert(n *jsonish.Value, path, reason string) []slack.Block {
	txt := readable(n)
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", reason+"; no readable text")
		return nil
	}
	r.note(path, "block_converted", reason+"; its text is kept in a section")
	return r.textSections(txt, path)
}

// header rebuilds a header block: plain_text on one line. Text over
// HeaderTextMax continues in a bold section after it (see headerParts).
func (r *repairer) header(n *jsonish.Value, path, id string) []slack.Block {
	tv := n.Get("text")
	if tv == nil {
		tv = n.Get("title")
	}
	t := r.textObject(tv, join(path, "text"), slack.PlainTextType)
	if t == nil {
		r.note(path, "empty_dropped", "header without text")
		return nil
	}
	head, rest := headerParts(stripWrapping(collapseSpaces(t.Text)))
	t.Text = head
	out := []slack.Block{&slack.HeaderBlock{Type: slack.MBTHeader, BlockID: id, Text: t}}
	if rest != "" {
		r.note(join(path, "text"), "header_split", fmt.Sprintf("header over %d characters: the rest continues in a section after it", HeaderTextMax))
		out = append(out, r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: rest}, "", join(path, "text"))...)
	}
	return out
}

// stripWrapping removes formatting markers wrapping a whole plain text
// ("*Summary*"), which a header would show literally.
func stripWrapping(s string) string {
	for _, m := range []string{"**", "__", "*", "_", "~"} {
		if len(s) > 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) && !strings.Contains(s[len(m):len(s)-len(m)], m) {
			return strings.TrimSpace(s[len(m) : len(s)-len(m)])
		}
	}
	return s
}

// context rebuilds a context block: text and image elements, at most
// MaxContextElements a block. A text over ContextTextMax continues in the
// next context block, and the elements after it follow it there.
func (r *repairer) context(n *jsonish.Value, path, id string) []slack.Block {
	ev := n.Get("elements")
	items, epath := ev.Items(), join(path, "elements")
	switch {
	case ev != nil && ev.Kind != jsonish.Array && ev.Kind != jsonish.Null:
		r.note(epath, "shape_coerced", "a single element where a list belongs")
	case len(items) == 0 && n.Has("text"):
		items, epath = []*jsonish.Value{n.Get("text")}, join(path, "text")
		r.note(path, "shape_coerced", "context text moved into elements")
	}
	var (
		out   []slack.Block
		cur   []slack.MixedElement
		count int
	)
	end := func() {
		if len(cur) > 0 {
			out = append(out, &slack.ContextBlock{Type: slack.MBTContext, BlockID: id, ContextElements: slack.ContextElements{Elements: cur}})
			cur, id = nil, ""
		}
	}
	push := func(e slack.MixedElement) {
		if len(cur) == MaxContextElements {
			end()
		}
		cur = append(cur, e)
		count++
	}
	for i, item := range items {
		ip := epath
		if ev != nil && ev.Kind == jsonish.Array {
			ip = index(epath, i)
		}
		for _, t := range r.contextElement(item, ip) {
			switch t := t.(type) {
			case *slack.TextBlockObject:
				pieces := splitText(t.Text, ContextTextMax, t.Type == slack.MarkdownType)
				if len(pieces) > 1 {
					r.note(ip, "context_text_split", fmt.Sprintf("context text over %d characters continues in the next context block", ContextTextMax))
				}
				for k, p := range pieces {
					if k > 0 {
						end()
					}
					tt := *t
					tt.Text = p
					push(&tt)
				}
			default:
				push(t)
			}
		}
	}
	end()
	if len(out) == 0 {
		r.note(path, "empty_dropped", "context without elements")
	}
	if count > MaxContextElements {
		r.note(epath, "context_split", fmt.Sprintf("%d elements spread over %d context blocks (at most %d each)", count, len(out), MaxContextElements))
	}
	return out
}

// contextElement rebuilds one element of a context block: an image (with
// the rest of an alt text too long for it), or a text object (anything
// else is kept as its text).
func (r *repairer) contextElement(item *jsonish.Value, path string) []slack.MixedElement {
	et := item.GetString("type")
	switch {
	case item.Kind == jsonish.Object && (et == "image" || et == "" && (item.Has("image_url") || item.Has("slack_file"))):
		if img, rest := r.imageElement(item, path); img != nil {
			if rest != "" {
				return []slack.MixedElement{img, &slack.TextBlockObject{Type: slack.MarkdownType, Text: rest}}
			}
			return []slack.MixedElement{img}
		}
		r.note(path, "element_converted", "image element without a usable image_url kept as text")
	case item.Kind != jsonish.Object || et == "" || et == slack.MarkdownType || et == slack.PlainTextType || et == "markdown":
		if t := r.textObject(item, path, ""); t != nil {
			return []slack.MixedElement{t}
		}
		return nil
	default:
		r.note(path, "element_converted", fmt.Sprintf("%q element is not allowed in context; kept as text", et))
	}
	txt := r.mrkdwnText(readable(item), path)
	if strings.TrimSpace(txt) == "" {
		return nil
	}
	return []slack.MixedElement{&slack.TextBlockObject{Type: slack.MarkdownType, Text: txt}}
}

// markdownBlock converts a markdown block with the same conversion as
// report_content, so an answer renders the same whichever way it came.
func (r *repairer) markdownBlock(n *jsonish.Value, path string) []slack.Block {
	txt := n.GetString("text")
	if txt == "" {
		txt = readable(n)
	}
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", "markdown block without text")
		return nil
	}
	r.note(path, "markdown_block_converted", "markdown block converted to mrkdwn blocks")
	return r.markdownBlocks(txt)
}

// richText keeps a rich_text block Slack accepts as it is; one with no
// text is dropped, and one Slack would refuse becomes a section of its text.
func (r *repairer) richText(n *jsonish.Value, path, id string) []slack.Block {
	if strings.TrimSpace(readable(n)) == "" {
		r.note(path, "empty_dropped", "rich_text without text")
		return nil
	}
	if problem := richTextProblem(n); problem != "" {
		return r.convert(n, path, "rich_text "+problem)
	}
	return r.passthrough(r.fixListStyles(n, path), path, id)
}

// fixListStyles gives each rich_text_list of a rich_text block a style
// Slack takes, bullet or ordered: a numbered style (numbered, number,
// decimal, ol, …) is ordered, any other bullet. It returns n, or a copy
// of it with the lists fixed.
func (r *repairer) fixListStyles(n *jsonish.Value, path string) *jsonish.Value {
	els := n.Get("elements")
	var fixed *jsonish.Value
	for i, e := range els.Vals {
		style := e.GetString("style")
		if e.GetString("type") != "rich_text_list" || style == string(slack.RTEListBullet) || style == string(slack.RTEListOrdered) {
			continue
		}
		want := slack.RTEListBullet
		if numberedStyles[strings.ToLower(strings.TrimSpace(style))] {
			want = slack.RTEListOrdered
		}
		if fixed == nil {
			fixed = &jsonish.Value{Kind: jsonish.Array, Vals: append([]*jsonish.Value(nil), els.Vals...)}
		}
		list := e.Copy()
		list.Set("style", jsonish.NewString(string(want)))
		fixed.Vals[i] = list
		r.note(join(index(join(path, "elements"), i), "style"), "element_fixed", fmt.Sprintf("list style %q read as %q", style, want))
	}
	if fixed == nil {
		return n
	}
	n = n.Copy()
	n.Set("elements", fixed)
	return n
}

// numberedStyles are the list styles models write for a numbered list.
var numberedStyles = map[string]bool{"ordered": true, "numbered": true, "number": true, "numbers": true, "numeric": true,
	"decimal": true, "ol": true, "1": true, "enumerated": true}

// richTextElements are the parts a rich_text block is made of, and
// richTextLeaves what their elements are.
var (
	richTextElements = map[string]bool{"rich_text_section": true, "rich_text_list": true, "rich_text_quote": true, "rich_text_preformatted": true}
	richTextLeaves   = map[string]string{"text": "text", "link": "url", "user": "user_id", "channel": "channel_id",
		"usergroup": "usergroup_id", "emoji": "name", "broadcast": "range", "date": "timestamp", "color": "value"}
)

// richTextProblem says what in a rich_text block Slack would refuse, or "".
func richTextProblem(n *jsonish.Value) string {
	els := n.Get("elements")
	if els == nil || els.Kind != jsonish.Array || len(els.Vals) == 0 {
		return "without elements"
	}
	for _, e := range els.Vals {
		typ := e.GetString("type")
		if !richTextElements[typ] {
			return fmt.Sprintf("with a %q element", typ)
		}
		inner := e.Get("elements")
		if inner == nil || inner.Kind != jsonish.Array || len(inner.Vals) == 0 {
			return "with an empty " + typ
		}
		for _, leaf := range inner.Vals {
			if typ == "rich_text_list" {
				if leaf.GetString("type") != "rich_text_section" {
					return "with a list item that is not a rich_text_section"
				}
				continue
			}
			need, ok := richTextLeaves[leaf.GetString("type")]
			if !ok {
				return fmt.Sprintf("with a %q element in a %s", leaf.GetString("type"), typ)
			}
			if v := leaf.Get(need); v == nil || v.Text() == "" {
				return fmt.Sprintf("with a %s element without %s", leaf.GetString("type"), need)
			}
		}
	}
	return ""
}

// contextActions keeps a context_actions block (feedback and icon buttons)
// as written when Slack takes it. One it would refuse is dropped: the
// buttons' words mean nothing without the buttons.
func (r *repairer) contextActions(n *jsonish.Value, path, id string) []slack.Block {
	c := n.Copy()
	c.Del("block_id")
	if id != "" {
		c.Set("block_id", jsonish.NewString(id))
	}
	var blocks slack.Blocks
	data := append(append([]byte{'['}, c.Marshal()...), ']')
	if err := json.Unmarshal(data, &blocks); err != nil || len(blocks.BlockSet) != 1 {
		r.note(path, "empty_dropped", "unreadable context_actions block")
		return nil
	}
	if err := Validate(Message{Text: "·", Blocks: blocks.BlockSet}); err != nil {
		r.note(path, "empty_dropped", "invalid context_actions block: "+firstLine(err.Error()))
		return nil
	}
	return blocks.BlockSet
}

// passthrough keeps a block that Repair does not rebuild, as slack-go reads
// it; Validate decides the rest.
func (r *repairer) passthrough(n *jsonish.Value, path, id string) []slack.Block {
	n = n.Copy()
	n.Del("block_id")
	if id != "" {
		n.Set("block_id", jsonish.NewString(id))
	}
	var blocks slack.Blocks
	data := append(append([]byte{'['}, n.Marshal()...), ']')
	if err := json.Unmarshal(data, &blocks); err != nil || len(blocks.BlockSet) != 1 {
		return r.convert(n, path, fmt.Sprintf("unreadable %s block", n.GetString("type")))
	}
	return blocks.BlockSet
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
