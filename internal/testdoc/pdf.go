// Package testdoc writes documents for tests to upload and read: logs,
// pictures, and PDFs built object by object, so that a test says exactly
// what each page's content stream holds.
package testdoc

import (
	"bytes"
	"fmt"
	"strings"
)

// Page is one PDF page: its content stream, deflated already when Flate
// is set (the stream then carries /Filter /FlateDecode).
type Page struct {
	Content []byte
	Flate   bool
}

// Text is a page showing text on a line of its own in Helvetica.
func Text(text string) Page {
	return Page{Content: []byte("BT /F1 12 Tf 72 700 Td (" + text + ") Tj ET")}
}

// Scan is a page with a filled rectangle and no text, as a scanned page reads.
func Scan() Page {
	return Page{Content: []byte("0.5 g 72 72 468 648 re f")}
}

// PDF writes a PDF 1.4 file of pages in order, with Helvetica as font F1.
func PDF(pages ...Page) []byte {
	var b bytes.Buffer
	var offsets []int
	start := func() {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n", len(offsets))
	}
	obj := func(body string) {
		start()
		b.WriteString(body + "\nendobj\n")
	}
	b.WriteString("%PDF-1.4\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, p := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 3 0 R >> >> >>", 5+2*i))
		filter := ""
		if p.Flate {
			filter = " /Filter /FlateDecode"
		}
		start()
		fmt.Fprintf(&b, "<< /Length %d%s >>\nstream\n", len(p.Content), filter)
		b.Write(p.Content)
		b.WriteString("\nendstream\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}
