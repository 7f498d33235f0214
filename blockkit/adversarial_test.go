package blockkit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/slackbot/slackbot/blockkit"
)

// The adversarial corpus (testdata/adversarial/<family>/<what-it-tries>.json)
// holds final-report arguments the way models write them when they get Block
// Kit wrong. Each payload goes through RepairReport whole, and the result is
// checked against invariants written here from Slack's documented rules, not
// from this package's constants, so the check stays independent of the code
// it checks. See testdata/adversarial/README.md for how expectations are
// stated.

// Invariants, as they appear in failure messages and in the summary.
const (
	invRepair   = "repair"       // no panic, no error for an object, at least one message
	invValidate = "validate"     // blockkit.Validate accepts every message
	invLimits   = "slack-limits" // our own reading of Slack's limits, in UTF-16 units
	invTokens   = "tokens"       // every < and > in mrkdwn belongs to a whole Slack token
	invLost     = "lost-text"    // every word and link host the payload shows survives
	invEmpty    = "empty-answer" // no "The answer was empty" when there was an answer
	invTilde    = "tilde"        // a tilde Slack would not pair stays an ASCII ~
	invTable    = "code-table"   // code tables are narrow enough and aligned
	invExpect   = "expectation"  // a payload's must_not_contain stays out of sight
)

var advInvariants = []string{invRepair, invValidate, invLimits, invTokens, invLost, invEmpty, invTilde, invTable, invExpect}

const advDir = "testdata/adversarial"

// advExpect is the optional sibling <name>.expect.json of a payload.
type advExpect struct {
	Note string `json:"note"`
	// Derive is "auto" (default: expected words come from the payload's
	// user-visible keys) or "none" (the rule cannot read this payload, e.g.
	// single-quoted pseudo-JSON; only MustContain applies).
	Derive      string   `json:"derive"`
	MustContain []string `json:"must_contain"`
	// MustNotContain lists text a person must not be shown, such as the keys
	// of Block Kit JSON that should have been decoded, or Markdown left raw
	// in a plain_text field.
	MustNotContain []string `json:"must_not_contain"`
}

type advCase struct {
	name    string // family/file.json
	family  string
	payload []byte
	expect  advExpect
}

type advProblem struct{ inv, msg string }

func advLoad(t *testing.T) []advCase {
	t.Helper()
	var cases []advCase
	payloads := map[string]bool{}
	var expects []string
	err := filepath.WalkDir(advDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		if strings.HasSuffix(path, ".expect.json") {
			expects = append(expects, path)
			return nil
		}
		rel, err := filepath.Rel(advDir, path)
		if err != nil {
			return err
		}
		c := advCase{name: filepath.ToSlash(rel), family: filepath.ToSlash(filepath.Dir(rel))}
		if c.payload, err = os.ReadFile(path); err != nil {
			return err
		}
		data, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".expect.json")
		switch {
		case err == nil:
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c.expect); err != nil {
				return fmt.Errorf("%s.expect.json: %w", strings.TrimSuffix(path, ".json"), err)
			}
			if c.expect.Derive != "" && c.expect.Derive != "auto" && c.expect.Derive != "none" {
				return fmt.Errorf("%s: derive must be auto or none", path)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		payloads[path] = true
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		t.Fatalf("loading the corpus: %v", err)
	}
	for _, e := range expects {
		if !payloads[strings.TrimSuffix(e, ".expect.json")+".json"] {
			t.Fatalf("%s has no payload beside it", e)
		}
	}
	return cases
}

// TestAdversarialCorpus runs every payload through RepairReport and checks
// the result against every invariant; failures name the payload and the
// invariant, and a summary per invariant and family closes the run.
func TestAdversarialCorpus(t *testing.T) {
	cases := advLoad(t)
	if len(cases) < 150 {
		t.Fatalf("the corpus holds %d payloads; it should hold about 200", len(cases))
	}
	byFamily := map[string][]advCase{}
	for _, c := range cases {
		byFamily[c.family] = append(byFamily[c.family], c)
	}
	var mu sync.Mutex
	failed := map[string]map[string]bool{} // invariant -> payload names
	t.Run("corpus", func(t *testing.T) {
		for family, fc := range byFamily {
			t.Run(family, func(t *testing.T) {
				t.Parallel()
				for _, c := range fc {
					t.Run(strings.TrimPrefix(c.name, c.family+"/"), func(t *testing.T) {
						t.Parallel()
						probs := advRun(c, advRepairReport)
						for _, p := range advCap(probs, 6) {
							t.Errorf("%s: [%s] %s", c.name, p.inv, p.msg)
						}
						mu.Lock()
						defer mu.Unlock()
						for _, p := range probs {
							if failed[p.inv] == nil {
								failed[p.inv] = map[string]bool{}
							}
							failed[p.inv][c.name] = true
						}
					})
				}
			})
		}
	})
	t.Log(advSummary(cases, failed))
}

// advCap keeps at most n problems per invariant, saying how many were left.
func advCap(probs []advProblem, n int) []advProblem {
	count := map[string]int{}
	var out []advProblem
	for _, p := range probs {
		count[p.inv]++
		if count[p.inv] <= n {
			out = append(out, p)
		}
	}
	for _, inv := range advInvariants {
		if count[inv] > n {
			out = append(out, advProblem{inv, fmt.Sprintf("… and %d more", count[inv]-n)})
		}
	}
	return out
}

func advSummary(cases []advCase, failed map[string]map[string]bool) string {
	total := map[string]int{}
	var families []string
	for _, c := range cases {
		if total[c.family] == 0 {
			families = append(families, c.family)
		}
		total[c.family]++
	}
	sort.Strings(families)
	var b strings.Builder
	anyFail := map[string]bool{}
	for _, names := range failed {
		for n := range names {
			anyFail[n] = true
		}
	}
	fmt.Fprintf(&b, "adversarial summary: %d of %d payloads fail at least one invariant\n", len(anyFail), len(cases))
	fmt.Fprintf(&b, "%-14s", "invariant")
	for _, f := range families {
		fmt.Fprintf(&b, " %9.9s", f)
	}
	fmt.Fprintf(&b, " %9s\n", "all")
	famOf := map[string]string{}
	for _, c := range cases {
		famOf[c.name] = c.family
	}
	row := func(label string, names map[string]bool) {
		fmt.Fprintf(&b, "%-14s", label)
		per := map[string]int{}
		for n := range names {
			per[famOf[n]]++
		}
		for _, f := range families {
			fmt.Fprintf(&b, " %4d/%-4d", per[f], total[f])
		}
		fmt.Fprintf(&b, " %4d/%-4d\n", len(names), len(cases))
	}
	for _, inv := range advInvariants {
		row(inv, failed[inv])
	}
	row("any", anyFail)
	return b.String()
}

// advRepairReport is the function under test, wrapped so the self-tests can
// substitute one that misbehaves.
func advRepairReport(payload []byte) ([]blockkit.Message, error) {
	msgs, _, err := blockkit.RepairReport(json.RawMessage(payload))
	return msgs, err
}

// advRun repairs one payload and checks every invariant.
func advRun(c advCase, repair func([]byte) ([]blockkit.Message, error)) (probs []advProblem) {
	var msgs []blockkit.Message
	var err error
	panicked := func() (p bool) {
		defer func() {
			if r := recover(); r != nil {
				probs = append(probs, advProblem{invRepair, fmt.Sprintf("RepairReport panicked: %v", r)})
				p = true
			}
		}()
		msgs, err = repair(c.payload)
		return false
	}()
	switch {
	case panicked:
		return probs
	case err != nil:
		return append(probs, advProblem{invRepair, fmt.Sprintf("RepairReport returned an error for a JSON object: %v", err)})
	case len(msgs) == 0:
		return append(probs, advProblem{invRepair, "RepairReport returned no message"})
	}
	return advInspect(c, msgs)
}

