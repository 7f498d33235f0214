package blockkit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// Limits of Block Kit parts that Repair builds and that the conversion half
// never produces.
const (
	repButtonTextMax  = 75
	repActionsMax     = 25
	repAltTextMax     = 2000
	repImageTitleMax  = 2000
	repURLMax         = 3000
	repActionIDMax    = 255
	repButtonValueMax = 2000
)

// repTypeAliases maps block types models invent to the block Repair builds.
var repTypeAliases = map[string]string{
	"heading": "header", "title": "header", "h1": "header", "h2": "header", "h3": "header",
	"text": "text", "mrkdwn": "text", "plain_text": "text", "paragraph": "text", "markdown_text": "text",
	"hr": "divider", "separator": "divider", "rule": "divider", "line": "divider", "horizontal_rule": "divider",
	"img": "image", "picture": "image", "photo": "image",
	"action": "actions", "buttons": "actions", "button": "actions",
	"sections": "section", "fields": "section",
	"footer": "context", "note": "context",
}

// block repairs one block; it may return none (nothing readable), one, or
// several (split or converted).
func (r *repairer) block(n *repNode, path string) []slack.Block {
	typ := strings.TrimSpace(n.strField("type"))
	if typ == "" {
		typ = r.inferType(n, path)
	} else if alias, ok := repTypeAliases[strings.ToLower(typ)]; ok {
		if alias == "text" {
			r.note(path+".type", "type_fixed", fmt.Sprintf("block type %q is a text object: wrapped in a section", typ))
		} else {
			r.note(path+".type", "type_fixed", fmt.Sprintf("block type %q read as %q", typ, alias))
		}
		typ = alias
	}
	id := r.blockID(n, path)
	var out []slack.Block
	switch typ {
	case "section":
		out = r.section(n, path, id)
	case "text":
		// A text object written where a block belongs.
		out = r.sectionFromText(n, path, id)
	case "header":
		out = r.header(n, path, id)
	case "context":
		out = r.context(n, path, id)
	case "divider":
		out = []slack.Block{&slack.DividerBlock{Type: slack.MBTDivider, BlockID: id}}
	case "image":
		out = r.image(n, path, id)
	case "actions":
		out = r.actions(n, path, id)
	case "markdown":
		out = r.markdownBlock(n, path)
	case "table":
		out = r.table(n, path, id)
	case "rich_text", "video":
		out = r.passthrough(n, path, id)
	default:
		return r.convert(n, path, fmt.Sprintf("block type %q is not supported in messages", typ))
	}
	// Each block must be valid on its own; what is not becomes text.
	valid := out[:0:0]
	for _, b := range out {
		if err := Validate(Message{Text: "·", Blocks: []slack.Block{b}}); err != nil {
			r.note(path, "block_converted", "invalid "+string(b.BlockType())+" block: "+repFirstLine(err.Error()))
			valid = append(valid, r.blockAsText(b, path)...)
			continue
		}
		valid = append(valid, b)
	}
	return valid
}

// inferType guesses the type of a block written without one.
func (r *repairer) inferType(n *repNode, path string) string {
	typ := ""
	switch {
	case n.has("image_url") || n.has("slack_file"):
		typ = "image"
	case n.has("rows"):
		typ = "table"
	case n.has("elements"):
		typ = "context"
		if els := n.get("elements"); els.kind == 'a' {
			for _, e := range els.vals {
				switch e.strField("type") {
				case "button", "static_select", "overflow", "datepicker", "users_select", "conversations_select", "channels_select", "external_select", "timepicker", "checkboxes", "radio_buttons", "workflow_button":
					typ = "actions"
				case "rich_text_section", "rich_text_list", "rich_text_quote", "rich_text_preformatted":
					typ = "rich_text"
				}
			}
		}
	case n.has("text") || n.has("fields") || n.has("accessory"):
		typ = "section"
	case len(n.keys) == 0 || (len(n.keys) == 1 && n.has("block_id")):
		typ = "divider"
	default:
		typ = "unknown"
	}
	r.note(path, "type_inferred", "missing block type inferred as "+typ)
	return typ
}

