package testdoc

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// Grey is a w×h grey picture with a diagonal pattern, so that scaling has
// something to average.
func Grey(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+w]
		for x := range row {
			row[x] = uint8((x/7 + y/5) * 16)
		}
	}
	return img
}

// PNG encodes img at the fastest compression.
func PNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