// advInspect checks repaired messages against every invariant but repair.
func advInspect(c advCase, msgs []blockkit.Message) (probs []advProblem) {
	add := func(inv, format string, args ...any) {
		probs = append(probs, advProblem{inv, fmt.Sprintf(format, args...)})
	}
	out := make([]map[string]any, 0, len(msgs))
	for i, m := range msgs {
		if err := blockkit.Validate(m); err != nil {
			add(invValidate, "message %d: %v", i, err)
		}
		data, err := json.Marshal(m)
		if err != nil {
			add(invValidate, "message %d does not marshal: %v", i, err)
			continue
		}
		var v map[string]any
		if err := advDecode(data, &v); err != nil {
			add(invValidate, "message %d does not decode: %v", i, err)
			continue
		}
		out = append(out, v)
		for _, p := range advLimitProblems(v) {
			add(invLimits, "message %d: %s", i, p)
		}
		for _, s := range advMrkdwnTexts(v) {
			for _, p := range advTokenProblems(s.text, c.payload) {
				add(invTokens, "message %d %s: %s", i, s.where, p)
			}
		}
	}
	want := advDerive(c.payload, c.expect)
	vis := advVisible(out)
	for _, p := range advLostProblems(want, vis) {
		add(invLost, "%s", p)
	}
	if want.answer && strings.Contains(strings.ToLower(vis.norm+"\n"+advNotifications(out)), "the answer was empty") {
		add(invEmpty, "the output says the answer was empty, but the payload holds one (%d words, e.g. %q)", len(want.words), advFirst(want.words, want.must))
	}
	for _, tok := range want.tildes {
		if !strings.Contains(vis.norm, tok) {
			seen := ""
			if strings.Contains(vis.norm, "∼"+tok[1:]) {
				seen = " (it became the look-alike ∼)"
			}
			add(invTilde, "%q should keep its ASCII tilde%s", tok, seen)
		}
	}
	for _, p := range advTableProblems(out, want) {
		add(invTable, "%s", p)
	}
	for _, s := range c.expect.MustNotContain {
		if strings.Contains(vis.norm, s) {
			add(invExpect, "the output shows %q", s)
		}
	}
	return probs
}

func advFirst(lists ...[]string) string {
	for _, l := range lists {
		if len(l) > 0 {
			return l[0]
		}
	}
	return ""
}

func advDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// ---------------------------------------------------------------------------
// Slack's limits, read from Slack's Block Kit reference and counted in UTF-16
// code units (an emoji outside the BMP counts twice).

