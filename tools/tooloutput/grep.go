package tooloutput

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

type grepArgs struct {
	Pattern    string  `json:"pattern"`
	Path       *string `json:"path"`
	Context    int     `json:"context"`
	MaxResults int     `json:"max_results"`
}

// errGrepFull stops a search whose answer is complete.
var errGrepFull = errors.New("grep: enough results")

func (p *fsProvider) grep(ctx context.Context, raw json.RawMessage) (string, error) {
	var a grepArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("bad arguments for Grep: %w", err)
	}
	if len(a.Pattern) > grepMaxPattern {
		return "", fmt.Errorf("the pattern is %d bytes long; Grep takes patterns of at most %d bytes: search for a shorter, distinctive part of the text", len(a.Pattern), grepMaxPattern)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return "", fmt.Errorf("pattern %q is not a valid Go regular expression: %v", a.Pattern, err)
	}
	var names []string
	if a.Path != nil && *a.Path != "" {
		names = []string{*a.Path}
	} else if names = p.files(); len(names) == 0 {
		return "There are no files to search.", nil
	}
	g := &grepper{ctx: ctx, re: re, pre: newPrefilter(a.Pattern),
		context: min(max(a.Context, 0), grepMaxContext), max: a.MaxResults}
	if g.max <= 0 {
		g.max = grepDefResults
	}
	g.max = min(g.max, grepMaxResults)
	for _, name := range names {
		path, err := p.resolve(name)
		if err != nil {
			return "", err
		}
		err = g.file(ctx, name, path)
		if errors.Is(err, errGrepFull) {
			fmt.Fprintf(&g.out, "[more matches exist: showing the first %d; narrow the pattern, search one file, or raise max_results (at most %d)]\n", g.matches, grepMaxResults)
			break
		}
		if err != nil {
			return "", err
		}
	}
	if g.matches == 0 {
		return fmt.Sprintf("No lines match %q in %s.", a.Pattern, strings.Join(names, ", ")), nil
	}
	return g.out.String(), nil
}

// grepper searches files block by block: a block of whole lines is
// searched with one regexp call per match rather than one per line, which
// is what makes tens of megabytes take well under a second.
type grepper struct {
	ctx     context.Context // checked every grepCheckEvery lines or candidates
	re      *regexp.Regexp
	pre     *prefilter // nil: every line is matched with re
	lower   []byte     // the region lower-cased, for a case-folding pre
	context int
	max     int
	matches int
	out     bytes.Buffer
	// done is set once max matches are out; the search then only looks
	// for one more, to say whether the list is complete.
	done bool

	// per file
	name        string
	lastPrinted int // line number last written out (0: none)
	pending     int // context lines still owed after the last match
	tail        []grepLine
}

// grepLine is a line kept from the previous block for the next block's
// leading context.
type grepLine struct {
	n    int
	text []byte
}

const grepBlock = 1 << 20

