package attach

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders of the image kinds Sniff knows
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/slackbot/slackbot/llm"
)

// ImageLimits is the largest picture a provider takes as it is.
type ImageLimits struct {
	// MaxSide is the longest side in pixels; a larger picture is scaled
	// down to it.
	MaxSide int
	// MaxBytes is the largest encoded picture; a larger one is scaled
	// down and re-encoded until it fits.
	MaxBytes int
}

// Providers' limits. Anthropic refuses a picture over 5 MB once base64
// encoded (3.75 MB of bytes) or 8000 pixels a side, and scales down any
// over 1568 pixels on its long side before the model reads it. OpenAI
// takes up to 20 MB and scales to fit 2048 pixels.
var (
	AnthropicImageLimits = ImageLimits{MaxSide: 1568, MaxBytes: 3_750_000}
	OpenAIImageLimits    = ImageLimits{MaxSide: 2048, MaxBytes: 20 << 20}
	// DefaultImageLimits fits both: an agent's models may fall back from
	// one provider to the other in the middle of a session.
	DefaultImageLimits = AnthropicImageLimits.Tighter(OpenAIImageLimits)
)

// Tighter is the smaller of each limit of l and o.
func (l ImageLimits) Tighter(o ImageLimits) ImageLimits {
	return ImageLimits{MaxSide: min(l.MaxSide, o.MaxSide), MaxBytes: min(l.MaxBytes, o.MaxBytes)}
}

// MaxDecodePixels bounds the pictures decoded at all: a small file can
// claim a huge canvas (a decompression bomb), and decoding one costs four
// bytes a pixel. 50 megapixels holds any phone photo and a 6000×6000
// screenshot.
const MaxDecodePixels = 50_000_000

// ErrImageTooLarge is returned for a picture over MaxDecodePixels.
var ErrImageTooLarge = errors.New("the picture is too large to read")

// FitImage returns data as a picture within lim: unchanged when it already
// fits, else scaled down to lim.MaxSide (and further until it fits
// lim.MaxBytes) and re-encoded, JPEG as JPEG and anything else as PNG, or
// as JPEG when the PNG is still too big. An animated GIF that must be
// scaled keeps its first frame. mediaType is the type Sniff read.
func FitImage(data []byte, mediaType string, lim ImageLimits) (llm.Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return llm.Image{}, fmt.Errorf("the picture cannot be read: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxDecodePixels {
		return llm.Image{}, fmt.Errorf("%w (%d×%d pixels; at most %d megapixels)", ErrImageTooLarge, cfg.Width, cfg.Height, MaxDecodePixels/1_000_000)
	}
	if max(cfg.Width, cfg.Height) <= lim.MaxSide && len(data) <= lim.MaxBytes {
		return llm.Image{MediaType: mediaType, Width: cfg.Width, Height: cfg.Height, Data: data}, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return llm.Image{}, fmt.Errorf("the picture cannot be read: %w", err)
	}
	side := min(lim.MaxSide, max(cfg.Width, cfg.Height))
	for side >= 16 {
		dst := scale(src, side)
		out, outType, err := encode(dst, mediaType, lim.MaxBytes)
		if err != nil {
			return llm.Image{}, err
		}
		if len(out) <= lim.MaxBytes {
			b := dst.Bounds()
			return llm.Image{MediaType: outType, Width: b.Dx(), Height: b.Dy(), Data: out}, nil
		}
		side = side * 3 / 4
	}
	return llm.Image{}, fmt.Errorf("%w: it does not fit %d bytes even when scaled down", ErrImageTooLarge, lim.MaxBytes)
}

func decodeConfig(data []byte) (image.Config, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	return cfg, err
}

// scale draws src with its longest side at most side pixels. It halves
// the picture while it is at least twice too large, then makes the last
// step: bilinear sampling at exactly half the size averages each 2×2
// block, so every source pixel counts (fine text stays legible), and no
// step needs more memory than its own result. draw's kernel scalers keep
// a float64 buffer of the destination's width times the source's height,
// 300 MB for a 6000-pixel square.
func scale(src image.Image, side int) image.Image {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h {
		h, w = max(1, h*side/w), side
	} else {
		w, h = max(1, w*side/h), side
	}
	if w >= b.Dx() && h >= b.Dy() {
		return src
	}
	for sb := src.Bounds(); sb.Dx() >= 2*w && sb.Dy() >= 2*h; sb = src.Bounds() {
		half := image.NewRGBA(image.Rect(0, 0, sb.Dx()/2, sb.Dy()/2))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), src, sb, draw.Src, nil)
		src = half
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// encode writes img as JPEG when the source was one, else as PNG, falling
// back to JPEG when the PNG is over maxBytes.
func encode(img image.Image, mediaType string, maxBytes int) ([]byte, string, error) {
	var b bytes.Buffer
	if mediaType != "image/jpeg" {
		if err := png.Encode(&b, img); err != nil {
			return nil, "", fmt.Errorf("the scaled picture cannot be written: %w", err)
		}
		if b.Len() <= maxBytes {
			return b.Bytes(), "image/png", nil
		}
		b.Reset()
	}
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		return nil, "", fmt.Errorf("the scaled picture cannot be written: %w", err)
	}
	return b.Bytes(), "image/jpeg", nil
}