func advU16(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

type advLim struct{ probs []string }

func (l *advLim) add(path, format string, args ...any) {
	l.probs = append(l.probs, path+": "+fmt.Sprintf(format, args...))
}

func advStr(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

func advMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func advList(v any) ([]any, bool) {
	l, ok := v.([]any)
	return l, ok
}

func advWebURL(u string) bool {
	l := strings.ToLower(u)
	return (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")) && len(u) > len("https://") && !strings.ContainsAny(u, " \t\n<>")
}

// advLimitProblems checks one chat.postMessage body {"text", "blocks"}.
func advLimitProblems(m map[string]any) []string {
	l := &advLim{}
	text, _ := advStr(m["text"])
	blocks, _ := advList(m["blocks"])
	if strings.TrimSpace(text) == "" && len(blocks) == 0 {
		l.add("message", "has neither text nor blocks")
	}
	if n := advU16(text); n > 40000 {
		l.add("text", "is %d UTF-16 units; Slack truncates past 40000", n)
	}
	if len(blocks) > 50 {
		l.add("blocks", "%d blocks; a message takes at most 50", len(blocks))
	}
	ids := map[string]int{}
	tables, markdown := 0, 0
	for i, raw := range blocks {
		b := advMap(raw)
		typ, _ := advStr(b["type"])
		p := fmt.Sprintf("blocks[%d] (%s)", i, typ)
		if b == nil {
			l.add(p, "is not an object")
			continue
		}
		if v, ok := b["block_id"]; ok {
			id, _ := advStr(v)
			if n := advU16(id); n == 0 || n > 255 {
				l.add(p, "block_id is %d UTF-16 units; Slack takes 1 to 255", n)
			}
			if j, dup := ids[id]; dup {
				l.add(p, "block_id %q repeats blocks[%d]", id, j)
			}
			ids[id] = i
		}
		switch typ {
		case "section":
			advSection(l, p, b)
		case "header":
			advText(l, p+".text", b["text"], 150, true, true)
		case "context":
			els, _ := advList(b["elements"])
			if len(els) == 0 || len(els) > 10 {
				l.add(p, "has %d elements; Slack takes 1 to 10", len(els))
			}
			for k, e := range els {
				ep := fmt.Sprintf("%s.elements[%d]", p, k)
				if t, _ := advStr(advMap(e)["type"]); t == "image" {
					advImage(l, ep, advMap(e))
					continue
				}
				advText(l, ep, e, 2000, false, true)
			}
		case "divider":
		case "image":
			advImage(l, p, b)
			if b["title"] != nil {
				advText(l, p+".title", b["title"], 2000, true, true)
			}
		case "actions":
			els, _ := advList(b["elements"])
			if len(els) == 0 || len(els) > 25 {
				l.add(p, "has %d elements; Slack takes 1 to 25", len(els))
			}
			actionIDs := map[string]bool{}
			for k, e := range els {
				ep := fmt.Sprintf("%s.elements[%d]", p, k)
				advElement(l, ep, advMap(e), "actions")
				if id, _ := advStr(advMap(e)["action_id"]); id != "" {
					if actionIDs[id] {
						l.add(ep, "action_id %q repeats in this block; Slack needs it unique", id)
					}
					actionIDs[id] = true
				}
			}
		case "rich_text":
			advRichText(l, p, b)
		case "video":
			advVideo(l, p, b)
		case "markdown":
			s, _ := advStr(b["text"])
			if s == "" {
				l.add(p, "markdown text is empty")
			}
			markdown += advU16(s)
		case "table":
			tables++
			advTable(l, p, b)
		case "file":
			if s, _ := advStr(b["external_id"]); s == "" {
				l.add(p, "file block without external_id")
			}
		case "input":
			l.add(p, "input blocks belong in modals and Home tabs; chat.postMessage answers invalid_blocks")
		default:
			l.add(p, "block type %q is not a message block", typ)
		}
	}
	if markdown > 12000 {
		l.add("blocks", "markdown blocks hold %d UTF-16 units; Slack takes 12000 a message", markdown)
	}
	if tables > 1 {
		l.add("blocks", "%d table blocks; Slack takes one a message", tables)
	}
	return l.probs
}

// advText checks a text object: plain_text (or mrkdwn unless plainOnly),
// 1 to max UTF-16 units.
func advText(l *advLim, p string, v any, max int, plainOnly, required bool) {
	if v == nil {
		if required {
			l.add(p, "text object missing")
		}
		return
	}
	t := advMap(v)
	if t == nil {
		l.add(p, "is %T, not a text object", v)
		return
	}
	typ, _ := advStr(t["type"])
	switch {
	case plainOnly && typ != "plain_text":
		l.add(p, "type %q; this field takes plain_text only", typ)
	case typ != "plain_text" && typ != "mrkdwn":
		l.add(p, "type %q; a text object is plain_text or mrkdwn", typ)
	}
	s, ok := advStr(t["text"])
	n := advU16(s)
	switch {
	case !ok || n == 0:
		l.add(p, "text is empty; Slack needs at least 1 character")
	case n > max:
		l.add(p, "text is %d UTF-16 units; Slack takes %d", n, max)
	}
}

func advSection(l *advLim, p string, b map[string]any) {
	fields, hasFields := advList(b["fields"])
	if b["text"] == nil && len(fields) == 0 {
		l.add(p, "has neither text nor fields")
	}
	if b["text"] != nil {
		advText(l, p+".text", b["text"], 3000, false, true)
	}
	if hasFields && (len(fields) == 0 || len(fields) > 10) {
		l.add(p, "has %d fields; Slack takes 1 to 10", len(fields))
	}
	for k, f := range fields {
		advText(l, fmt.Sprintf("%s.fields[%d]", p, k), f, 2000, false, true)
	}
	if acc := b["accessory"]; acc != nil {
		advElement(l, p+".accessory", advMap(acc), "section")
	}
}

func advImage(l *advLim, p string, b map[string]any) {
	alt, _ := advStr(b["alt_text"])
	if n := advU16(alt); n == 0 || n > 2000 {
		l.add(p, "alt_text is %d UTF-16 units; Slack requires 1 to 2000", n)
	}
	u, hasURL := advStr(b["image_url"])
	file := advMap(b["slack_file"])
	switch {
	case hasURL && file != nil:
		l.add(p, "has both image_url and slack_file")
	case hasURL:
		if !advWebURL(u) {
			l.add(p, "image_url %q is not an http(s) URL", advShort(u))
		}
		if n := advU16(u); n > 3000 {
			l.add(p, "image_url is %d UTF-16 units; Slack takes 3000", n)
		}
	case file != nil:
		id, _ := advStr(file["id"])
		fu, _ := advStr(file["url"])
		if id == "" && fu == "" {
			l.add(p, "slack_file has neither id nor url")
		}
	default:
		l.add(p, "has neither image_url nor slack_file")
	}
}

func advVideo(l *advLim, p string, b map[string]any) {
	if alt, _ := advStr(b["alt_text"]); alt == "" {
		l.add(p, "video without alt_text (required)")
	}
	if b["title"] == nil {
		l.add(p, "video without title (required)")
	} else {
		advText(l, p+".title", b["title"], 199, true, true)
	}
	if b["description"] != nil {
		advText(l, p+".description", b["description"], 199, true, true)
	}
	for _, k := range []string{"video_url", "thumbnail_url"} {
		u, _ := advStr(b[k])
		switch {
		case u == "":
			l.add(p, "video without %s (required)", k)
		case !advWebURL(u):
			l.add(p, "%s %q is not an http(s) URL", k, advShort(u))
		case k == "video_url" && !strings.HasPrefix(strings.ToLower(u), "https://"):
			l.add(p, "video_url %q must be https", advShort(u))
		}
	}
	if a, _ := advStr(b["author_name"]); advU16(a) >= 50 {
		l.add(p, "author_name is %d UTF-16 units; Slack takes fewer than 50", advU16(a))
	}
}

var (
	advRichBlockElems = map[string]bool{"rich_text_section": true, "rich_text_list": true, "rich_text_preformatted": true, "rich_text_quote": true}
	advRichInline     = map[string]string{"text": "text", "link": "url", "user": "user_id", "channel": "channel_id", "usergroup": "usergroup_id", "emoji": "name", "broadcast": "range", "date": "timestamp", "color": "value", "team": "team_id"}
)

func advRichText(l *advLim, p string, b map[string]any) {
	els, _ := advList(b["elements"])
	if len(els) == 0 {
		l.add(p, "rich_text without elements")
	}
	for k, e := range els {
		advRichElement(l, fmt.Sprintf("%s.elements[%d]", p, k), advMap(e))
	}
}

func advRichElement(l *advLim, p string, e map[string]any) {
	typ, _ := advStr(e["type"])
	if !advRichBlockElems[typ] {
		l.add(p, "type %q is not a rich text element (section, list, preformatted, quote)", typ)
		return
	}
	els, _ := advList(e["elements"])
	if len(els) == 0 {
		l.add(p, "%s without elements", typ)
	}
	if typ == "rich_text_list" {
		if st, _ := advStr(e["style"]); st != "bullet" && st != "ordered" {
			l.add(p, "list style %q; Slack takes bullet or ordered", st)
		}
		for k, s := range els {
			if t, _ := advStr(advMap(s)["type"]); t != "rich_text_section" {
				l.add(fmt.Sprintf("%s.elements[%d]", p, k), "list item type %q; Slack takes rich_text_section", t)
			}
		}
		return
	}
	for k, s := range els {
		ip := fmt.Sprintf("%s.elements[%d]", p, k)
		m := advMap(s)
		t, _ := advStr(m["type"])
		key, ok := advRichInline[t]
		if !ok {
			l.add(ip, "inline type %q is not a rich text element", t)
			continue
		}
		if v, _ := advStr(m[key]); v == "" && t != "date" && t != "color" {
			l.add(ip, "%s element without %s", t, key)
		}
	}
}

func advTable(l *advLim, p string, b map[string]any) {
	rows, _ := advList(b["rows"])
	if len(rows) == 0 || len(rows) > 100 {
		l.add(p, "has %d rows; Slack takes 1 to 100", len(rows))
	}
	if cs, _ := advList(b["column_settings"]); len(cs) > 20 {
		l.add(p, "has %d column_settings; Slack takes 20", len(cs))
	}
	for r, raw := range rows {
		cells, ok := advList(raw)
		if !ok || len(cells) == 0 || len(cells) > 20 {
			l.add(fmt.Sprintf("%s.rows[%d]", p, r), "has %d cells; Slack takes 1 to 20", len(cells))
		}
		for c, cell := range cells {
			cp := fmt.Sprintf("%s.rows[%d][%d]", p, r, c)
			m := advMap(cell)
			switch t, _ := advStr(m["type"]); t {
			case "raw_text":
				if s, _ := advStr(m["text"]); s == "" {
					l.add(cp, "raw_text cell without text")
				}
			case "rich_text":
				advRichText(l, cp, m)
			default:
				l.add(cp, "cell type %q; Slack takes raw_text or rich_text", t)
			}
		}
	}
}

var (
	advDateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	advTimeRE = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)
)

// advElement checks an interactive element in an actions block or a
// section accessory.
func advElement(l *advLim, p string, e map[string]any, where string) {
	if e == nil {
		l.add(p, "element is not an object")
		return
	}
	typ, _ := advStr(e["type"])
	if id, ok := advStr(e["action_id"]); ok && (id == "" || advU16(id) > 255) {
		l.add(p, "action_id is %d UTF-16 units; Slack takes 1 to 255", advU16(id))
	}
	if e["placeholder"] != nil {
		advText(l, p+".placeholder", e["placeholder"], 150, true, true)
	}
	switch typ {
	case "button":
		advText(l, p+".text", e["text"], 75, true, true)
		if u, ok := advStr(e["url"]); ok {
			if n := advU16(u); n == 0 || n > 3000 {
				l.add(p, "url is %d UTF-16 units; Slack takes 1 to 3000", n)
			}
		}
		if v, _ := advStr(e["value"]); advU16(v) > 2000 {
			l.add(p, "value is %d UTF-16 units; Slack takes 2000", advU16(v))
		}
		if st, ok := advStr(e["style"]); ok && st != "primary" && st != "danger" {
			l.add(p, "style %q; Slack takes primary or danger", st)
		}
	case "static_select", "multi_static_select":
		opts, hasOpts := advList(e["options"])
		groups, hasGroups := advList(e["option_groups"])
		switch {
		case hasOpts == hasGroups:
			l.add(p, "%s needs exactly one of options and option_groups", typ)
		case hasOpts && (len(opts) == 0 || len(opts) > 100):
			l.add(p, "%s has %d options; Slack takes 1 to 100", typ, len(opts))
		case hasGroups && (len(groups) == 0 || len(groups) > 100):
			l.add(p, "%s has %d option_groups; Slack takes 1 to 100", typ, len(groups))
		}
		advOptions(l, p, opts, true, false)
		for g, raw := range groups {
			gp := fmt.Sprintf("%s.option_groups[%d]", p, g)
			grp := advMap(raw)
			advText(l, gp+".label", grp["label"], 75, true, true)
			gopts, _ := advList(grp["options"])
			if len(gopts) == 0 || len(gopts) > 100 {
				l.add(gp, "has %d options; Slack takes 1 to 100", len(gopts))
			}
			advOptions(l, gp, gopts, true, false)
		}
	case "overflow":
		opts, _ := advList(e["options"])
		if len(opts) < 2 || len(opts) > 5 {
			l.add(p, "overflow has %d options; Slack takes 2 to 5", len(opts))
		}
		advOptions(l, p, opts, true, true)
	case "checkboxes", "radio_buttons":
		opts, _ := advList(e["options"])
		if len(opts) == 0 || len(opts) > 10 {
			l.add(p, "%s has %d options; Slack takes 1 to 10", typ, len(opts))
		}
		advOptions(l, p, opts, false, false)
	case "datepicker":
		if d, ok := advStr(e["initial_date"]); ok {
			if _, err := time.Parse("2006-01-02", d); !advDateRE.MatchString(d) || err != nil {
				l.add(p, "initial_date %q is not a real YYYY-MM-DD date", d)
			}
		}
	case "timepicker":
		if tm, ok := advStr(e["initial_time"]); ok && !advTimeRE.MatchString(tm) {
			l.add(p, "initial_time %q is not HH:mm", tm)
		}
	case "datetimepicker":
		if v, ok := e["initial_date_time"]; ok {
			if _, isNum := v.(json.Number); !isNum {
				l.add(p, "initial_date_time %v is not a UNIX timestamp", v)
			}
		}
	case "users_select", "conversations_select", "channels_select", "external_select",
		"multi_users_select", "multi_conversations_select", "multi_channels_select", "multi_external_select":
	case "workflow_button":
		advText(l, p+".text", e["text"], 75, true, true)
	case "image":
		if where != "section" {
			l.add(p, "image elements are not allowed in %s blocks", where)
		}
		advImage(l, p, e)
	default:
		l.add(p, "element type %q is not allowed in %s", typ, where)
	}
}

func advOptions(l *advLim, p string, opts []any, plainOnly, urlOK bool) {
	for k, raw := range opts {
		op := fmt.Sprintf("%s.options[%d]", p, k)
		o := advMap(raw)
		if o == nil {
			l.add(op, "option is %T, not an option object", raw)
			continue
		}
		advText(l, op+".text", o["text"], 75, plainOnly, true)
		v, ok := advStr(o["value"])
		if !ok || advU16(v) > 150 {
			l.add(op, "value is missing or over 150 UTF-16 units")
		}
		if o["description"] != nil {
			advText(l, op+".description", o["description"], 75, true, true)
		}
		if u, ok := advStr(o["url"]); ok && (!urlOK || advU16(u) > 3000) {
			l.add(op, "url not allowed here or over 3000 UTF-16 units")
		}
	}
}

func advShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// ---------------------------------------------------------------------------
// Slack tokens in mrkdwn.

type advLocated struct{ where, text string }

// advMrkdwnTexts returns the notification text and every mrkdwn text object
// of a message.
func advMrkdwnTexts(m map[string]any) []advLocated {
	var out []advLocated
	if s, ok := advStr(m["text"]); ok {
		out = append(out, advLocated{"notification text", s})
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if t, _ := advStr(x["type"]); t == "mrkdwn" {
				if s, ok := advStr(x["text"]); ok {
					out = append(out, advLocated{path, s})
				}
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], path+"."+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(m["blocks"], "blocks")
	return out
}

var advIDRE = regexp.MustCompile(`^[A-Z0-9]+$`)

// advTokenLen returns the length of the whole Slack token at the start of s,
// or 0 and why there is none.
func advTokenLen(s string) (int, string) {
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return 0, "never closed"
	}
	body := s[1:end]
	if strings.ContainsAny(body, "<\n") {
		return 0, "not closed before the next < or line break"
	}
	head, label, hasLabel := strings.Cut(body, "|")
	id := func(prefixes string, v string) bool {
		return len(v) >= 2 && strings.ContainsRune(prefixes, rune(v[0])) && advIDRE.MatchString(v)
	}
	lower := strings.ToLower(head)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"),
		strings.HasPrefix(lower, "mailto:"), strings.HasPrefix(lower, "tel:"):
		switch {
		case strings.ContainsAny(head, " \t"):
			return 0, "URL holds a space"
		case strings.HasSuffix(head, "//") || strings.HasSuffix(head, ":"):
			return 0, "URL is empty"
		}
	case strings.HasPrefix(head, "@"):
		if !id("UW", head[1:]) {
			return 0, "not a user ID"
		}
	case strings.HasPrefix(head, "#"):
		if !id("CG", head[1:]) {
			return 0, "not a channel ID"
		}
	case head == "!here" || head == "!channel" || head == "!everyone":
	case strings.HasPrefix(head, "!subteam^"):
		if !id("S", head[len("!subteam^"):]) {
			return 0, "not a user group ID"
		}
	case strings.HasPrefix(head, "!date^"):
		if !hasLabel || label == "" {
			return 0, "date token without |fallback"
		}
	default:
		return 0, "not a Slack token"
	}
	return end + 1, ""
}

// advTokenProblems reports every < that does not open a whole Slack token,
// every > that neither closes one nor starts a quote line, and double
// escapes (unless the payload itself wrote them).
func advTokenProblems(s string, payload []byte) []string {
	var probs []string
	ctx := func(i int) string {
		a, b := max(0, i-20), min(len(s), i+30)
		return strings.ToValidUTF8(s[a:b], "")
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			n, why := advTokenLen(s[i:])
			if n == 0 {
				probs = append(probs, fmt.Sprintf("< at byte %d opens no Slack token (%s): %q", i, why, ctx(i)))
				i++
				continue
			}
			i += n
		case '>':
			ls := strings.LastIndexByte(s[:i], '\n') + 1
			if strings.Trim(s[ls:i], ">") != "" {
				probs = append(probs, fmt.Sprintf("bare > at byte %d: %q", i, ctx(i)))
			}
			i++
		case '&':
			for _, d := range []string{"&amp;amp;", "&amp;lt;", "&amp;gt;"} {
				if strings.HasPrefix(s[i:], d) && !bytes.Contains(payload, []byte(d)) {
					probs = append(probs, fmt.Sprintf("double escape %s at byte %d: %q", d, i, ctx(i)))
				}
			}
			i++
		default:
			i++
		}
	}
	return probs
}

