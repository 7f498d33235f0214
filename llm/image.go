package llm

import "fmt"

// Image is a picture in a user message: the bytes of a PNG, JPEG, GIF or
// WebP file, already within the providers' size and pixel limits.
type Image struct {
	// Name is the file's name, for the note a model without vision reads.
	Name string `json:"name"`
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string `json:"media_type"`
	// Width and Height are in pixels, for the token estimate.
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Data   []byte `json:"-"`
}

// ImageMediaTypes are the media types both wire formats accept.
var ImageMediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// NoVisionNote is the text a model that cannot read images gets in place
// of one.
func NoVisionNote(img Image) string {
	return fmt.Sprintf("[The user attached an image you cannot see: %s]", img.Name)
}

// ImageTokens estimates what an image costs a model to read: Anthropic
// counts width×height/750, OpenAI 85 plus 170 per 512-pixel tile of the
// image scaled to fit 2048 px and then 768 px on its short side. The larger
// of the two is returned, so a budget holds for either.
func ImageTokens(img Image) int {
	w, h := img.Width, img.Height
	if w <= 0 || h <= 0 {
		return 1600 // about what a screenshot within the limits costs
	}
	anthropic := w * h / 750
	fw, fh := float64(w), float64(h)
	if s := 2048 / max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := 768 / min(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	tiles := int((fw+511)/512) * int((fh+511)/512)
	return max(anthropic, 85+170*tiles)
}
