package blockkit

import (
	"bytes"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Parallel conversion of large documents.
//
// goldmark's parse is most of FromMarkdown's cost, and it is sequential. A
// large document is therefore cut into chunks that CommonMark guarantees to
// parse to the same top-level blocks as the whole document, and the chunks
// are parsed and rendered concurrently; packing the units into messages
// stays sequential (units.go).
//
// A cut goes before a line that follows an empty line and starts at column 0
// with an ASCII letter or '#'. Block parsing reads the document line by line,
// so the parser's state when it reaches the cut depends only on the lines
// before it, and that line ends every block still open there except a fenced
// code block or an HTML block of types 1-5 open at the top level (lists need
// the line indented, block quotes need '>', paragraphs ended at the empty
// line, and indented code needs four spaces). After it, the parser has
// exactly one open block, the paragraph or heading that line starts, just as
// it would at the start of a document. So a cut is right if and only if no
// top-level fence or HTML block is open at the end of the chunk before it,
// and that is checked on the chunk's syntax tree after parsing (closedAtEnd):
// a cut found wrong makes the whole document parse in one piece.
//
// The one document-wide state is link reference definitions: a [label] may
// use a definition from any chunk, and the first definition of a label wins.
// Every chunk's lookups are recorded; when one got a different answer than
// the document's definitions give, that chunk is parsed again with the
// document's definitions (a parse depends only on its text and the answers
// to its lookups).
//
// TestChunkedEqualsWhole and FuzzChunkedEqualsWhole check that the output is
// byte-identical to converting the document in one piece.

// Conversion runs in parallel for documents of at least parallelMin bytes,
// in chunks of at least chunkMin bytes; below that, starting goroutines
// costs more than it saves.
const (
	parallelMin = 16 << 10
	chunkMin    = 8 << 10
)

// chunkOut is one chunk's source, syntax tree and rendered units.
type chunkOut struct {
	src   []byte
	doc   ast.Node
	pc    *refContext
	buf   string
	units []outUnit
}

// convertUnits renders src's top-level blocks to units, in chunks on up to
// procs goroutines when src is large enough.
func convertUnits(src []byte, procs int) []chunkOut {
	if len(src) >= parallelMin {
		if bounds := chunkBounds(src, min(procs, len(src)/chunkMin)); len(bounds) > 2 {
			if chunks, ok := convertChunks(src, bounds); ok {
				return chunks
			}
		}
	}
	return []chunkOut{convertWhole(src)}
}

func convertWhole(src []byte) chunkOut {
	c := chunkOut{src: src, doc: parseMarkdown(src)}
	c.buf, c.units = renderUnits(src, c.doc)
	return c
}

// convertChunks converts src cut at bounds (0 first, len(src) last), or
// reports that a cut was wrong.
func convertChunks(src []byte, bounds []int) ([]chunkOut, bool) {
	chunks := make([]chunkOut, len(bounds)-1)
	for i := range chunks {
		chunks[i].src = src[bounds[i]:bounds[i+1]:bounds[i+1]]
	}
	runAll(chunks, nil, nil)
	for i := range chunks[:len(chunks)-1] {
		if !closedAtEnd(&chunks[i]) {
			return nil, false
		}
	}
	// The document's definitions: the first chunk to define a label wins,
	// and within a chunk goldmark already kept the first.
	var defs map[string]parser.Reference
	for i := range chunks {
		for _, r := range chunks[i].pc.Context.References() {
			if defs == nil {
				defs = map[string]parser.Reference{}
			}
			if key := util.ToLinkReference(r.Label()); defs[key] == nil {
				defs[key] = r
			}
		}
	}
	if defs == nil {
		return chunks, true
	}
	redo := make([]bool, len(chunks))
	again := false
	for i := range chunks {
		for _, q := range chunks[i].pc.asked {
			if !sameRef(defs[q.key], q.ref) {
				redo[i], again = true, true
				break
			}
		}
	}
	if again {
		runAll(chunks, redo, defs)
	}
	return chunks, true
}

// runAll parses and renders the chunks (those marked in only, if not nil)
// concurrently, the first on the calling goroutine.
func runAll(chunks []chunkOut, only []bool, defs map[string]parser.Reference) {
	var wg sync.WaitGroup
	for i := len(chunks) - 1; i >= 0; i-- {
		if only != nil && !only[i] {
			continue
		}
		c := &chunks[i]
		if i == 0 {
			c.run(defs)
			break
		}
		wg.Go(func() { c.run(defs) })
	}
	wg.Wait()
}

func (c *chunkOut) run(defs map[string]parser.Reference) {
	c.pc = &refContext{Context: parser.NewContext(), defs: defs}
	c.doc = markdownParser.Parse(text.NewReader(c.src), parser.WithContext(c.pc))
	c.buf, c.units = renderUnits(c.src, c.doc)
}

// closedAtEnd reports whether the chunk leaves no top-level fenced code or
// HTML block of types 1-5 open (see the comment at the top). A chunk ends
// with an empty line, which an unclosed block takes as content: an open
// fence's last line reaches the end of the chunk with no closing fence after
// it, and an open HTML block has more than its first line and no closure.
func closedAtEnd(c *chunkOut) bool {
	switch n := c.doc.LastChild().(type) {
	case *ast.FencedCodeBlock:
		lines := n.Lines()
		if lines.Len() == 0 {
			return true
		}
		return bytes.ContainsAny(c.src[lines.At(lines.Len()-1).Stop:], "`~")
	case *ast.HTMLBlock:
		if n.HTMLBlockType <= ast.HTMLBlockType5 {
			return n.HasClosure() || n.Lines().Len() == 1
		}
	case *ast.List:
		// An empty last item with no known content column could take the
		// next line; goldmark always gives one, but a cut is cheap to refuse.
		if item, ok := n.LastChild().(*ast.ListItem); !ok || item.Offset < 1 {
			return false
		}
	}
	return true
}

// refContext is a parser context that records the chunk's link reference
// lookups or, given the document's definitions, answers from them.
type refContext struct {
	parser.Context
	defs  map[string]parser.Reference
	asked []refQuery
}

type refQuery struct {
	key string
	ref parser.Reference // nil if not found
}

// Reference implements parser.Context.
func (c *refContext) Reference(label string) (parser.Reference, bool) {
	if c.defs != nil {
		r, ok := c.defs[label]
		return r, ok
	}
	r, ok := c.Context.Reference(label)
	c.asked = append(c.asked, refQuery{label, r})
	return r, ok
}

// sameRef reports whether two lookups produce the same link: goldmark copies
// only the destination and title from a definition.
func sameRef(a, b parser.Reference) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(a.Destination(), b.Destination()) && bytes.Equal(a.Title(), b.Title())
}

