package blockkit

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 2 of Repair: the shapes models write for a list of messages. Each
// message found becomes a group of built blocks (step 3 runs as each block
// is met); blocks written without a message around them share one group
// until the next message starts.

// messages reads a value where a list of messages belongs.
func (r *repairer) messages(v *jsonish.Value, path string, depth int) {
	switch v.Kind {
	case jsonish.String:
		r.messageString(v.Str, path, depth)
	case jsonish.Number, jsonish.Bool:
		r.addLoose(path, r.textSections(v.Text(), path))
	case jsonish.Object:
		r.messageItem(v, path, depth, true, false)
	case jsonish.Array:
		// A list holding typed blocks is a list of blocks: an untyped
		// {"text": …} or a string in it is a block, not a message.
		blockList := false
		for _, item := range v.Vals {
			blockList = blockList || item.Kind == jsonish.Object && item.Has("type") && !item.Has("blocks")
		}
		for i, item := range v.Vals {
			ip := index(path, i)
			switch item.Kind {
			case jsonish.Object:
				r.messageItem(item, ip, depth, false, blockList)
			case jsonish.String:
				if blockList {
					r.addLoose(ip, r.blockString(item.Str, ip, depth))
					continue
				}
				r.flush()
				r.messageString(item.Str, ip, depth)
			case jsonish.Array:
				r.flush()
				r.note(ip, "shape_coerced", "array of blocks read as one message")
				r.add(ip, r.blocks(item, ip, depth))
			case jsonish.Number, jsonish.Bool:
				r.addLoose(ip, r.textSections(item.Text(), ip))
			}
		}
	}
}

// messageItem reads one object where a message belongs.
func (r *repairer) messageItem(n *jsonish.Value, path string, depth int, single, inBlockList bool) {
	switch {
	case n.Has("blocks") || n.Has("attachments"):
		r.flush()
		if single && path != "" { // "" is a report read as one message, noted already
			r.note(path, "shape_coerced", "a single message where a list belongs")
		}
		r.message(n, path, depth)
	case n.Has("messages") || n.Has("message"):
		key := "messages"
		if !n.Has(key) {
			key = "message"
		}
		r.note(path, "shape_coerced", "nested "+key+" unwrapped")
		r.messages(n.Get(key), join(path, key), depth)
	case !inBlockList && !n.Has("type") && !looksLikeBlock(n) && n.Get("text") != nil && n.Get("text").Kind == jsonish.String:
		// {"text": "…"}: a message without blocks; its text is Markdown.
		r.flush()
		r.markdownMessage(n.Get("text").Str, path, "message without blocks: text converted from Markdown")
	default:
		if r.loose == nil {
			detail := "bare blocks wrapped in a message"
			if single {
				detail = "a single block wrapped in a message"
			}
			r.note(path, "blocks_wrapped", detail)
		}
		r.addLoose(path, r.block(n, path))
	}
}

// looksLikeBlock reports whether an object without "type" still has a
// field only blocks have.
func looksLikeBlock(n *jsonish.Value) bool {
	for _, k := range []string{"fields", "elements", "accessory", "image_url", "rows", "block_id"} {
		if n.Has(k) {
			return true
		}
	}
	return false
}

// messageString reads a string where a message belongs: JSON inside it, or
// Markdown (around a fenced JSON payload, perhaps).
func (r *repairer) messageString(s, path string, depth int) {
	if v, salvaged, ok := r.jsonInString(s, path, depth); ok {
		if v != nil {
			r.messages(v, path, depth+1)
		} else {
			r.addLoose(path, salvaged)
		}
		return
	}
	if before, v, after, ok := r.fencedPayload(s, path, depth); ok {
		r.flush()
		if before != "" {
			r.markdownMessage(before, path, "text before the fenced JSON converted from Markdown")
		}
		r.messages(v, path, depth+1)
		r.flush()
		if after != "" {
			r.markdownMessage(after, path, "text after the fenced JSON converted from Markdown")
		}
		return
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	r.flush()
	r.markdownMessage(s, path, "string converted from Markdown")
}

// message reads one {"blocks": …} object, with its legacy attachments.
func (r *repairer) message(n *jsonish.Value, path string, depth int) {
	var blocks []slack.Block
	if v := n.Get("blocks"); v != nil {
		blocks = r.blocks(v, join(path, "blocks"), depth)
	}
	// Beside legacy attachments and no blocks, a message's text is what
	// Slack shows above them, not only its notification.
	if t := n.Get("text"); len(blocks) == 0 && len(n.Get("attachments").Items()) > 0 && t != nil && t.Kind == jsonish.String &&
		strings.TrimSpace(t.Str) != "" {
		tp := join(path, "text")
		r.note(tp, "text_kept", "the text of a message with legacy attachments shown above them")
		blocks = r.sectionsNoted(&slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(t.Str, tp)}, "", tp)
	}
	for i, a := range n.Get("attachments").Items() {
		blocks = append(blocks, r.attachment(a, index(join(path, "attachments"), i), depth)...)
	}
	if len(blocks) == 0 {
		if t := n.Get("text"); t != nil && t.Kind == jsonish.String && strings.TrimSpace(t.Str) != "" {
			r.markdownMessage(t.Str, join(path, "text"), "message without blocks: text converted from Markdown")
			return
		}
	}
	r.add(path, blocks)
}