// ---------------------------------------------------------------------------
// What the payload shows a user, derived by a rule over its keys.

// advHidden keys never hold text a user sees (or, for value, only inside
// legacy attachment fields).
var advHidden = map[string]bool{
	"type": true, "block_id": true, "action_id": true, "style": true, "value": true, "color": true,
	"ts": true, "fallback": true, "callback_id": true, "mrkdwn_in": true, "emoji": true, "verbatim": true,
	"accessibility_label": true, "initial_date": true, "initial_time": true, "initial_option": true,
	"initial_options": true, "initial_date_time": true, "timezone": true, "format": true, "timestamp": true,
	"range": true, "name": true, "unicode": true, "skin_tone": true, "icon": true, "icon_emoji": true,
	"icon_url": true, "author_icon": true, "footer_icon": true, "thumb_url": true, "thumbnail_url": true,
	"provider_icon_url": true, "image_width": true, "image_height": true, "image_bytes": true, "align": true,
	"column_settings": true, "is_wrapped": true, "indent": true, "offset": true, "border": true,
	"optional": true, "dispatch_action": true, "max_selected_items": true, "min_query_length": true,
	"confirm": true, "status": true, "report_format": true, "id": true, "external_id": true, "expand": true,
	"short": true, "level": true, "language": true, "lang": true, "response_type": true, "channel": true,
	"thread_ts": true, "unfurl_links": true, "unfurl_media": true, "mrkdwn": true, "icon_name": true,
}

// advURLKeys hold link targets: their host must stay reachable.
var advURLKeys = map[string]bool{"url": true, "image_url": true, "video_url": true, "title_url": true, "title_link": true, "author_link": true}

// advNumberKeys hold numbers a user sees (table cells).
var advNumberKeys = map[string]bool{"rows": true, "cells": true, "text": true, "value": true}