func (g *grepper) file(ctx context.Context, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open %q: %w", name, err)
	}
	defer f.Close()
	g.name, g.lastPrinted, g.pending, g.tail = name, 0, 0, nil
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot read %q: %w", name, err)
	}
	size := st.Size()
	buf := make([]byte, 0, min(grepBlock, size+1))
	var done int64 // bytes of the file before buf
	line := 1      // number of buf's first line
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(buf) == cap(buf) {
			// A line longer than the buffer: make room for the rest of
			// the file at once, so that even a file of one huge line
			// costs a single copy of itself, not a series of doublings.
			grown := make([]byte, len(buf), max(size-done+1, int64(2*cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return fmt.Errorf("reading %q: %w", name, err)
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end == 0 {
				continue
			}
		}
		if err := g.region(buf[:end], line); err != nil {
			return err
		}
		line += bytes.Count(buf[:end], []byte{'\n'})
		done += int64(end)
		buf = buf[:copy(buf, buf[end:])]
		if eof {
			return nil
		}
	}
}

// region searches whole lines, the first numbered first.
func (g *grepper) region(r []byte, first int) error {
	if g.done {
		more, err := g.more(r, 0)
		if err != nil {
			return err
		}
		if more {
			return errGrepFull
		}
		return nil
	}
	if g.lastPrinted < first-1 {
		g.pending = 0
	}
	printedEnd := 0 // where the line after lastPrinted starts, when it is in r
	counted, countedLine := 0, first
	lineOf := func(pos int) int { // the number of the line holding pos, pos >= counted
		countedLine += bytes.Count(r[counted:pos], []byte{'\n'})
		counted = pos
		return countedLine
	}
	find, err := g.finder(r)
	if err != nil {
		return err
	}
	for pos, n := 0, 0; pos < len(r); n++ {
		if n%grepCheckEvery == grepCheckEvery-1 {
			if err := g.ctx.Err(); err != nil {
				return err
			}
		}
		ms := find(pos)
		if ms < 0 {
			break
		}
		ls := bytes.LastIndexByte(r[:ms], '\n') + 1
		le := len(r)
		if i := bytes.IndexByte(r[ms:], '\n'); i >= 0 {
			le = ms + i
		}
		text := r[ls:le]
		if !g.re.Match(text) {
			pos = ms + 1
			continue
		}
		m := lineOf(ls)
		off := g.re.FindIndex(text)[0]
		// Context owed after the previous match, up to this one.
		for g.pending > 0 && g.lastPrinted+1 < m {
			pe := lineEnd(r, printedEnd)
			g.context1(g.lastPrinted+1, r[printedEnd:pe])
			printedEnd = min(pe+1, len(r))
			g.pending--
		}
		g.pending = 0
		// Context before this match.
		from := max(g.lastPrinted+1, m-g.context, 1)
		if g.lastPrinted > 0 && from > g.lastPrinted+1 {
			g.out.WriteString("--\n")
		}
		g.before(r, first, ls, m, from)
		fmt.Fprintf(&g.out, "%s:%d: %s\n", g.name, m, show(text, off))
		g.lastPrinted, g.pending = m, g.context
		printedEnd = min(le+1, len(r))
		g.matches++
		if g.matches >= g.max || g.out.Len() > grepMaxBytes {
			g.done = true
			more, err := g.more(r, le+1)
			if err != nil {
				return err
			}
			if more {
				return errGrepFull
			}
			return nil
		}
		pos = le + 1
	}
	// Context owed at the end of the region.
	if g.lastPrinted >= first-1 {
		for g.pending > 0 && printedEnd < len(r) {
			pe := lineEnd(r, printedEnd)
			g.context1(g.lastPrinted+1, r[printedEnd:pe])
			printedEnd = pe + 1
			g.pending--
		}
	}
	g.keepTail(r, first)
	return nil
}

// more reports whether a matching line starts at or after pos in r.
func (g *grepper) more(r []byte, pos int) (bool, error) {
	find, err := g.finder(r)
	if err != nil {
		return false, err
	}
	for n := 0; pos < len(r); n++ {
		if n%grepCheckEvery == grepCheckEvery-1 {
			if err := g.ctx.Err(); err != nil {
				return false, err
			}
		}
		ms := find(pos)
		if ms < 0 {
			return false, nil
		}
		ls := bytes.LastIndexByte(r[:ms], '\n') + 1
		if g.re.Match(r[ls:lineEnd(r, ms)]) {
			return true, nil
		}
		pos = ms + 1
	}
	return false, nil
}

// finder returns a function giving the start of the next candidate match
// in r at or after pos, or -1. Every line holding a match holds a
// candidate; the caller confirms each on its line.
func (g *grepper) finder(r []byte) (func(pos int) int, error) {
	if g.pre == nil {
		starts, err := matchingLines(g.ctx, g.re, r, g.max+1)
		if err != nil {
			return nil, err
		}
		i := 0
		return func(pos int) int {
			for i < len(starts) && starts[i] < pos {
				i++
			}
			if i == len(starts) {
				return -1
			}
			return starts[i]
		}, nil
	}
	hay := r
	if g.pre.fold {
		g.lower = lowerASCII(g.lower, r)
		hay = g.lower
	}
	return func(pos int) int { return g.pre.next(hay, pos) }, nil
}

// before writes lines from..m-1 ahead of the match at line m starting at
// byte ls, taking those before the region from the kept tail.
func (g *grepper) before(r []byte, first, ls, m, from int) {
	if from >= m {
		return
	}
	// Walk back from the match line to the first context line in r.
	starts := make([]int, 0, m-from)
	s := ls
	for n := m - 1; n >= from && n >= first; n-- {
		s = bytes.LastIndexByte(r[:s-1], '\n') + 1
		starts = append(starts, s)
	}
	for _, t := range g.tail {
		if t.n >= from && t.n < first {
			g.context1(t.n, t.text)
		}
	}
	for i := len(starts) - 1; i >= 0; i-- {
		n := m - 1 - i
		g.context1(n, r[starts[i]:lineEnd(r, starts[i])])
	}
}

// keepTail copies the region's last lines for the next region's context.
func (g *grepper) keepTail(r []byte, first int) {
	if g.context == 0 {
		return
	}
	last := first + bytes.Count(r, []byte{'\n'}) // number of the line after r
	var kept []grepLine
	end := len(r)
	if end > 0 && r[end-1] == '\n' {
		end--
	}
	for n := last - 1; n >= first && len(kept) < g.context && end >= 0; n-- {
		s := bytes.LastIndexByte(r[:end], '\n') + 1
		kept = append(kept, grepLine{n, bytes.Clone(r[s:min(end, s+grepLineBytes)])})
		end = s - 1
	}
	slicesReverse(kept)
	g.tail = kept
}

func slicesReverse(s []grepLine) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

func (g *grepper) context1(n int, text []byte) {
	fmt.Fprintf(&g.out, "%s-%d- %s\n", g.name, n, show(text, 0))
	g.lastPrinted = n
}

// lineEnd returns the index of the newline ending the line at pos, or len(r).
func lineEnd(r []byte, pos int) int {
	if i := bytes.IndexByte(r[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(r)
}

// show returns a line for output: whole when short, else a window around
// off (the match), cut on rune boundaries and marked.
func show(line []byte, off int) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= grepLineBytes {
		return string(line)
	}
	start := max(off-grepLineBytes/3, 0)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(start+grepLineBytes, len(line))
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	var b strings.Builder
	if start > 0 {
		fmt.Fprintf(&b, "[… %d bytes] ", start)
	}
	b.Write(line[start:end])
	if end < len(line) {
		fmt.Fprintf(&b, " [… %d more bytes]", len(line)-end)
	}
	return b.String()
}

// matchingLines returns the starts of r's lines that re matches, in order,
// at most limit. Without a literal to look for first, a pattern runs at the
// regexp engine's speed, which line by line (its backtracker on short
// inputs) beats one search over the whole region (its automaton on long
// ones). It runs on the caller's goroutine, so a call uses one core at
// most, and stops when ctx ends.
func matchingLines(ctx context.Context, re *regexp.Regexp, r []byte, limit int) ([]int, error) {
	var out []int
	for pos, n := 0, 0; pos < len(r) && len(out) < limit; n++ {
		if n%grepCheckEvery == grepCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		le := pos + bytes.IndexByte(r[pos:], '\n')
		if le < pos {
			le = len(r)
		}
		if re.Match(r[pos:le]) {
			out = append(out, pos)
		}
		pos = le + 1
	}
	return out, nil
}