// blockID keeps a block_id that Slack accepts and that is not used twice.
func (r *repairer) blockID(n *repNode, path string) string {
	v := n.get("block_id")
	if v == nil || v.kind == 'z' {
		return ""
	}
	id := v.text()
	switch {
	case id == "" || Len(id) > BlockIDMax:
		r.note(path+".block_id", "block_id_removed", "block_id empty or longer than 255 characters")
		return ""
	case r.ids[id]:
		r.note(path+".block_id", "block_id_removed", fmt.Sprintf("duplicate block_id %q", id))
		return ""
	}
	r.ids[id] = true
	return id
}

// textObject repairs a text composition object. want is "mrkdwn",
// "plain_text" (the field allows nothing else) or "" (either). It returns
// nil when there is no text.
func (r *repairer) textObject(v *repNode, path, want string) *slack.TextBlockObject {
	if v == nil || v.kind == 'z' {
		return nil
	}
	typ, txt, textPath := "", "", path
	var emoji *bool
	verbatim := false
	switch v.kind {
	case 's', 'n', 'b':
		txt = v.text()
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		typ = want
		if typ == "" {
			typ = slack.MarkdownType
		}
		r.note(path, "text_wrapped", "string wrapped in a "+typ+" text object")
	case 'a':
		txt = repReadable(v)
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		typ = want
		if typ == "" {
			typ = slack.MarkdownType
		}
		r.note(path, "text_wrapped", "list joined into a "+typ+" text object")
	case 'o':
		inner := v.get("text")
		if inner != nil && inner.kind == 'o' {
			r.note(path, "shape_coerced", "nested text object unwrapped")
			return r.textObject(inner, path+".text", want)
		}
		typ = v.strField("type")
		textPath = path + ".text"
		switch {
		case inner != nil && inner.kind != 'a':
			txt = inner.text()
		default:
			txt = repReadable(v)
		}
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		if e := v.get("emoji"); e != nil && e.kind == 'b' {
			emoji = &e.b
		}
		if vb := v.get("verbatim"); vb != nil && vb.kind == 'b' {
			verbatim = vb.b
		}
		switch typ {
		case slack.MarkdownType, slack.PlainTextType:
		case "":
			typ = want
			if typ == "" {
				typ = slack.MarkdownType
			}
			r.note(path+".type", "type_inferred", "missing text type inferred as "+typ)
		case "markdown":
			// Written as Markdown on purpose: convert it whatever it holds.
			r.note(path+".type", "text_type_fixed", `text type "markdown" converted to mrkdwn`)
			if want == slack.PlainTextType {
				return r.plainObject(PlainText(txt), emoji)
			}
			return &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.convertMarkdown(txt, textPath, false)}
		default:
			fixed := want
			if fixed == "" {
				fixed = slack.MarkdownType
			}
			r.note(path+".type", "text_type_fixed", fmt.Sprintf("text type %q replaced by %s", typ, fixed))
			typ = fixed
		}
	}
	if want == slack.PlainTextType {
		if typ == slack.MarkdownType {
			r.note(path, "text_type_fixed", "mrkdwn where only plain_text is allowed")
			txt = repPlainFromMrkdwn(txt, true)
		} else if repMarkdownSignals(txt) {
			r.note(textPath, "markdown_converted", "Markdown in plain_text rendered as plain text")
			txt = PlainText(txt)
		}
		return r.plainObject(txt, emoji)
	}
	if typ == slack.PlainTextType {
		return r.plainObject(txt, emoji)
	}
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(txt, textPath), Verbatim: verbatim}
}

func (r *repairer) plainObject(txt string, emoji *bool) *slack.TextBlockObject {
	if strings.TrimSpace(txt) == "" {
		return nil
	}
	return &slack.TextBlockObject{Type: slack.PlainTextType, Text: txt, Emoji: emoji}
}

