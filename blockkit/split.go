package blockkit

import (
	"strings"
	"unicode/utf8"
)

// SplitMrkdwn splits mrkdwn text into pieces of at most max characters
// (runes), so each fits one text object. It cuts at a paragraph break where
// one falls in the second half of the allowance, else at a line break, else
// between words, and only then anywhere; a cut never falls inside an &entity;,
// a <…> link or mention token, or an inline `code` span. A ``` block that has
// to be cut is closed at the end of one piece and reopened at the start of the
// next, at a line break of the code where possible, so every piece renders on
// its own. Only whitespace at the cuts is dropped: the pieces together hold
// every word of text. Text already within max comes back as the only piece;
// empty text gives none. A max below 16 leaves no room for structure, and text
// is then cut every max runes.
func SplitMrkdwn(text string, max int) []string {
	if text == "" {
		return nil
	}
	if max < 1 {
		max = 1
	}
	if charCount(text) <= max {
		return []string{text}
	}
	if max < 16 {
		return chunkRunes(text, max)
	}
	var pieces []string
	reopen := false // the piece starts inside a code block: prefix "```\n"
	for i := 0; i < len(text); {
		prefix := ""
		if reopen {
			prefix = "```\n"
		}
		c, done := findCut(text, i, max-len(prefix), reopen)
		if done {
			if last := strings.TrimRight(prefix+text[i:], " \n"); strings.TrimSpace(last) != "" && last != "```" {
				pieces = append(pieces, last)
			}
			break
		}
		if c.code {
			pieces = append(pieces, prefix+text[i:c.pos]+"\n```")
		} else if piece := strings.TrimRight(prefix+text[i:c.pos], " \n"); strings.TrimSpace(piece) != "" {
			pieces = append(pieces, piece)
		}
		i, reopen = c.pos, c.code
		switch {
		case c.kind >= cutLine && c.code:
			i++ // the newline the closing fence replaced
		case c.kind >= cutLine:
			for i < len(text) && text[i] == '\n' {
				i++
			}
		case c.kind == cutWord:
			for i < len(text) && text[i] == ' ' {
				i++
			}
		}
	}
	return pieces
}

// Kinds of cut, worst first. A word cut inside code (cutCodeWord) inserts a
// line break into the code, so it comes after every other kind of boundary.
const (
	cutHard = iota
	cutCodeWord
	cutWord
	cutLine
	cutPara
)

// cut is a place to end a piece: before text[pos], after runes runes of it.
// code means it is inside a ``` block, which the piece must close.
type cut struct {
	pos, runes, kind int
	code             bool
}

// findCut scans text from start for the best cut within budget runes, or
// reports that the rest fits. inCode says whether start is inside a ``` block.
func findCut(text string, start, budget int, inCode bool) (cut, bool) {
	var best [cutPara + 1]cut // by kind; pos 0 means none
	record := func(kind, pos, runes int, code bool) {
		if pos <= start || (code && runes+4 > budget) {
			return
		}
		best[kind] = cut{pos: pos, runes: runes, kind: kind, code: code}
	}
	inSpan := false // inside `inline code`
	codeStart := start
	runes := 0
	j := start
	for j < len(text) {
		c := text[j]
		// Inside code, a cut right after the opening fence or right before
		// the closing one would leave an empty block on one side.
		codeEdge := inCode && (j <= codeStart || c == '\n' && strings.HasPrefix(text[j+1:], "```"))
		if !codeEdge && (!inSpan || c == '\n') {
			record(cutHard, j, runes, inCode)
		}
		switch {
		case c == '\n' && !codeEdge:
			record(cutLine, j, runes, inCode)
			if j+1 < len(text) && text[j+1] == '\n' {
				record(cutPara, j, runes, inCode)
			}
		case c == ' ' && !inSpan && inCode:
			record(cutCodeWord, j, runes, inCode)
		case c == ' ' && !inSpan:
			record(cutWord, j, runes, inCode)
		}
		if runes >= budget {
			break
		}
		width := 1 // runes the next atom takes
		next := j + 1
		switch {
		case c == '`' && strings.HasPrefix(text[j:], "```"):
			next, width = j+3, 3
			for next < len(text) && text[next] == '`' {
				next, width = next+1, width+1
			}
			inCode, inSpan = !inCode, false
			codeStart = next
		case c == '`' && !inCode:
			inSpan = !inSpan
		case c == '\n':
			inSpan = false
		case c == '<' && !inCode:
			if k := tokenEnd(text, j); k > 0 {
				next, width = k, utf8.RuneCountInString(text[j:k])
			}
		case c == '&':
			if k := entityEnd(text, j); k > 0 {
				next, width = k, k-j
			}
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRuneInString(text[j:])
			next = j + size
		}
		if runes+width > budget {
			break
		}
		runes += width
		j = next
	}
	if j >= len(text) {
		return cut{}, true
	}
	for _, kind := range []int{cutPara, cutLine, cutWord} {
		if best[kind].pos > 0 && best[kind].runes >= budget/2 {
			return best[kind], false
		}
	}
	pick := best[cutPara]
	if best[cutLine].pos > pick.pos {
		pick = best[cutLine]
	}
	for _, kind := range []int{cutWord, cutCodeWord, cutHard} {
		if pick.pos == 0 {
			pick = best[kind]
		}
	}
	if pick.pos > 0 {
		return pick, false
	}
	// One atom (a huge token) is over the budget on its own: cut inside it.
	limit := budget
	if inCode {
		limit -= 4 // room to close the code block
	}
	pos := start
	for n := 0; n < limit && pos < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[pos:])
		pos += size
	}
	return cut{pos: max(pos, start+1), kind: cutHard, code: inCode}, false
}

// tokenEnd returns the index just past the <…> token starting at text[j], or
// 0 if the < opens none (our mrkdwn escapes every literal <, so in practice
// every < starts a token).
func tokenEnd(text string, j int) int {
	for k := j + 1; k < len(text); k++ {
		switch text[k] {
		case '>':
			return k + 1
		case '<', '\n':
			return 0
		}
	}
	return 0
}

// entityEnd returns the index just past the entity starting at text[j], or 0.
func entityEnd(text string, j int) int {
	for k := j + 1; k < len(text) && k < j+12; k++ {
		c := text[k]
		if c == ';' {
			if k > j+1 {
				return k + 1
			}
			return 0
		}
		if !(c == '#' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return 0
		}
	}
	return 0
}

// chunkRunes cuts text every max runes.
func chunkRunes(text string, max int) []string {
	var pieces []string
	for len(text) > 0 {
		end, n := 0, 0
		for end < len(text) && n < max {
			_, size := utf8.DecodeRuneInString(text[end:])
			end += size
			n++
		}
		pieces = append(pieces, text[:end])
		text = text[end:]
	}
	return pieces
}