type advWant struct {
	words  []string // runs of 3+ letters/digits, in order, each once
	hosts  []string
	tildes []string // "~5"-like runs that must keep an ASCII tilde
	texts  []string // visible input strings, entities decoded
	tables [][][]string
	must   []string
	answer bool
}

type advDeriver struct {
	want  advWant
	seenW map[string]bool
	seenH map[string]bool
}

func advDerive(payload []byte, exp advExpect) advWant {
	d := &advDeriver{seenW: map[string]bool{}, seenH: map[string]bool{}}
	d.want.must = exp.MustContain
	var top map[string]any
	if err := advDecode(payload, &top); err == nil && exp.Derive != "none" {
		for _, k := range []string{"messages", "message", "blocks", "attachments"} {
			d.answer(top[k], k)
		}
		if len(d.want.words) == 0 && len(d.want.hosts) == 0 {
			// The messages are unusable: report_content is the answer.
			rc := top["report_content"]
			if rc == nil {
				rc = top["content"]
			}
			d.walk(rc, "report_content", "")
		}
	}
	d.want.answer = len(d.want.words)+len(d.want.hosts)+len(d.want.must) > 0
	return d.want
}

// answer reads a value where messages belong: a number, bool or null there
// is no answer at all.
func (d *advDeriver) answer(v any, key string) {
	switch x := v.(type) {
	case string:
		if inner, ok := advUnwrapJSON(x); ok {
			d.walk(inner, key, "")
			return
		}
		d.text(x)
	case map[string]any, []any:
		d.walk(x, key, "")
	}
}

var advFenceRE = regexp.MustCompile("(?s)^```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```$")

// advUnwrapJSON decodes a string holding JSON (also inside a ``` fence, or
// encoded several times) into an object or array.
func advUnwrapJSON(s string) (any, bool) {
	for range 4 {
		t := strings.TrimSpace(s)
		if m := advFenceRE.FindStringSubmatch(t); m != nil {
			t = strings.TrimSpace(m[1])
		}
		if t == "" || !strings.ContainsRune("[{\"", rune(t[0])) {
			return nil, false
		}
		var v any
		if err := advDecode([]byte(t), &v); err != nil {
			return nil, false
		}
		switch x := v.(type) {
		case string:
			s = x
			continue
		case map[string]any, []any:
			return x, true
		}
		return nil, false
	}
	return nil, false
}

// walk collects the visible text under v; key is the key v sits under,
// arrayKey the key of the array holding v, if any.
func (d *advDeriver) walk(v any, key, arrayKey string) {
	switch x := v.(type) {
	case map[string]any:
		if t, _ := advStr(x["type"]); t == "table" || t == "markdown_table" {
			d.tableBlock(x)
		}
		blocks, _ := advList(x["blocks"])
		atts, _ := advList(x["attachments"])
		isMessage := len(blocks) > 0 || len(atts) > 0
		attachmentField := arrayKey == "fields" && x["type"] == nil
		for _, k := range advSortedKeys(x) {
			val := x[k]
			switch {
			case k == "text" && isMessage:
				// A message's own text is its notification fallback.
			case k == "value" && attachmentField:
				d.walk(val, k, "")
			case advHidden[k]:
			case advURLKeys[k]:
				if s, ok := advStr(val); ok {
					d.host(s)
				}
			default:
				d.walk(val, k, "")
			}
		}
	case []any:
		for _, e := range x {
			d.walk(e, key, key)
		}
	case string:
		if inner, ok := advUnwrapJSON(x); ok {
			d.walk(inner, key, arrayKey)
			return
		}
		d.text(x)
	case json.Number:
		if advNumberKeys[key] {
			d.text(x.String())
		}
	}
}

func advSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	advEntities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")
	advComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	advHTMLTag  = regexp.MustCompile(`(?i)</?(b|i|u|s|em|strong|br|p|div|span|a|code|pre|script|style|ul|ol|li|table|thead|tbody|tr|td|th|h[1-6]|img|hr|sup|sub|details|summary|kbd|mark|del|ins|blockquote|font|center)\b[^<>]*/?>`)
	advURLRE    = regexp.MustCompile(`(?i)\bhttps?://[^\s<>|"'\x60()\[\]]+`)
	// A Markdown link title ([x](url "title")) is a hover tooltip, not text.
	advLinkTitle = regexp.MustCompile(`(\]\([^\s()]+)\s+"[^"]*"\)`)
)

func (d *advDeriver) text(s string) {
	s = advEntities.Replace(s)
	if strings.TrimSpace(s) == "" {
		return
	}
	d.want.texts = append(d.want.texts, s)
	d.want.tables = append(d.want.tables, advPipeTables(s)...)
	s = advComment.ReplaceAllString(s, " ")
	s = advLinkTitle.ReplaceAllString(s, "$1)")
	s = advHTMLTag.ReplaceAllString(s, " ")
	s = advURLRE.ReplaceAllStringFunc(s, func(u string) string {
		d.host(u)
		return " "
	})
	d.want.tildes = append(d.want.tildes, advLoneTildes(s)...)
	for _, w := range advWords(s) {
		if utf8.RuneCountInString(w) >= 3 && !d.seenW[w] {
			d.seenW[w] = true
			d.want.words = append(d.want.words, w)
		}
	}
}

func (d *advDeriver) host(raw string) {
	raw = strings.TrimSpace(advEntities.Replace(raw))
	if !advWebURL(raw) {
		return
	}
	u, err := url.Parse(raw)
	h := ""
	if err == nil {
		h = u.Hostname()
	}
	if h == "" {
		rest := raw[strings.Index(raw, "//")+2:]
		h, _, _ = strings.Cut(rest, "/")
	}
	h = strings.ToLower(h)
	if h != "" && !d.seenH[h] {
		d.seenH[h] = true
		d.want.hosts = append(d.want.hosts, h)
	}
}

func advWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

func advWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !advWordRune(r) })
}

// advLoneTildes returns, for each single ~ that no other single ~ on its
// line could pair with (so neither Markdown nor mrkdwn strikes through), the
// tilde and the text after it up to a space: "~5", "~/projects/app".
func advLoneTildes(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		rs := []rune(line)
		type tilde struct {
			pos             int
			canOpen, canCls bool
		}
		var ts []tilde
		for i, r := range rs {
			if r != '~' || (i > 0 && rs[i-1] == '~') || (i+1 < len(rs) && rs[i+1] == '~') {
				continue
			}
			var prev, next rune = ' ', ' '
			if i > 0 {
				prev = rs[i-1]
			}
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			ts = append(ts, tilde{i,
				!unicode.IsSpace(next) && !advWordRune(prev),
				!unicode.IsSpace(prev) && !advWordRune(next)})
		}
		for a, t := range ts {
			paired := false
			for b, u := range ts {
				if a == b {
					continue
				}
				if (b > a && t.canOpen && u.canCls && u.pos > t.pos+1) || (b < a && u.canOpen && t.canCls && t.pos > u.pos+1) {
					paired = true
				}
			}
			if paired {
				continue
			}
			end := t.pos + 1
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			tok := strings.TrimRight(string(rs[t.pos:end]), ".,;:!?)]}>|*_`'\"")
			if len([]rune(tok)) >= 2 {
				out = append(out, tok)
			}
		}
	}
	return out
}

var advDelimRow = regexp.MustCompile(`^\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?$`)

// advPipeTables finds GFM pipe tables in s.
func advPipeTables(s string) [][][]string {
	lines := strings.Split(s, "\n")
	var tables [][][]string
	for i := 0; i+1 < len(lines); i++ {
		head := strings.TrimSpace(lines[i])
		if !strings.Contains(head, "|") || !advDelimRow.MatchString(strings.TrimSpace(lines[i+1])) || !strings.Contains(lines[i+1], "-") {
			continue
		}
		t := [][]string{advPipeCells(head)}
		j := i + 2
		for ; j < len(lines) && strings.Contains(lines[j], "|"); j++ {
			t = append(t, advPipeCells(strings.TrimSpace(lines[j])))
		}
		tables = append(tables, t)
		i = j - 1
	}
	return tables
}

