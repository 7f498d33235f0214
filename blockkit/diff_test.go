package blockkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The differential test runs the pinned slackify-markdown (npm, the most used
// Markdown→mrkdwn converter) over testdata/corpus/*.md and compares its
// output with Mrkdwn's. Both outputs are first stripped of U+200B (which
// slackify puts around every marker) and trailing whitespace. Every
// remaining difference must belong to a category below, each with the
// reason ours is right; a category is a pair of rewrites that map both
// outputs to a common form. The test fails on any difference left after
// all rewrites, and on a category that docs/blockkit-differences.md does not
// list. Categories are applied in order, so later ones see earlier results.

// diffCategory is one intended difference between Mrkdwn and slackify.
type diffCategory struct {
	name   string
	reason string
	ours   func(string) string // nil: leave ours alone
	theirs func(string) string // nil: leave slackify's alone
}

func reRewrite(re, repl string) func(string) string {
	r := regexp.MustCompile(re)
	return func(s string) string { return r.ReplaceAllString(s, repl) }
}

func chain(fs ...func(string) string) func(string) string {
	return func(s string) string {
		for _, f := range fs {
			s = f(s)
		}
		return s
	}
}

// mapFences applies f to the text outside ``` code blocks (inside=false) or
// to the lines inside them (inside=true).
func mapFences(s string, inside bool, f func(string) string) string {
	lines := strings.Split(s, "\n")
	in := false
	var out, chunk []string
	flush := func(wasInside bool) {
		if len(chunk) == 0 {
			return
		}
		text := strings.Join(chunk, "\n")
		if wasInside == inside {
			text = f(text)
		}
		out = append(out, text)
		chunk = nil
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " >"), "```") && strings.Count(l, "```") == 1 {
			flush(in)
			out = append(out, l)
			in = !in
			continue
		}
		chunk = append(chunk, l)
	}
	flush(in)
	return strings.Join(out, "\n")
}

var codeSpanRe = regexp.MustCompile("`[^`\n]+`")

// unescapeCode un-escapes & < > inside code blocks and code spans.
func unescapeCode(s string) string {
	un := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace
	s = mapFences(s, true, un)
	return mapFences(s, false, func(t string) string {
		return codeSpanRe.ReplaceAllStringFunc(t, un)
	})
}

// tableRows reduces a table to its cell words, one row per line: slackify
// writes GFM pipe rows, ours an aligned code block with a dashed rule.
var (
	pipeRowRe  = regexp.MustCompile(`(?m)^\|.*\|$`)
	pipeRuleRe = regexp.MustCompile(`^\|[\s:|-]+\|$`)
	dashRuleRe = regexp.MustCompile(`^[\s-]+$`)
)

func oursTableRows(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		// ``` / header / ----- rule / rows / ```
		if lines[i] == "```" && i+2 < len(lines) && dashRuleRe.MatchString(lines[i+2]) && strings.Contains(lines[i+2], "-") {
			end := i + 3
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			if end < len(lines) {
				out = append(out, entityUnescape(strings.Join(strings.Fields(lines[i+1]), " ")))
				for _, row := range lines[i+3 : end] {
					out = append(out, entityUnescape(strings.Join(strings.Fields(row), " ")))
				}
				i = end
				continue
			}
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

func theirsTableRows(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if !pipeRowRe.MatchString(l) {
			out = append(out, l)
			continue
		}
		if pipeRuleRe.MatchString(l) {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		var words []string
		for _, c := range cells {
			c = strings.ReplaceAll(strings.TrimSpace(c), "`", "")
			words = append(words, strings.Fields(c)...)
		}
		out = append(out, entityUnescape(strings.Join(words, " ")))
	}
	return strings.Join(out, "\n")
}

// unindentListCode removes the indentation slackify gives the content and
// closing fence of a code block inside a list item, and the indentation of
// our opening fence there; the code itself is then compared byte for byte.
func unindentListCode(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "```") {
			if indent < 0 {
				indent = len(l) - len(t)
				lines[i] = t
				if strings.Count(t, "```") > 1 { // one-line block
					indent = -1
				}
				continue
			}
			lines[i] = t
			indent = -1
			continue
		}
		if indent > 0 {
			k := 0
			for k < indent && k < len(l) && l[k] == ' ' {
				k++
			}
			lines[i] = l[k:]
		}
	}
	return strings.Join(lines, "\n")
}