// mrkdwnText repairs text written for a mrkdwn field: Markdown is converted,
// bare &, < and > are escaped, valid mrkdwn is kept as it is. In text that
// mixes the dialects a single-star *x* stays bold: the model was told to
// write mrkdwn, where that is bold, and italic reads _x_ in both dialects.
func (r *repairer) mrkdwnText(s, path string) string {
	if repMarkdownSignals(s) {
		return r.convertMarkdown(s, path, true)
	}
	out := repEscapeBare(s)
	if out != s {
		r.note(path, "entities_escaped", "bare &, < or > escaped")
	}
	return out
}

// convertMarkdown converts s with Mrkdwn. With boldStars, the writer's
// single-star *x* (mrkdwn bold) is kept bold rather than read as Markdown
// italic.
func (r *repairer) convertMarkdown(s, path string, boldStars bool) string {
	in := s
	if boldStars {
		in = repBoldSingleStars(s)
	}
	out := strings.TrimSpace(Mrkdwn(in))
	r.note(path, "markdown_converted", "Markdown converted to mrkdwn")
	return out
}

// section repairs a section block.
func (r *repairer) section(n *repNode, path, id string) []slack.Block {
	text := r.textObject(n.get("text"), path+".text", "")
	var fields []*slack.TextBlockObject
	var moved []slack.Block
	if fv := n.get("fields"); fv != nil {
		items := []*repNode{fv}
		itemPath := func(int) string { return path + ".fields" }
		if fv.kind == 'a' {
			items = fv.vals
			itemPath = func(i int) string { return path + ".fields[" + strconv.Itoa(i) + "]" }
		} else if fv.kind != 'z' {
			r.note(path+".fields", "shape_coerced", "a single field where a list belongs")
		}
		for i, item := range items {
			f := r.textObject(item, itemPath(i), "")
			if f == nil {
				continue
			}
			if Len(f.Text) > FieldTextMax {
				r.note(itemPath(i), "field_moved", fmt.Sprintf("field over %d characters moved into its own section", FieldTextMax))
				moved = append(moved, r.sections(f, "")...)
				continue
			}
			fields = append(fields, f)
		}
	}
	var accessory *slack.Accessory
	var accText []slack.Block
	if av := n.get("accessory"); av != nil && av.kind != 'z' {
		accessory, accText = r.accessory(av, path+".accessory")
	}
	if text == nil && len(fields) == 0 {
		if len(moved) > 0 || len(accText) > 0 {
			return append(moved, accText...)
		}
		if accessory != nil {
			// A section needs text or fields: show what the accessory says.
			r.note(path, "accessory_converted", "section with only an accessory")
			return r.convert(n.get("accessory"), path+".accessory", "section had no text")
		}
		r.note(path, "empty_dropped", "section without text or fields")
		return nil
	}
	var out []slack.Block
	if text != nil {
		secs := r.sectionsNoted(text, id, path+".text")
		first := secs[0].(*slack.SectionBlock)
		first.Accessory = accessory
		if e := n.get("expand"); e != nil && e.kind == 'b' {
			first.Expand = e.b
		}
		out = append(out, secs...)
		id = ""
	}
	for i := 0; i < len(fields); i += MaxFields {
		chunk := fields[i:min(i+MaxFields, len(fields))]
		if i == 0 && len(out) > 0 {
			last := out[len(out)-1].(*slack.SectionBlock)
			last.Fields = chunk
			continue
		}
		if i == 0 {
			out = append(out, &slack.SectionBlock{Type: slack.MBTSection, BlockID: id, Fields: chunk, Accessory: accessory})
			continue
		}
		out = append(out, &slack.SectionBlock{Type: slack.MBTSection, Fields: chunk})
	}
	if len(fields) > MaxFields {
		r.note(path+".fields", "fields_split", fmt.Sprintf("%d fields spread over %d sections (at most %d each)", len(fields), (len(fields)+MaxFields-1)/MaxFields, MaxFields))
	}
	out = append(out, moved...)
	return append(out, accText...)
}

