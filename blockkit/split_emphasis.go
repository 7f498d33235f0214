package blockkit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Emphasis across a cut. Slack pairs *bold*, _italic_ and ~strike~ only
// within one text object, so a cut between the words of an emphasised run
// would show its markers raw on both sides. balanceEmphasis closes each run
// still open at the end of a piece and opens it again at the start of the
// next, when the run's closing marker follows on the next piece's first
// line.

// emphasisMarks are the mrkdwn markers that pair within a line.
const emphasisMarks = "*_~"

// balanceEmphasis closes and reopens across each cut the emphasis runs it
// splits, keeping every piece within max units: a piece with no room for
// its closing markers gives its last word to the next piece.
func balanceEmphasis(pieces []string, max int) []string {
	for i := 0; i+1 < len(pieces); i++ {
		p, next := pieces[i], pieces[i+1]
		if strings.HasPrefix(next, "```") || !strings.ContainsAny(p, emphasisMarks) {
			continue
		}
		first, _, _ := strings.Cut(next, "\n")
		open := closedLater(openEmphasis(lastLine(p)), first)
		if open == "" {
			continue
		}
		closing := reverse(open)
		for Len(p)+len(closing) > max {
			cut := strings.LastIndexByte(p, ' ')
			if cut <= strings.LastIndexByte(p, '\n') || cut <= 0 {
				break
			}
			p, next = strings.TrimRight(p[:cut], " "), p[cut+1:]+" "+next
		}
		if Len(p)+len(closing) > max || Len(next)+len(open) > max {
			continue
		}
		if again := closedLater(openEmphasis(lastLine(p)), first); again != open {
			continue
		}
		pieces[i], pieces[i+1] = p+closing, open+next
	}
	return pieces
}

// lastLine is the text after the last line break of s.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// reverse writes the markers of open in the order that closes them.
func reverse(open string) string {
	b := []byte(open)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// openEmphasis is the emphasis markers still open at the end of line, in
// the order they were opened. Code spans and <…> tokens are skipped.
func openEmphasis(line string) string {
	var open []byte
	scanMarks(line, func(c byte, opener, closer bool) {
		if k := strings.IndexByte(string(open), c); k >= 0 {
			if closer {
				open = append(open[:k], open[k+1:]...)
			}
			return
		}
		if opener {
			open = append(open, c)
		}
	})
	return string(open)
}

// closedLater keeps the markers of open that line closes.
func closedLater(open, line string) string {
	if open == "" {
		return ""
	}
	var kept []byte
	for i := 0; i < len(open); i++ {
		c := open[i]
		found := false
		scanMarks(line, func(m byte, _, closer bool) {
			found = found || m == c && closer
		})
		if found {
			kept = append(kept, c)
		}
	}
	return string(kept)
}

// scanMarks calls f for each emphasis marker of line outside code spans and
// <…> tokens: whether it can open a run (at a word's start) and whether it
// can close one (at a word's end).
func scanMarks(line string, f func(c byte, opener, closer bool)) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '`':
			if j := strings.IndexByte(line[i+1:], '`'); j >= 0 {
				i += j + 1
			}
			continue
		case c == '<':
			if j := strings.IndexByte(line[i+1:], '>'); j >= 0 {
				i += j + 1
			}
			continue
		case strings.IndexByte(emphasisMarks, c) < 0:
			continue
		}
		before, after := rune(' '), rune(' ')
		if i > 0 {
			before, _ = utf8.DecodeLastRuneInString(line[:i])
		}
		if i+1 < len(line) {
			after, _ = utf8.DecodeRuneInString(line[i+1:])
		}
		opener := !unicode.IsLetter(before) && !unicode.IsDigit(before) && !unicode.IsSpace(after) && after != rune(c)
		closer := !unicode.IsSpace(before) && before != rune(c) && !unicode.IsLetter(after) && !unicode.IsDigit(after)
		f(c, opener, closer)
	}
}
