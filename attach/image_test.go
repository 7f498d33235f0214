package attach_test

import (
	"bytes"
	"errors"
	"image"
	"testing"

	"github.com/slackbot/slackbot/attach"
)

// The 6000×6000 square goes through the wire in
// TestASixThousandPixelPictureReachesAnthropicScaledWithinItsLimits.
func TestAWidePictureIsScaledToTheProvidersLimitsKeepingItsShape(t *testing.T) {
	t.Parallel()
	data := pngOf(t, 3000, 1500)
	img, err := attach.FitImage(data, "image/png", attach.DefaultImageLimits)
	if err != nil {
		t.Fatalf("FitImage: %v", err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("the scaled picture does not decode: %v", err)
	}
	if cfg.Width != 1568 || cfg.Height != 784 || img.Width != 1568 || img.Height != 784 {
		t.Fatalf("scaled to %d×%d (recorded %d×%d), want 1568×784", cfg.Width, cfg.Height, img.Width, img.Height)
	}
	if "image/"+format != img.MediaType || len(img.Data) > attach.DefaultImageLimits.MaxBytes {
		t.Fatalf("media type %s for a %s of %d bytes", img.MediaType, format, len(img.Data))
	}
}

func TestAPictureWithinTheLimitsIsSentAsItIs(t *testing.T) {
	t.Parallel()
	data := pngOf(t, 800, 600)
	img, err := attach.FitImage(data, "image/png", attach.DefaultImageLimits)
	if err != nil || !bytes.Equal(img.Data, data) || img.Width != 800 || img.Height != 600 {
		t.Fatalf("FitImage = %d bytes %d×%d, %v; want the same bytes, 800×600", len(img.Data), img.Width, img.Height, err)
	}
}

func TestAPictureOverTheByteLimitIsReencodedSmaller(t *testing.T) {
	t.Parallel()
	data := noisePNG(t, 256, 256) // noise: the worst case for every encoder
	lim := attach.ImageLimits{MaxSide: 2000, MaxBytes: len(data) / 4}
	img, err := attach.FitImage(data, "image/png", lim)
	if err != nil {
		t.Fatalf("FitImage: %v", err)
	}
	if len(img.Data) > lim.MaxBytes {
		t.Fatalf("%d bytes, over the %d allowed", len(img.Data), lim.MaxBytes)
	}
}

func TestADecompressionBombIsRefusedBeforeItIsDecoded(t *testing.T) {
	t.Parallel()
	// 100,000 × 100,000 pixels would take 40 GB decoded.
	_, err := attach.FitImage(pngHeader(100_000, 100_000), "image/png", attach.DefaultImageLimits)
	if !errors.Is(err, attach.ErrImageTooLarge) {
		t.Fatalf("err = %v, want ErrImageTooLarge", err)
	}
}

func TestABrokenPictureIsAnErrorNotACrash(t *testing.T) {
	t.Parallel()
	data := pngOf(t, 3000, 100)
	_, err := attach.FitImage(data[:len(data)/2], "image/png", attach.DefaultImageLimits)
	if err == nil {
		t.Fatal("half a PNG was read as a picture")
	}
}

func BenchmarkFitImage6000(b *testing.B) {
	data := pngOf(b, 6000, 6000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := attach.FitImage(data, "image/png", attach.DefaultImageLimits); err != nil {
			b.Fatal(err)
		}
	}
}