func advPipeCells(line string) []string {
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	parts := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", "|"))
	}
	return parts
}

// tableBlock records the cells of a table block (or a model's
// markdown_table) for the alignment check.
func (d *advDeriver) tableBlock(x map[string]any) {
	var t [][]string
	cell := func(c any) string {
		var parts []string
		var flat func(v any, key string)
		flat = func(v any, key string) {
			switch y := v.(type) {
			case string:
				if !advHidden[key] {
					parts = append(parts, y)
				}
			case json.Number:
				parts = append(parts, y.String())
			case []any:
				for _, e := range y {
					flat(e, key)
				}
			case map[string]any:
				for _, k := range advSortedKeys(y) {
					flat(y[k], k)
				}
			}
		}
		flat(c, "text")
		return strings.TrimSpace(advEntities.Replace(strings.Join(parts, "")))
	}
	if hs, ok := advList(x["headers"]); ok {
		var row []string
		for _, h := range hs {
			row = append(row, cell(h))
		}
		t = append(t, row)
	}
	rows, _ := advList(x["rows"])
	for _, r := range rows {
		var row []string
		cells, ok := advList(r)
		if !ok {
			cells, _ = advList(advMap(r)["cells"])
		}
		for _, c := range cells {
			row = append(row, cell(c))
		}
		t = append(t, row)
	}
	if len(t) > 1 {
		d.want.tables = append(d.want.tables, t)
	}
}

// ---------------------------------------------------------------------------
// What the output shows.

type advOut struct {
	norm    string          // visible strings, entities decoded, U+200B dropped
	words   map[string]bool // words of norm
	letters string          // norm with everything but letters and digits dropped
}

// advVisible collects every string a person can see in the blocks (links,
// image URLs and alt text included; ids, styles and button values not).
// A message without blocks shows its text.
func advVisible(msgs []map[string]any) advOut {
	var strs []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case string:
			switch key {
			case "type", "block_id", "action_id", "style", "value":
			default:
				strs = append(strs, x)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case map[string]any:
			for _, k := range advSortedKeys(x) {
				walk(x[k], k)
			}
		}
	}
	for _, m := range msgs {
		if blocks, _ := advList(m["blocks"]); len(blocks) > 0 {
			walk(blocks, "blocks")
		} else {
			walk(m["text"], "text")
		}
	}
	norm := advEntities.Replace(strings.ReplaceAll(strings.Join(strs, "\n"), "\u200b", ""))
	out := advOut{norm: norm, words: map[string]bool{}}
	for _, w := range advWords(norm) {
		out.words[w] = true
	}
	out.letters = strings.Map(func(r rune) rune {
		if advWordRune(r) {
			return r
		}
		return -1
	}, norm)
	return out
}

func advNotifications(msgs []map[string]any) string {
	var b strings.Builder
	for _, m := range msgs {
		s, _ := advStr(m["text"])
		b.WriteString(s + "\n")
	}
	return b.String()
}

func (o advOut) hasWord(w string) bool {
	if o.words[w] {
		return true
	}
	// A run cut where a long text was split (CJK without spaces, a token of
	// thousands of characters) survives as a run of the output's letters.
	long := len(w) >= 20
	for _, r := range w {
		long = long || r >= 0x80
	}
	return long && strings.Contains(o.letters, w)
}

func advLostProblems(want advWant, out advOut) []string {
	var probs []string
	var lost []string
	for _, w := range want.words {
		if !out.hasWord(w) {
			lost = append(lost, w)
		}
	}
	if len(lost) > 0 {
		show := lost
		if len(show) > 10 {
			show = show[:10]
		}
		probs = append(probs, fmt.Sprintf("%d of %d words lost, e.g. %q", len(lost), len(want.words), show))
	}
	lower := strings.ToLower(out.norm)
	for _, h := range want.hosts {
		if !strings.Contains(lower, h) {
			probs = append(probs, fmt.Sprintf("link host %q lost", h))
		}
	}
	for _, s := range want.must {
		if !strings.Contains(out.norm, s) {
			probs = append(probs, fmt.Sprintf("expected text %q missing", s))
		}
	}
	return probs
}

// ---------------------------------------------------------------------------
// Code tables.

var advWideRanges = [...][2]rune{
	{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec}, {0x23f0, 0x23f0}, {0x23f3, 0x23f3},
	{0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267f, 0x267f}, {0x2693, 0x2693}, {0x26a1, 0x26a1},
	{0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5}, {0x26ce, 0x26ce}, {0x26d4, 0x26d4}, {0x26ea, 0x26ea},
	{0x26f2, 0x26f3}, {0x26f5, 0x26f5}, {0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b},
	{0x2728, 0x2728}, {0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55},
	{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xa960, 0xa97f},
	{0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6},
	{0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251},
	{0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f90c, 0x1f9ff}, {0x1fa70, 0x1faff},
	{0x20000, 0x3fffd},
}

