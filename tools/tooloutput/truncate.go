package tooloutput

import (
	"bytes"
	"fmt"
	"os"
	"unicode/utf8"
)

// truncated shows the top and bottom of the stored result within limit
// bytes, reading only those parts of the file. warning, when set, heads
// the text so the model knows it is not an extraction.
func truncated(e *Entry, limit int, warning string) (string, error) {
	f, err := os.Open(e.Path)
	if err != nil {
		return "", fmt.Errorf("reading the stored output: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	if warning != "" {
		b.WriteString(warning + "\n\n")
	}
	size := int64(e.Bytes)
	if size <= int64(limit) {
		buf := make([]byte, size)
		if _, err := f.ReadAt(buf, 0); err != nil && size > 0 {
			return "", fmt.Errorf("reading the stored output: %w", err)
		}
		b.Write(buf)
		return b.String(), nil
	}
	// Two thirds to the top: the start of an output usually says what it
	// is (headers, the first records), the end how it finished.
	headN := int64(limit) * 2 / 3
	tailN := int64(limit) - headN
	head := make([]byte, headN)
	tail := make([]byte, tailN)
	if _, err := f.ReadAt(head, 0); err != nil {
		return "", fmt.Errorf("reading the stored output: %w", err)
	}
	if _, err := f.ReadAt(tail, size-tailN); err != nil {
		return "", fmt.Errorf("reading the stored output: %w", err)
	}
	head = cutHead(head)
	tail = cutTail(tail)
	cut := size - int64(len(head)) - int64(len(tail))
	b.Write(head)
	fmt.Fprintf(&b, "\n\n[… %d of %d bytes cut from the middle …]\n\n", cut, size)
	b.Write(tail)
	return b.String(), nil
}

// cutHead ends head at its last line break when that keeps most of it,
// else at a rune boundary.
func cutHead(head []byte) []byte {
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)*3/4 {
		return head[:i+1]
	}
	return trimPartialRune(head)
}

// trimPartialRune drops a rune that a cut at the end of b split.
func trimPartialRune(b []byte) []byte {
	end := len(b)
	i := end - 1
	for i > 0 && i > end-utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(b[i:]) {
		end = i
	}
	return b[:end]
}

// cutTail starts tail after its first line break when that keeps most of
// it, else at a rune boundary.
func cutTail(tail []byte) []byte {
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/4 {
		return tail[i+1:]
	}
	start := 0
	for start < len(tail) && start < utf8.UTFMax && !utf8.RuneStart(tail[start]) {
		start++
	}
	return tail[start:]
}
