package llmtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/gif" // decoders for the formats both services accept
	_ "image/jpeg"
	_ "image/png"
	"slices"

	_ "golang.org/x/image/webp"

	"github.com/slackbot/slackbot/llm"
)

// The services' limits on images, as they refuse them: Anthropic takes at
// most 5 MB and 8000 pixels a side; OpenAI at most 20 MB. Both refuse a
// media type other than the four, and data that is not an image of that
// type.
const (
	anthropicImageBytes = 5 << 20
	anthropicImageSide  = 8000
	openAIImageBytes    = 20 << 20
)

// checkOpenAIImages checks the image_url parts of the messages.
func checkOpenAIImages(req *oaRequest) string {
	for i, m := range req.Messages {
		_, images, err := partsOf(m.Content)
		if err != nil || len(images) == 0 {
			continue
		}
		if m.Role != "user" {
			return fmt.Sprintf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", i, m.Role)
		}
		for _, img := range images {
			if img.MediaType == "" && img.Name != "" {
				continue // an http(s) URL, fetched by the service
			}
			if !slices.Contains(llm.ImageMediaTypes, img.MediaType) || !matches(img) {
				return "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."
			}
			if len(img.Data) > openAIImageBytes {
				return fmt.Sprintf("Invalid 'messages[%d]'. Image exceeds the maximum size of %d bytes.", i, openAIImageBytes)
			}
		}
	}
	return ""
}

// checkAnthropicBlock checks one image block.
func checkAnthropicBlock(i, j int, role string, b anBlock) string {
	at := fmt.Sprintf("messages.%d.content.%d.image.source", i, j)
	if role != "user" {
		return fmt.Sprintf("messages.%d.content.%d: image blocks are only allowed in user messages", i, j)
	}
	if b.Source == nil {
		return at + ": Field required"
	}
	if b.Source.Type != "base64" {
		return "" // url and file sources are fetched by the service
	}
	if !slices.Contains(llm.ImageMediaTypes, b.Source.MediaType) {
		return at + ".base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if err != nil {
		return at + ".base64.data: invalid base64 data"
	}
	if len(b.Source.Data) > anthropicImageBytes {
		return fmt.Sprintf("%s.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", at, len(b.Source.Data), anthropicImageBytes)
	}
	img := llm.Image{MediaType: b.Source.MediaType, Data: data}
	if !matches(img) {
		return at + ".base64.data: Image does not match the provided media type " + b.Source.MediaType
	}
	cfg, _, _ := image.DecodeConfig(bytes.NewReader(data))
	if cfg.Width > anthropicImageSide || cfg.Height > anthropicImageSide {
		return fmt.Sprintf("%s.base64.data: At least one of the image dimensions exceed max allowed size: %d pixels", at, anthropicImageSide)
	}
	return ""
}

// matches reports whether the data decode as an image of its media type.
func matches(img llm.Image) bool {
	_, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
	return err == nil && "image/"+format == img.MediaType
}