// sectionFromText builds a section from a text object written as a block.
func (r *repairer) sectionFromText(n *repNode, path, id string) []slack.Block {
	obj := &repNode{kind: 'o', keys: append([]string(nil), n.keys...), vals: append([]*repNode(nil), n.vals...)}
	switch n.strField("type") {
	case slack.PlainTextType, slack.MarkdownType, "markdown":
	default:
		obj.set("type", &repNode{kind: 's', str: slack.MarkdownType})
	}
	obj.del("block_id")
	t := r.textObject(obj, path, "")
	if t == nil {
		r.note(path, "empty_dropped", "text block without text")
		return nil
	}
	return r.sectionsNoted(t, id, path+".text")
}

// sectionsNoted is sections plus a Change when the text had to be split.
func (r *repairer) sectionsNoted(t *slack.TextBlockObject, id, path string) []slack.Block {
	out := r.sections(t, id)
	if len(out) > 1 {
		r.note(path, "section_split", fmt.Sprintf("%d characters continued over %d sections (at most %d each)", Len(t.Text), len(out), SectionTextMax))
	}
	return out
}

// sections puts text into one section, or several when it is longer than
// SectionTextMax; the first gets id. Nothing is dropped.
func (r *repairer) sections(t *slack.TextBlockObject, id string) []slack.Block {
	parts := []string{t.Text}
	if Len(t.Text) > SectionTextMax {
		parts = SplitMrkdwn(t.Text, SectionTextMax)
	}
	out := make([]slack.Block, 0, len(parts))
	for _, p := range parts {
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

// textSections turns text written for mrkdwn into sections.
func (r *repairer) textSections(s, path string) []slack.Block {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	t := &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(s, path)}
	if strings.TrimSpace(t.Text) == "" {
		return nil
	}
	return r.sections(t, "")
}

// convert replaces a block Slack would reject by sections holding its
// readable text.
func (r *repairer) convert(n *repNode, path, reason string) []slack.Block {
	txt := repReadable(n)
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", reason+"; no readable text")
		return nil
	}
	r.note(path, "block_converted", reason+"; its text is kept in a section")
	return r.textSections(txt, path)
}

// blockAsText renders an already built block as sections of its text.
func (r *repairer) blockAsText(b slack.Block, path string) []slack.Block {
	txt := repBlockReadable(b)
	if strings.TrimSpace(txt) == "" {
		return nil
	}
	// The text is mrkdwn already (or plain text): only escape what is bare.
	return r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: repEscapeBare(txt)}, "")
}

// header repairs a header block: plain_text, one line, at most HeaderTextMax.
func (r *repairer) header(n *repNode, path, id string) []slack.Block {
	tv := n.get("text")
	if tv == nil {
		tv = n.get("title")
	}
	t := r.textObject(tv, path+".text", slack.PlainTextType)
	if t == nil {
		r.note(path, "empty_dropped", "header without text")
		return nil
	}
	t.Text = strings.Join(strings.Fields(t.Text), " ")
	t.Text = repStripWrapping(t.Text)
	if clamped, cut := repClamp(t.Text, HeaderTextMax, false); cut {
		r.note(path+".text", "header_clamped", fmt.Sprintf("header cut to %d characters", HeaderTextMax))
		t.Text = clamped
	}
	return []slack.Block{&slack.HeaderBlock{Type: slack.MBTHeader, BlockID: id, Text: t}}
}

// repStripWrapping removes formatting markers wrapping a whole plain text
// ("*Summary*"), which a header would show literally.
func repStripWrapping(s string) string {
	for _, m := range []string{"**", "__", "*", "_", "~"} {
		if len(s) > 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) && !strings.Contains(s[len(m):len(s)-len(m)], m) {
			return strings.TrimSpace(s[len(m) : len(s)-len(m)])
		}
	}
	return s
}