// dropLooseListGaps removes the blank lines slackify leaves between the
// items of a loose list.
func dropLooseListGaps(s string) string {
	item := regexp.MustCompile(`^\s*(?:•|\d+\.)\s|^    `)
	lines := strings.Split(s, "\n")
	var out []string
	for i, l := range lines {
		if l == "" && i > 0 && i+1 < len(lines) && item.MatchString(lines[i-1]) && item.MatchString(lines[i+1]) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

var diffCategories = []diffCategory{
	{
		name:   "table-as-code-block",
		reason: "mrkdwn has no tables: slackify's raw | pipes are unreadable in Slack's proportional font, ours is an aligned monospaced block (and FromMarkdown uses a table block).",
		ours:   oursTableRows,
		theirs: theirsTableRows,
	},
	{
		name:   "loose-list-compacted",
		reason: "Items of a loose list are not separated by blank lines: Slack shows every blank line, so the list would fall apart.",
		theirs: dropLooseListGaps,
	},
	{
		name:   "code-in-list-verbatim",
		reason: "A code block inside a list item keeps its content byte for byte; slackify indents every code line by 4 spaces, which changes the code.",
		ours:   unindentListCode,
		theirs: unindentListCode,
	},
	{
		name:   "escaped-code",
		reason: "Slack needs & < > escaped everywhere, code included: slackify leaves them raw in code, where a <!here> or <https://x> would still be parsed by Slack.",
		ours:   unescapeCode,
		theirs: unescapeCode,
	},
	{
		name:   "task-list-boxes",
		reason: "Task list items render as ☐/☑; slackify leaves literal [ ] and [x] behind a bullet.",
		ours:   chain(reRewrite(`(?m)^((?:> )?\s*)☐ `, "${1}• [ ] "), reRewrite(`(?m)^((?:> )?\s*)☑ `, "${1}• [x] ")),
	},
	{
		name:   "nested-bullet-glyphs",
		reason: "Nested list levels use ◦ and ▪ so depth stays visible; slackify uses • at every depth.",
		ours:   reRewrite(`(?m)^((?:> )?\s*)[◦▪] `, "${1}• "),
	},
	{
		name:   "list-marker-spacing",
		reason: "One space after • or 1. as Slack itself writes lists; slackify pads markers to 4 columns, which shows as a wide gap in a proportional font.",
		ours:   reRewrite(`(?m)^((?:> )?\s*)(•|\d+\.) +`, "${1}${2} "),
		theirs: reRewrite(`(?m)^((?:> )?\s*)(•|\d+\.) +`, "${1}${2} "),
	},
	{
		name:   "slack-tokens-kept",
		reason: "Slack tokens the model wrote (<https://x|label>, <#C1|name>) are copied as they are; slackify escapes or re-links them into broken text like &lt;<https://x%7Clabel|…> …&gt;.",
		theirs: chain(
			reRewrite(`&lt;<([^<>|\s]+)%7C([^<>|\s]+)\|[^<>]*> ([^<>]*?)&gt;`, "<$1|$2 $3>"),
			reRewrite(`<([@#!][A-Za-z0-9^]+\|[^<>\n]*?)&gt;`, "<$1>"),
		),
	},
	{
		name:   "link-label-plain",
		reason: "Link labels are plain text (Slack does not format inside them, and a nested <…> breaks the token): a badge image inside a link shows as its alt text, **x** and `x` lose their markers.",
		theirs: chain(
			reRewrite(`<([^<>|\s]+)\|<[^<>|\s]+\|([^<>]*)>>`, "<$1|$2>"),
			func(s string) string {
				return regexp.MustCompile(`<([^<>|\s]+)\|([^<>]*)>`).ReplaceAllStringFunc(s, func(tok string) string {
					i := strings.IndexByte(tok, '|')
					return tok[:i] + strings.NewReplacer("*", "", "`", "", "_", "", "~", "").Replace(tok[i:])
				})
			},
		),
	},
	{
		name:   "link-label-bar",
		reason: "A | in a link label would end Slack's <url|label> token early; it is written as the look-alike ∣.",
		ours:   reRewrite(`∣`, "|"),
	},
	{
		name:   "url-label-underscores",
		reason: "A bare URL keeps its underscores; slackify reads them in the link label as emphasis and drops them (<…/file_name.txt|…/filename.txt>).",
		theirs: func(s string) string {
			return regexp.MustCompile(`<([^<>|\s]+)\|([^<>]+)>`).ReplaceAllStringFunc(s, func(tok string) string {
				i := strings.IndexByte(tok, '|')
				u, l := tok[1:i], tok[i+1:len(tok)-1]
				if strings.Contains(u, "_") && strings.ReplaceAll(ampUnescape(u), "_", "") == ampUnescape(l) {
					return "<" + u + "|" + ampUnescape(u) + ">"
				}
				return tok
			})
		},
	},
	{
		name:   "autolink-short-form",
		reason: "A bare URL or autolink is written <url>, not <url|url>, and & in a URL is escaped like everywhere else; Slack shows both forms the same.",
		ours: func(s string) string {
			return regexp.MustCompile(`<https?://[^<>|\s]*>`).ReplaceAllStringFunc(s, ampUnescape)
		},
		theirs: func(s string) string {
			return regexp.MustCompile(`<([^<>|\s]+)\|([^<>]+)>`).ReplaceAllStringFunc(s, func(tok string) string {
				i := strings.IndexByte(tok, '|')
				u, l := tok[1:i], tok[i+1:len(tok)-1]
				if ampUnescape(u) == ampUnescape(l) {
					return "<" + ampUnescape(u) + ">"
				}
				return tok
			})
		},
	},
	{
		name:   "literal-markers",
		reason: "Markdown's escaped or unpaired * _ ~ ` stay literal: mrkdwn has no escapes, so they become look-alike characters; slackify drops the backslash and \\*x\\* turns bold in Slack.",
		ours: func(s string) string {
			return strings.NewReplacer("∗", "*", "＿", "_", "∼", "~", "ˋ", "`").Replace(s)
		},
	},
	{
		name:   "code-span-with-backtick",
		reason: "A code span holding a backtick cannot use single backticks; slackify's double backticks are not mrkdwn and show literally.",
		ours:   reRewrite("```([^`\n]*`[^\n]*?)```", "``$1``"),
	},
	{
		name:   "hard-break-newline",
		reason: "A hard line break is a newline; slackify writes a trailing backslash, which Slack shows.",
		theirs: reRewrite(`\\\n`, "\n"),
	},
	{
		name:   "html-escaped",
		reason: "Raw HTML is shown escaped, as the model wrote it (a <br> is a line break); slackify passes tags through, which Slack swallows or shows garbled.",
		theirs: func(s string) string {
			return mapFences(s, false, chain(
				reRewrite(`(?i)<br\s*/?>`, ""),
				reRewrite(`<(/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?)>`, "&lt;$1&gt;"),
			))
		},
	},
	{
		name:   "escaped-gt",
		reason: "> is escaped as &gt; everywhere but at the start of a quote line, as Slack asks; slackify leaves many raw.",
		ours:   func(s string) string { return mapFences(s, false, strings.NewReplacer("&gt;", ">").Replace) },
		theirs: func(s string) string { return mapFences(s, false, strings.NewReplacer("&gt;", ">").Replace) },
	},
	{
		name:   "rule-line",
		reason: "A thematic break is a line of ─ (FromMarkdown uses a divider block); slackify's *** is literal asterisks in Slack.",
		ours:   reRewrite(`(?m)^────────────────$`, "***"),
	},
	{
		name:   "single-level-quote",
		reason: "Slack quotes have one level and end at a line without >: nested quotes are flattened, and a blank line inside a quote keeps its > so the quote stays one block.",
		ours:   reRewrite(`(?m)^>$`, ""),
		theirs: reRewrite(`(?m)^> > `, "> "),
	},
}

func ampUnescape(s string) string { return strings.ReplaceAll(s, "&amp;", "&") }

func entityUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(s)
}

// diffBase strips what is never a difference: U+200B and trailing spaces.
func diffBase(s string) string {
	s = strings.ReplaceAll(s, "\u200b", "")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// changedLines counts lines of a that b does not have, as a multiset.
func changedLines(a, b string) int {
	seen := map[string]int{}
	for _, l := range strings.Split(b, "\n") {
		seen[l]++
	}
	n := 0
	for _, l := range strings.Split(a, "\n") {
		if seen[l] > 0 {
			seen[l]--
			continue
		}
		n++
	}
	return n
}

// peerNodeModules is where `make test` (npm ci --prefix testdata/npm)
// installs the pinned JavaScript peers.
const peerNodeModules = "../testdata/npm/node_modules"

// requireSlackify fails the test, saying what to run, unless node and the
// pinned slackify-markdown are installed.
func requireSlackify(tb testing.TB) (node string) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("node is not installed: install Node.js 20 or newer, then run `make test` (it runs `npm ci --prefix testdata/npm`)")
	}
	data, err := os.ReadFile(filepath.Join(peerNodeModules, "slackify-markdown", "package.json"))
	if err != nil {
		tb.Fatalf("slackify-markdown is not installed (%v): run `make test`, or `npm ci --prefix testdata/npm` from the repository root", err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version != "5.0.0" {
		tb.Fatalf("testdata/npm/node_modules has slackify-markdown %q, want 5.0.0: run `npm ci --prefix testdata/npm`", pkg.Version)
	}
	return node
}

// slackify runs testdata/npm/slackify.mjs over files.
func slackify(tb testing.TB, node string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command(node, append([]string{"../testdata/npm/slackify.mjs"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node slackify.mjs: %v\n%s", err, stderr.String())
	}
	return out
}

func corpusFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("testdata/corpus/*.md")
	if err != nil || len(files) < 15 {
		tb.Fatalf("testdata/corpus has %d documents, want at least 15 (%v)", len(files), err)
	}
	sort.Strings(files)
	return files
}

func TestDifferentialSlackifyMarkdown(t *testing.T) {
	node := requireSlackify(t)
	files := corpusFiles(t)
	var theirs []string
	if err := json.Unmarshal(slackify(t, node, files...), &theirs); err != nil || len(theirs) != len(files) {
		t.Fatalf("slackify.mjs printed %d results for %d files (%v)", len(theirs), len(files), err)
	}

	doc, err := os.ReadFile("../docs/blockkit-differences.md")
	if err != nil {
		t.Fatalf("docs/blockkit-differences.md: %v", err)
	}
	for _, c := range diffCategories {
		if !strings.Contains(string(doc), "`"+c.name+"`") {
			t.Errorf("category %s is not listed in docs/blockkit-differences.md", c.name)
		}
	}

	type tally struct{ docs, lines int }
	counts := map[string]*tally{}
	identical := 0
	for i, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ours, their := diffBase(Mrkdwn(string(src))), diffBase(theirs[i])
		if ours == their {
			identical++
			continue
		}
		for _, c := range diffCategories {
			if ours == their {
				break
			}
			o, th := ours, their
			if c.ours != nil {
				o = c.ours(o)
			}
			if c.theirs != nil {
				th = c.theirs(th)
			}
			// A category counts where it rewrote one side, or both sides
			// unequally; a rewrite that changes both alike was no difference.
			oc, tc := o != ours, th != their
			if oc != tc || oc && tc && changedLines(ours, their) != changedLines(o, th) {
				if counts[c.name] == nil {
					counts[c.name] = &tally{}
				}
				counts[c.name].docs++
				counts[c.name].lines += max(changedLines(o, ours), changedLines(ours, o), changedLines(th, their), changedLines(their, th))
			}
			ours, their = o, th
		}
		if ours != their {
			t.Errorf("%s: difference from slackify-markdown outside every listed category:\n%s", filepath.Base(f), lineDiff(ours, their))
		}
	}

	var report strings.Builder
	fmt.Fprintf(&report, "%d documents, %d identical after removing U+200B and trailing spaces\n", len(files), identical)
	for _, c := range diffCategories {
		if tl := counts[c.name]; tl != nil {
			fmt.Fprintf(&report, "  %-24s %2d docs %4d lines\n", c.name, tl.docs, tl.lines)
		}
	}
	t.Log("differences from slackify-markdown 5.0.0 by category:\n" + report.String())
}

// lineDiff shows the lines that differ, ours (-) against slackify's (+).
func lineDiff(ours, theirs string) string {
	a, b := strings.Split(ours, "\n"), strings.Split(theirs, "\n")
	// Longest common subsequence, fine for documents of a few hundred lines.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
		case j == len(b) || i < len(a) && lcs[i+1][j] >= lcs[i][j+1]:
			fmt.Fprintf(&out, "  ours   - %q\n", a[i])
			i++
		default:
			fmt.Fprintf(&out, "  slackify+ %q\n", b[j])
			j++
		}
	}
	return out.String()
}
