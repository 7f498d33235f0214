package attach

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// ErrNoText is returned for a PDF without a text layer: a scan, or pages
// that are only pictures.
var ErrNoText = errors.New("the PDF has no text layer (it may be a scan); its pages are pictures only")

// MaxPDFPages bounds the pages read from one PDF.
const MaxPDFPages = 2000

// PDFText extracts the text of a PDF, page by page, each page after a
// "--- page N ---" line. A document the library cannot parse, or that
// makes it fail part-way (a malformed or hostile file), is an error, never
// a crash; so is an encrypted one.
func PDFText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("the PDF cannot be read: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("the PDF cannot be read: %w", err)
	}
	pages, more := pageList(r.Trailer().Key("Root").Key("Pages"))
	if len(pages) == 0 {
		return "", ErrNoText
	}
	var b strings.Builder
	found := false
	left := int64(MaxPDFInflated)
	for n, p := range pages {
		i := n + 1
		if left, err = inflate(p, left); err != nil {
			if i == 1 {
				return "", ErrPDFInflated
			}
			fmt.Fprintf(&b, "--- the pages from page %d on were not read: the document inflates to more than %s ---\n", i, FormatSize(MaxPDFInflated))
			more = false
			break
		}
		// Fonts are named per page (two pages' F1 may differ), so each
		// page reads its own.
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("the PDF cannot be read on page %d: %w", i, err)
		}
		fmt.Fprintf(&b, "--- page %d ---\n%s\n", i, strings.TrimSpace(t))
		if strings.TrimSpace(t) != "" {
			found = true
		}
	}
	if !found {
		return "", ErrNoText
	}
	if more {
		fmt.Fprintf(&b, "--- the pages after page %d were not read ---\n", MaxPDFPages)
	}
	return b.String(), nil
}

// maxPageTreeDepth bounds how deep the page tree is walked. Real documents
// nest a few levels; a tree whose Kids point back up (a hostile file) would
// otherwise be walked forever, as the library's own Page does.
const maxPageTreeDepth = 32

// parentsEnd reports whether a page's chain of Parent nodes, which the
// library follows to find inherited resources, ends within the depth bound.
func parentsEnd(n pdf.Value) bool {
	for range maxPageTreeDepth + 1 {
		n = n.Key("Parent")
		if n.IsNull() {
			return true
		}
	}
	return false
}

// pageList walks the page tree from root in reading order and returns at
// most MaxPDFPages pages, and whether there were more. It visits at most
// 4×MaxPDFPages nodes, so a tree that loops ends.
func pageList(root pdf.Value) (pages []pdf.Page, more bool) {
	visits := 0
	var walk func(n pdf.Value, depth int)
	walk = func(n pdf.Value, depth int) {
		if n.IsNull() || depth > maxPageTreeDepth || more {
			return
		}
		visits++
		if visits > 4*MaxPDFPages {
			more = true
			return
		}
		if n.Key("Type").Name() == "Page" || n.Key("Kids").IsNull() {
			if !parentsEnd(n) {
				return // the library would follow its Parent forever
			}
			if len(pages) == MaxPDFPages {
				more = true
				return
			}
			pages = append(pages, pdf.Page{V: n})
			return
		}
		kids := n.Key("Kids")
		for i := range kids.Len() {
			walk(kids.Index(i), depth+1)
		}
	}
	walk(root, 0)
	return pages, more
}
