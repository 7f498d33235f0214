package attach

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// StoredTool is the source name of an attached file in the tool_output
// store: extraction prompts show it as the tool that produced the text.
const StoredTool = "attachment"

// Options says how files become part of a turn.
type Options struct {
	// Store receives each text too long for the turn, whole; the model
	// gets a handle to ask tool_output about it, as for an oversized tool
	// result. Nil keeps the start and end of such a text instead.
	Store *tooloutput.Store
	// Budget is how many tokens the files may take in the turn together,
	// pictures included; texts share what the pictures leave, and are
	// measured as estimates raised by llm.EstimateMargin.
	Budget int
	// Images are the limits pictures are scaled to (zero:
	// DefaultImageLimits).
	Images ImageLimits
	// Log receives one line per file: its kind, type, size and what
	// became of it, never its name or content. Nil logs nothing.
	Log *zap.Logger
}

// Content is what a question's files add to its turn: Text follows the
// question, and Images travel with it, each announced in Text.
type Content struct {
	Text   string
	Images []llm.Image
	// Stored are the handles of texts put in the store.
	Stored []string
}

// Prepare turns downloaded files into turn content, in their order. It
// never fails: a file that cannot be read is described, with the reason,
// instead of shown.
func Prepare(files []File, o Options) Content {
	if o.Images == (ImageLimits{}) {
		o.Images = DefaultImageLimits
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	type sniffed struct {
		kind      Kind
		mediaType string
	}
	kinds := make([]sniffed, len(files))
	texts := 0
	for i, f := range files {
		k, mt := Sniff(f.Name, f.Type, f.Data)
		kinds[i] = sniffed{k, mt}
		if k == KindText || k == KindPDF {
			texts++
		}
	}
	var c Content
	var parts []string
	room := o.Budget
	for i, f := range files {
		k, mt := kinds[i].kind, kinds[i].mediaType
		head := fmt.Sprintf("[Attached file %s: %s, %s", displayName(f.Name), mt, FormatSize(int64(len(f.Data))))
		outcome := ""
		switch k {
		case KindImage:
			img, err := FitImage(f.Data, mt, o.Images)
			if err != nil {
				parts = append(parts, head+" — "+err.Error()+"]")
				outcome = "unreadable"
				break
			}
			img.Name = displayName(f.Name)
			note := "shown below as an image"
			cfg := sizeOf(f.Data)
			if img.Width != cfg.w || img.Height != cfg.h {
				note = fmt.Sprintf("%d×%d pixels, scaled to %d×%d; shown below as an image", cfg.w, cfg.h, img.Width, img.Height)
				outcome = "scaled"
			} else {
				outcome = "image"
			}
			parts = append(parts, head+" — "+note+"]")
			c.Images = append(c.Images, img)
			room -= llm.ImageTokens(img)
		case KindText, KindPDF:
			text := string(f.Data)
			if k == KindPDF {
				t, err := PDFText(f.Data)
				if err != nil {
					parts = append(parts, head+" — "+pdfProblem(err)+"]")
					outcome = "unreadable"
					if errors.Is(err, ErrNoText) {
						outcome = "no text"
					}
					break
				}
				text, head = t, head+", its text extracted"
			}
			text = strings.TrimPrefix(text, "\ufeff")
			share := max(room, 0) / max(texts, 1)
			texts--
			cost := int(float64(llm.EstimateTokens(text))*llm.EstimateMargin) + 1
			if cost <= share {
				parts = append(parts, head+"]\n"+text+"\n[End of "+displayName(f.Name)+"]")
				room -= cost
				outcome = "inline"
				break
			}
			if o.Store != nil {
				args, _ := json.Marshal(map[string]string{"file": f.Name})
				e, err := o.Store.Put(StoredTool, string(args), text)
				if err == nil {
					parts = append(parts, head+" — too long to show here, stored whole]\n"+tooloutput.TooLargeMessage(e))
					c.Stored = append(c.Stored, e.Handle)
					outcome = "stored"
					break
				}
				log.Warn("attachment could not be stored; cut instead", zap.Error(err))
			}
			parts = append(parts, head+" — too long to show whole; its start and end follow]\n"+cut(text, max(share, 0)*3)+"\n[End of "+displayName(f.Name)+"]")
			room -= share
			outcome = "cut"
		default:
			parts = append(parts, head+" — its content is not shown: only pictures, texts and PDFs are read]")
			outcome = "described"
		}
		log.Info("attachment", zap.String("id", f.ID), zap.String("kind", string(k)), zap.String("media_type", mt),
			zap.Int("bytes", len(f.Data)), zap.String("outcome", outcome))
	}
	c.Text = strings.Join(parts, "\n\n")
	return c
}

func pdfProblem(err error) string {
	if errors.Is(err, ErrNoText) {
		return ErrNoText.Error()
	}
	return err.Error()
}

type dims struct{ w, h int }

// sizeOf is a picture's size as stored in its header.
func sizeOf(data []byte) dims {
	cfg, err := decodeConfig(data)
	if err != nil {
		return dims{}
	}
	return dims{cfg.Width, cfg.Height}
}

// cut keeps the start (two thirds) and the end of text within about max
// bytes, on rune boundaries, and says how much was left out.
func cut(text string, max int) string {
	if len(text) <= max {
		return text
	}
	head, tail := max*2/3, max-max*2/3
	for head > 0 && !utf8.RuneStart(text[head]) {
		head--
	}
	t := len(text) - tail
	for t < len(text) && !utf8.RuneStart(text[t]) {
		t++
	}
	return text[:head] + fmt.Sprintf("\n[… %d bytes in the middle left out …]\n", t-head) + text[t:]
}