// chunkBounds returns where to cut src into about n chunks of equal size:
// 0, the cuts, len(src); nil when there is no cut. Cuts follow the rule at
// the top; a scan for top-level fences skips places inside code, which are
// the common wrong cuts (a blank line then "def f():" in Python). The scan
// ignores containers and HTML, so it can be wrong: closedAtEnd decides.
func chunkBounds(src []byte, n int) []int {
	if n < 2 {
		return nil
	}
	bounds := []int{0}
	next := len(src) / n
	var fence byte // the open fence's character, 0 outside code
	fenceLen := 0
	for pos := 0; pos < len(src) && len(bounds) < n; {
		eol := bytes.IndexByte(src[pos:], '\n')
		if eol < 0 {
			break
		}
		line := src[pos : pos+eol]
		if fence == 0 && pos >= next && pos >= 2 && src[pos-1] == '\n' && src[pos-2] == '\n' && chunkStart(line) {
			bounds = append(bounds, pos)
			next = pos + (len(src)-pos)/(n-len(bounds)+1)
		}
		fence, fenceLen = scanFence(line, fence, fenceLen)
		pos += eol + 1
	}
	if len(bounds) < 2 {
		return nil
	}
	return append(bounds, len(src))
}

// chunkStart reports whether a chunk may start with line: an ASCII letter or
// '#' at column 0 starts a paragraph or heading and continues nothing.
func chunkStart(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	c := line[0] | 0x20
	return c >= 'a' && c <= 'z' || line[0] == '#'
}

// scanFence updates the fence state for one line: a run of three or more
// backticks or tildes indented at most three spaces opens a fence, and a
// run of the same character at least as long with nothing after it closes it.
func scanFence(line []byte, fence byte, fenceLen int) (byte, int) {
	i := 0
	for i < len(line) && i < 4 && line[i] == ' ' {
		i++
	}
	if i > 3 || i == len(line) || (line[i] != '`' && line[i] != '~') {
		return fence, fenceLen
	}
	c, j := line[i], i
	for j < len(line) && line[j] == c {
		j++
	}
	run := j - i
	if run < 3 {
		return fence, fenceLen
	}
	rest := line[j:]
	if fence == 0 {
		if c == '`' && bytes.IndexByte(rest, '`') >= 0 {
			return 0, 0 // not a fence: an info string cannot hold a backtick
		}
		return c, run
	}
	if c == fence && run >= fenceLen && len(bytes.TrimSpace(rest)) == 0 {
		return 0, 0
	}
	return fence, fenceLen
}