// context repairs a context block: text and image elements, at most
// MaxContextElements per block, texts at most ContextTextMax.
func (r *repairer) context(n *repNode, path, id string) []slack.Block {
	ev := n.get("elements")
	items, epath := []*repNode(nil), path+".elements"
	switch {
	case ev != nil && ev.kind == 'a':
		items = ev.vals
	case ev != nil && ev.kind != 'z':
		items = []*repNode{ev}
		r.note(epath, "shape_coerced", "a single element where a list belongs")
	case n.has("text"):
		items = []*repNode{n.get("text")}
		epath = path + ".text"
		r.note(path, "shape_coerced", "context text moved into elements")
	}
	var els []slack.MixedElement
	for i, item := range items {
		ip := epath
		if ev != nil && ev.kind == 'a' {
			ip = epath + "[" + strconv.Itoa(i) + "]"
		}
		et := item.strField("type")
		if item.kind == 'o' && (et == "image" || (et == "" && (item.has("image_url") || item.has("slack_file")))) {
			if img := r.imageElement(item, ip); img != nil {
				els = append(els, img)
				continue
			}
			r.note(ip, "element_converted", "image element without a usable image_url kept as text")
		} else if item.kind != 'o' || et == "" || et == slack.MarkdownType || et == slack.PlainTextType || et == "markdown" {
			if t := r.textObject(item, ip, ""); t != nil {
				els = append(els, r.clampContext(t, ip))
			}
			continue
		} else {
			r.note(ip, "element_converted", fmt.Sprintf("%q element is not allowed in context; kept as text", et))
		}
		if txt := repReadable(item); strings.TrimSpace(txt) != "" {
			t := &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(txt, ip)}
			if strings.TrimSpace(t.Text) != "" {
				els = append(els, r.clampContext(t, ip))
			}
		}
	}
	if len(els) == 0 {
		r.note(path, "empty_dropped", "context without elements")
		return nil
	}
	var out []slack.Block
	for i := 0; i < len(els); i += MaxContextElements {
		chunk := els[i:min(i+MaxContextElements, len(els))]
		out = append(out, &slack.ContextBlock{Type: slack.MBTContext, BlockID: id, ContextElements: slack.ContextElements{Elements: chunk}})
		id = ""
	}
	if len(out) > 1 {
		r.note(path+".elements", "context_split", fmt.Sprintf("%d elements spread over %d context blocks (at most %d each)", len(els), len(out), MaxContextElements))
	}
	return out
}

func (r *repairer) clampContext(t *slack.TextBlockObject, path string) *slack.TextBlockObject {
	if clamped, cut := repClamp(t.Text, ContextTextMax, t.Type == slack.MarkdownType); cut {
		r.note(path, "context_clamped", fmt.Sprintf("context text cut to %d characters", ContextTextMax))
		t.Text = clamped
	}
	return t
}

// markdownBlock converts a markdown block with the same conversion as
// report_content, so an answer renders the same whichever way it came.
func (r *repairer) markdownBlock(n *repNode, path string) []slack.Block {
	txt := n.strField("text")
	if txt == "" {
		txt = repReadable(n)
	}
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", "markdown block without text")
		return nil
	}
	r.note(path, "markdown_block_converted", "markdown block converted to mrkdwn blocks")
	var out []slack.Block
	for _, m := range FromMarkdown(txt) {
		out = append(out, m.Blocks...)
	}
	return out
}

// passthrough keeps a block type Repair does not rebuild (rich_text,
// video) when slack-go can read it; the caller's Validate decides the rest.
func (r *repairer) passthrough(n *repNode, path, id string) []slack.Block {
	n.del("block_id")
	if id != "" {
		n.set("block_id", &repNode{kind: 's', str: id})
	}
	var blocks slack.Blocks
	data := append(append([]byte{'['}, n.marshal()...), ']')
	if err := json.Unmarshal(data, &blocks); err != nil || len(blocks.BlockSet) != 1 {
		return r.convert(n, path, fmt.Sprintf("unreadable %s block", n.strField("type")))
	}
	return blocks.BlockSet
}
