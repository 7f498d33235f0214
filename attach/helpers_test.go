package attach_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/slackbot/slackbot/internal/testdoc"
)

// buildPDF writes a PDF with one page per entry of pages: the text on a
// line of its own in Helvetica, or, for "", a filled rectangle and no text
// (a scanned page).
func buildPDF(pages ...string) []byte {
	ps := make([]testdoc.Page, len(pages))
	for i, text := range pages {
		ps[i] = testdoc.Scan()
		if text != "" {
			ps[i] = testdoc.Text(text)
		}
	}
	return testdoc.PDF(ps...)
}

// pngOf encodes a w×h grey picture with a pattern, so that scaling has
// something to average.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := testdoc.Grey(w, h)
	img.SetGray(0, 0, color.Gray{Y: 255})
	return testdoc.PNG(t, img)
}

// noisePNG encodes a w×h picture of random grey pixels.
func noisePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Uint32())
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is the start of a PNG claiming a w×h canvas: what a
// decompression bomb shows before its data.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk := append([]byte("IHDR"), ihdr...)
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	b.Write(chunk)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}