// advWidth is the number of monospace columns s takes: East Asian wide and
// fullwidth characters and emoji take two, marks, joiners and variation
// selectors none.
func advWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2060 || r == 0xfeff,
			r >= 0xfe00 && r <= 0xfe0f, r >= 0x1f3fb && r <= 0x1f3ff, unicode.In(r, unicode.Mn, unicode.Me):
		case advWide(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

func advWide(r rune) bool {
	for _, rg := range advWideRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

var advPadRun = regexp.MustCompile(` {4,}`)

// advCodeBlocks returns the code blocks of the output's mrkdwn texts,
// entities decoded and U+200B dropped.
func advCodeBlocks(msgs []map[string]any) []string {
	var blocks []string
	for _, m := range msgs {
		for _, s := range advMrkdwnTexts(m) {
			if s.where == "notification text" {
				continue
			}
			parts := strings.Split(s.text, "```")
			for i := 1; i < len(parts); i += 2 {
				blocks = append(blocks, advEntities.Replace(strings.ReplaceAll(strings.Trim(parts[i], "\n"), "\u200b", "")))
			}
		}
	}
	return blocks
}

// advTableProblems checks code blocks. A block holding one of the payload's
// tables keeps its columns aligned by display width and no line wider than
// 120 columns (a wider cell must wrap, or the table become a list); in any
// other block, a line over 120 columns padded with runs of spaces is a table
// laid out too wide, unless the model wrote that line itself.
func advTableProblems(msgs []map[string]any, want advWant) []string {
	var probs []string
	inInput := func(line string) bool {
		for _, t := range want.texts {
			if strings.Contains(t, strings.TrimRight(line, " ")) {
				return true
			}
		}
		return false
	}
	for bi, block := range advCodeBlocks(msgs) {
		lines := strings.Split(block, "\n")
		isTable := false
		for _, t := range want.tables {
			p, rows := advAlignment(lines, t, bi)
			probs = append(probs, p...)
			isTable = isTable || rows >= 2
		}
		for li, line := range lines {
			w := advWidth(line)
			if w <= 120 || inInput(line) {
				continue
			}
			switch {
			case isTable:
				probs = append(probs, fmt.Sprintf("code block %d holds a table and its line %d is %d columns wide: %q", bi, li, w, advShort(line)))
			case advPadRun.MatchString(strings.TrimLeft(line, " ")):
				probs = append(probs, fmt.Sprintf("code block %d line %d is %d columns wide, padded with spaces: %q", bi, li, w, advShort(line)))
			}
		}
	}
	return probs
}

// advAlignment finds the rows of table t in lines and reports columns whose
// cells neither start nor end (nor centre) at the same display column; rows
// is how many rows of t it found.
func advAlignment(lines []string, t [][]string, bi int) (probs []string, rows int) {
	type span struct{ start, end int }
	var found [][]span
	var which []string
	used := map[int]bool{}
	for _, row := range t {
		for li, line := range lines {
			if used[li] {
				continue
			}
			spans := make([]span, len(row))
			pos, ok := 0, true
			for k, c := range row {
				c = strings.Trim(strings.TrimSpace(c), "*`")
				if c == "" {
					spans[k] = span{-1, -1}
					continue
				}
				j := strings.Index(line[pos:], c)
				if j < 0 {
					ok = false
					break
				}
				a := pos + j
				spans[k] = span{advWidth(line[:a]), advWidth(line[:a+len(c)])}
				pos = a + len(c)
			}
			if ok {
				used[li] = true
				found = append(found, spans)
				which = append(which, line)
				break
			}
		}
	}
	if len(found) < 2 {
		return nil, len(found)
	}
	for k := range t[0] {
		var ss []span
		var ls []string
		for r, spans := range found {
			if k < len(spans) && spans[k].start >= 0 {
				ss = append(ss, spans[k])
				ls = append(ls, which[r])
			}
		}
		if len(ss) < 2 {
			continue
		}
		sameStart, sameEnd, sameMid := true, true, true
		for _, s := range ss[1:] {
			sameStart = sameStart && s.start == ss[0].start
			sameEnd = sameEnd && s.end == ss[0].end
			d := (s.start + s.end) - (ss[0].start + ss[0].end)
			sameMid = sameMid && d >= -1 && d <= 1
		}
		if !sameStart && !sameEnd && !sameMid {
			r := 1
			for r < len(ss)-1 && ss[r].start == ss[0].start {
				r++
			}
			probs = append(probs, fmt.Sprintf("code block %d: table column %d misaligned: %q has it at columns %d-%d, %q at %d-%d",
				bi, k, advShort(ls[0]), ss[0].start, ss[0].end, advShort(ls[r]), ss[r].start, ss[r].end))
		}
	}
	return probs, len(found)
}

// ---------------------------------------------------------------------------
// Self-tests: every invariant's checker catches a known-bad case (and lets a
// known-good one pass), so no check passes by being unable to fail.

func advMessage(t *testing.T, js string) blockkit.Message {
	t.Helper()
	var m blockkit.Message
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad test message %s: %v", js, err)
	}
	return m
}

func advHas(probs []advProblem, inv string) bool {
	for _, p := range probs {
		if p.inv == inv {
			return true
		}
	}
	return false
}

func TestAdversarialCheckersCatchKnownBad(t *testing.T) {
	t.Parallel()
	emoji := func(n int) string { return strings.Repeat("🚀", n) }
	sec := func(text string) string {
		return `{"type":"section","text":{"type":"mrkdwn","text":` + advQuote(text) + `}}`
	}
	btn := func(extra string) string {
		return `{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"a"` + extra + `}`
	}
	opt := func(text string) string {
		return `{"text":{"type":"plain_text","text":` + advQuote(text) + `},"value":"v"}`
	}
	opts := func(n int) string {
		var o []string
		for i := range n {
			o = append(o, opt(fmt.Sprintf("o%d", i)))
		}
		return strings.Join(o, ",")
	}
	many := func(n int, s string) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	actions := func(els string) string { return `{"type":"actions","elements":[` + els + `]}` }

	t.Run("slack limits", func(t *testing.T) {
		t.Parallel()
		good := `{"text":"hi","blocks":[` + strings.Join([]string{
			`{"type":"header","text":{"type":"plain_text","text":` + advQuote(emoji(75)) + `}}`,
			sec(strings.Repeat("a", 3000)),
			`{"type":"section","fields":[` + many(10, `{"type":"mrkdwn","text":"f"}`) + `]}`,
			`{"type":"context","elements":[` + many(10, `{"type":"mrkdwn","text":"c"}`) + `]}`,
			actions(btn(`,"style":"primary","url":"https://x.io"`) + `,{"type":"overflow","action_id":"o","options":[` + opts(2) + `]},` +
				`{"type":"static_select","action_id":"s","options":[` + opts(100) + `]},{"type":"datepicker","action_id":"d","initial_date":"2024-02-29"},` +
				`{"type":"timepicker","action_id":"t","initial_time":"23:59"}`),
			`{"type":"image","image_url":"https://x.io/a.png","alt_text":"chart"}`,
			`{"type":"video","alt_text":"v","title":{"type":"plain_text","text":"t"},"video_url":"https://v.io/e","thumbnail_url":"https://v.io/t.png"}`,
			`{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"x"}]}]}`,
			`{"type":"table","rows":[[{"type":"raw_text","text":"a"}]]}`,
		}, ",") + `]}`
		var gm map[string]any
		if err := advDecode([]byte(good), &gm); err != nil {
			t.Fatal(err)
		}
		if p := advLimitProblems(gm); len(p) > 0 {
			t.Fatalf("a message within every limit is flagged: %q", p)
		}
		bad := map[string]string{
			"header of 151 ASCII characters":     `{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("h", 151) + `"}}`,
			"header of 76 emoji (152 UTF-16)":    `{"type":"header","text":{"type":"plain_text","text":` + advQuote(emoji(76)) + `}}`,
			"mrkdwn header":                      `{"type":"header","text":{"type":"mrkdwn","text":"h"}}`,
			"section of 3001":                    sec(strings.Repeat("a", 3001)),
			"section of 1501 emoji":              sec(emoji(1501)),
			"empty section text":                 `{"type":"section","text":{"type":"mrkdwn","text":""}}`,
			"field of 2001":                      `{"type":"section","fields":[{"type":"mrkdwn","text":"` + strings.Repeat("f", 2001) + `"}]}`,
			"11 fields":                          `{"type":"section","fields":[` + many(11, `{"type":"mrkdwn","text":"f"}`) + `]}`,
			"11 context elements":                `{"type":"context","elements":[` + many(11, `{"type":"mrkdwn","text":"c"}`) + `]}`,
			"context element of 2001":            `{"type":"context","elements":[{"type":"plain_text","text":"` + strings.Repeat("c", 2001) + `"}]}`,
			"block_id of 256":                    `{"type":"divider","block_id":"` + strings.Repeat("b", 256) + `"}`,
			"button text of 76":                  actions(`{"type":"button","text":{"type":"plain_text","text":"` + strings.Repeat("b", 76) + `"}}`),
			"button url of 3001":                 actions(btn(`,"url":"https://x.io/` + strings.Repeat("u", 2990) + `"`)),
			"button style success":               actions(btn(`,"style":"success"`)),
			"26 buttons":                         actions(many(26, `{"type":"button","text":{"type":"plain_text","text":"b"}}`)),
			"duplicate action_id":                actions(btn("") + "," + btn("")),
			"overflow with 1 option":             actions(`{"type":"overflow","options":[` + opts(1) + `]}`),
			"overflow with 6 options":            actions(`{"type":"overflow","options":[` + opts(6) + `]}`),
			"select without options":             actions(`{"type":"static_select","placeholder":{"type":"plain_text","text":"p"}}`),
			"select with 101 options":            actions(`{"type":"multi_static_select","options":[` + opts(101) + `]}`),
			"option text of 76":                  actions(`{"type":"static_select","options":[` + opt(strings.Repeat("o", 76)) + `]}`),
			"datepicker tomorrow":                actions(`{"type":"datepicker","initial_date":"tomorrow"}`),
			"datepicker 2023-02-29":              actions(`{"type":"datepicker","initial_date":"2023-02-29"}`),
			"timepicker 24:00":                   actions(`{"type":"timepicker","initial_time":"24:00"}`),
			"input element in actions":           actions(`{"type":"plain_text_input","action_id":"i"}`),
			"video without title":                `{"type":"video","alt_text":"v","video_url":"https://v.io/e","thumbnail_url":"https://v.io/t.png"}`,
			"video without thumbnail_url":        `{"type":"video","alt_text":"v","title":{"type":"plain_text","text":"t"},"video_url":"https://v.io/e"}`,
			"image without alt_text":             `{"type":"image","image_url":"https://x.io/a.png"}`,
			"image with a file URL":              `{"type":"image","image_url":"file:///tmp/a.png","alt_text":"a"}`,
			"context image without alt_text":     `{"type":"context","elements":[{"type":"image","image_url":"https://x.io/a.png"}]}`,
			"empty rich_text":                    `{"type":"rich_text","elements":[]}`,
			"rich_text with a paragraph element": `{"type":"rich_text","elements":[{"type":"paragraph","elements":[{"type":"text","text":"x"}]}]}`,
			"input block":                        `{"type":"input","label":{"type":"plain_text","text":"l"},"element":{"type":"plain_text_input"}}`,
			"unknown block type":                 `{"type":"callout","text":"x"}`,
			"two tables":                         `{"type":"table","rows":[[{"type":"raw_text","text":"a"}]]},{"type":"table","rows":[[{"type":"raw_text","text":"b"}]]}`,
			"101 table rows":                     `{"type":"table","rows":[` + many(101, `[{"type":"raw_text","text":"a"}]`) + `]}`,
			"duplicate block_id":                 `{"type":"divider","block_id":"x"},{"type":"divider","block_id":"x"}`,
			"51 blocks":                          many(51, `{"type":"divider"}`),
		}
		for name, blocks := range bad {
			var m map[string]any
			if err := advDecode([]byte(`{"text":"x","blocks":[`+blocks+`]}`), &m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(advLimitProblems(m)) == 0 {
				t.Errorf("%s: not caught", name)
			}
		}
	})

	t.Run("tokens", func(t *testing.T) {
		t.Parallel()
		for _, s := range []string{"> quote\n>>> more", "<https://x.io|x> &lt; &gt; &amp;", "<@U123ABC> <@W1B2>", "<#C1|general> <#C9>",
			"<!here> <!channel|channel>", "<!subteam^S12|@team>", "<!date^1392734382^{date}|Feb 18>", "<mailto:a@b.io|a@b.io>"} {
			if p := advTokenProblems(s, nil); len(p) > 0 {
				t.Errorf("good mrkdwn %q flagged: %q", s, p)
			}
		}
		for _, s := range []string{"a > b", "x < y", "<@someone>", "<https://x.io/a|cut", "AT&amp;amp;T",
			"<!date^1392734382^{date}>", "<#general>", "a &amp;lt; b", "<b>bold</b>", " > not a quote"} {
			if len(advTokenProblems(s, nil)) == 0 {
				t.Errorf("broken mrkdwn %q not caught", s)
			}
		}
		if p := advTokenProblems("AT&amp;amp;T", []byte(`"AT&amp;amp;T"`)); len(p) > 0 {
			t.Errorf("a double escape the payload wrote itself is flagged: %q", p)
		}
	})

	payload := `{"status":"success","messages":[{"blocks":[` + sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ~5 minutes") + `]}],"report_content":"ignored"}`
	c := advCase{name: "self", payload: []byte(payload)}

	t.Run("lost text", func(t *testing.T) {
		t.Parallel()
		keep := advMessage(t, `{"text":"x","blocks":[`+sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ~5 minutes")+`]}`)
		if p := advInspect(c, []blockkit.Message{keep}); advHas(p, invLost) {
			t.Errorf("a faithful output is flagged: %v", p)
		}
		drop := advMessage(t, `{"text":"x","blocks":[`+sec("Deploy finished, see the run ~5 minutes")+`]}`)
		p := advInspect(c, []blockkit.Message{drop})
		if !advHas(p, invLost) {
			t.Errorf("a lost word and a lost link host are not caught: %v", p)
		}
		scalar := advCase{name: "self", payload: []byte(`{"messages":42,"report_content":"The **migration** is complete"}`)}
		if p := advInspect(scalar, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("42")+`]}`)}); !advHas(p, invLost) {
			t.Errorf("report_content lost behind unusable messages is not caught: %v", p)
		}
		fenced := advCase{name: "self", payload: []byte(`{"messages":"` + "```json\\n" + `[{\"blocks\":[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"Quarterly numbers\"}}]}]` + "\\n```" + `"}`)}
		if w := advDerive(fenced.payload, fenced.expect).words; strings.Join(w, " ") != "Quarterly numbers" {
			t.Errorf("fenced JSON read as %q, want the words of its texts only", w)
		}
		must := advCase{name: "self", payload: []byte(`{"messages":"x"}`), expect: advExpect{Derive: "none", MustContain: []string{"Deploy finished"}, MustNotContain: []string{`"type"`}}}
		p = advInspect(must, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("Deploy failed: {\"type\": \"section\"}")+`]}`)})
		if !advHas(p, invLost) || !advHas(p, invExpect) {
			t.Errorf("a missing must_contain or a shown must_not_contain is not caught: %v", p)
		}
	})

	t.Run("empty answer", func(t *testing.T) {
		t.Parallel()
		p := advInspect(c, []blockkit.Message{advMessage(t, `{"text":"The answer was empty.","blocks":[`+sec("_The answer was empty._")+`]}`)})
		if !advHas(p, invEmpty) {
			t.Errorf("an empty-answer message for a payload with an answer is not caught: %v", p)
		}
	})

	t.Run("tilde", func(t *testing.T) {
		t.Parallel()
		p := advInspect(c, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ∼5 minutes")+`]}`)})
		if !advHas(p, invTilde) {
			t.Errorf("a look-alike tilde is not caught: %v", p)
		}
		for s, want := range map[string]string{
			"~5 minutes":            "~5",
			"cd ~/projects/app now": "~/projects/app",
			"approx ~3~ items":      "",
			"~/bin and ~5 minutes":  "~/bin ~5",
			"~~gone~~ and ~x~":      "",
		} {
			if got := strings.Join(advLoneTildes(s), " "); got != want {
				t.Errorf("lone tildes of %q = %q, want %q", s, got, want)
			}
		}
	})

	t.Run("code table", func(t *testing.T) {
		t.Parallel()
		tbl := "| City | Pop |\n|---|---|\n| 東京 | 14 |\n| Oslo | 7 |"
		tc := advCase{name: "self", payload: []byte(`{"messages":[{"blocks":[` + sec(tbl) + `]}]}`)}
		aligned := "```\nCity  Pop\n----  ---\n東京  14\nOslo  7\n```"
		runeAligned := "```\nCity  Pop\n----  ---\n東京    14\nOslo  7\n```"
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(aligned)+`]}`)}); advHas(p, invTable) {
			t.Errorf("an aligned table is flagged: %v", p)
		}
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(runeAligned)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a table aligned by rune count is not caught: %v", p)
		}
		wide := "```\nCity" + strings.Repeat(" ", 130) + "Pop\n```"
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(wide)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a 137-column padded line is not caught: %v", p)
		}
		long := strings.Repeat("word ", 30)
		lc := advCase{name: "self", payload: []byte(`{"messages":[{"blocks":[` + sec("| Step | Detail |\n|---|---|\n| 1 | "+long+"|\n| 2 | short |") + `]}]}`)}
		lastWide := "```\nStep  Detail\n----  ------\n1     " + long + "\n2     short\n```"
		if p := advInspect(lc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(lastWide)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a table whose last column runs 156 columns wide is not caught: %v", p)
		}
	})

	t.Run("repair and validate", func(t *testing.T) {
		t.Parallel()
		for name, f := range map[string]func([]byte) ([]blockkit.Message, error){
			"panics":      func([]byte) ([]blockkit.Message, error) { panic("boom") },
			"errors":      func([]byte) ([]blockkit.Message, error) { return nil, errors.New("no") },
			"no messages": func([]byte) ([]blockkit.Message, error) { return nil, nil },
		} {
			if p := advRun(c, f); !advHas(p, invRepair) {
				t.Errorf("a repair that %s is not caught: %v", name, p)
			}
		}
		invalid := advMessage(t, `{"text":"x","blocks":[`+sec(strings.Repeat("a", 3001))+`]}`)
		if p := advInspect(c, []blockkit.Message{invalid}); !advHas(p, invValidate) || !advHas(p, invLimits) {
			t.Errorf("an oversized section is not caught by validate and slack-limits: %v", p)
		}
	})
}

func advQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
