package blockkit_test

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

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