// blocks reads a value where a list of blocks belongs.
func (r *repairer) blocks(v *jsonish.Value, path string, depth int) []slack.Block {
	switch v.Kind {
	case jsonish.Array:
		var out []slack.Block
		for i, item := range v.Vals {
			out = append(out, r.blockItem(item, index(path, i), depth)...)
		}
		return out
	case jsonish.Object:
		if v.Has("blocks") {
			r.note(path, "shape_coerced", "nested blocks unwrapped")
			return r.blocks(v.Get("blocks"), join(path, "blocks"), depth)
		}
		r.note(path, "shape_coerced", "a single block where a list belongs")
		return r.block(v, path)
	}
	return r.blockItem(v, path, depth)
}

// blockItem reads one entry of a list of blocks.
func (r *repairer) blockItem(item *jsonish.Value, path string, depth int) []slack.Block {
	switch item.Kind {
	case jsonish.Object:
		return r.block(item, path)
	case jsonish.Array:
		return r.blocks(item, path, depth)
	case jsonish.String:
		return r.blockString(item.Str, path, depth)
	case jsonish.Number, jsonish.Bool:
		return r.textSections(item.Text(), path)
	}
	return nil
}

// blockString reads a string where a block belongs: JSON inside it, or
// Markdown converted to blocks.
func (r *repairer) blockString(s, path string, depth int) []slack.Block {
	if v, salvaged, ok := r.jsonInString(s, path, depth); ok {
		if v == nil {
			return salvaged
		}
		return r.blocks(v, path, depth+1)
	}
	if before, v, after, ok := r.fencedPayload(s, path, depth); ok {
		out := r.markdownBlocks(before)
		out = append(out, r.blocks(v, path, depth+1)...)
		return append(out, r.markdownBlocks(after)...)
	}
	if strings.TrimSpace(s) == "" {
		r.note(path, "empty_dropped", "empty string")
		return nil
	}
	r.note(path, "markdown_message", "string in blocks converted from Markdown")
	return r.markdownBlocks(s)
}

// markdownBlocks converts Markdown to blocks, to be packed with others.
func (r *repairer) markdownBlocks(s string) []slack.Block {
	var out []slack.Block
	for _, m := range FromMarkdown(s) {
		out = append(out, m.Blocks...)
	}
	return out
}

// jsonInString decodes s when it holds JSON, whole or in a code fence. ok
// reports that s was handled: either v is its value, or it was broken JSON
// and salvaged holds its words.
func (r *repairer) jsonInString(s, path string, depth int) (v *jsonish.Value, salvaged []slack.Block, ok bool) {
	t := strings.TrimSpace(s)
	if depth >= maxStringDepth || len(t) < 2 {
		return nil, nil, false
	}
	if t[0] == '"' {
		// JSON encoded once more: a JSON string whose text is JSON again.
		if v, err := jsonish.Parse([]byte(t)); err == nil && v.Kind == jsonish.String && startsLikeJSON(v.Str) {
			r.note(path, "json_decoded", "JSON encoded as a string once more")
			return v, nil, true
		}
		return nil, nil, false
	}
	if !startsLikeJSON(t) {
		return nil, nil, false
	}
	v, fixes, err := jsonish.Decode(t)
	if err == nil {
		r.note(path, "json_decoded", "JSON given as a string")
		r.noteFixes(path, fixes)
		return v, nil, true
	}
	// Only text that clearly meant to be JSON is salvaged; "[1] see…" is prose.
	if before, body, after, fenced := jsonish.FindFence(t); fenced && before == "" && after == "" {
		t = body
	}
	if jsonish.LooksLikeJSON(t) {
		return nil, r.salvaged(t, path, err), true
	}
	return nil, nil, false
}

// startsLikeJSON reports whether s, trimmed, starts the way JSON a model
// wrote does: an object, an array, a string, or a code fence.
func startsLikeJSON(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) >= 2 && strings.ContainsAny(t[:1], "[{\"`~")
}

// fencedPayload finds Block Kit JSON in a ``` fence inside Markdown text,
// and returns the text before and after it.
func (r *repairer) fencedPayload(s, path string, depth int) (before string, v *jsonish.Value, after string, ok bool) {
	if depth >= maxStringDepth {
		return "", nil, "", false
	}
	before, body, after, found := jsonish.FindFence(s)
	if !found {
		return "", nil, "", false
	}
	v, fixes, err := jsonish.Decode(body)
	if err != nil || !holdsBlockKit(v, depth+1) {
		return "", nil, "", false
	}
	r.note(path, "json_unfenced", "Block Kit JSON inside a Markdown code fence")
	r.noteFixes(path, fixes)
	return before, v, after, true
}

// markdownMessage adds a message written as Markdown.
func (r *repairer) markdownMessage(s, path, detail string) {
	r.note(path, "markdown_message", detail)
	r.groups = append(r.groups, group{path: path, converted: FromMarkdown(s)})
}

// add adds a message of built blocks.
func (r *repairer) add(path string, blocks []slack.Block) {
	r.flush()
	r.groups = append(r.groups, group{path: path, blocks: blocks})
}

// addLoose adds blocks written without a message around them to the group
// of such blocks, which the next message ends (flush).
func (r *repairer) addLoose(path string, blocks []slack.Block) {
	if r.loose == nil {
		r.loose = &group{path: path}
	}
	r.loose.blocks = append(r.loose.blocks, blocks...)
}

// flush ends the group of loose blocks.
func (r *repairer) flush() {
	if r.loose == nil {
		return
	}
	r.groups = append(r.groups, *r.loose)
	r.loose = nil
}
