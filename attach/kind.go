package attach

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"
)

// Kind is what a file holds, read from its bytes.
type Kind string

// The kinds of file.
const (
	KindImage Kind = "image" // PNG, JPEG, GIF or WebP
	KindText  Kind = "text"  // UTF-8 text: prose, logs, JSON, YAML, CSV, source code
	KindPDF   Kind = "pdf"
	KindOther Kind = "other"
)

// Sniff reads the kind of data and its media type. The declared type and
// the name only refine the media type of a text ("text/csv" for data.csv);
// they never make a file an image or a text.
func Sniff(name, declared string, data []byte) (Kind, string) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return KindImage, "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return KindImage, "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return KindImage, "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return KindImage, "image/webp"
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return KindPDF, "application/pdf"
	case isText(data):
		return KindText, textType(name, declared, data)
	case bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")):
		// The format lets the header start anywhere in the first 1024
		// bytes, after junk; a text that merely mentions it is a text.
		return KindPDF, "application/pdf"
	}
	return KindOther, otherType(declared)
}

// isText reports whether data reads as UTF-8 text: valid UTF-8 (a sequence
// cut at the end is allowed), no NUL byte, and few control characters
// besides tab, line breaks, form feed and the escape of ANSI colours.
func isText(data []byte) bool {
	sample := data[:min(len(data), 64<<10)]
	if len(sample) < len(data) {
		for len(sample) > 0 && !utf8.RuneStart(sample[len(sample)-1]) {
			sample = sample[:len(sample)-1]
		}
		if len(sample) > 0 {
			sample = sample[:len(sample)-1] // the last rune may be cut
		}
	}
	if !utf8.Valid(sample) {
		return false
	}
	control := 0
	for _, c := range sample {
		switch {
		case c == 0:
			return false
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b:
			control++
		}
	}
	return control*100 <= len(sample)
}

// textTypes are media types by file extension, for texts whose declared
// type says less.
var textTypes = map[string]string{
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".md": "text/markdown",
	".log": "text/plain", ".txt": "text/plain", ".xml": "application/xml", ".html": "text/html",
}

func textType(name, declared string, data []byte) string {
	declared = strings.ToLower(strings.TrimSpace(strings.Split(declared, ";")[0]))
	if strings.HasPrefix(declared, "text/") && declared != "text/plain" || declared == "application/json" ||
		declared == "application/yaml" || declared == "application/xml" {
		return declared
	}
	if t, ok := textTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && len(data) <= 1<<20 && json.Valid(trimmed) {
		return "application/json"
	}
	return "text/plain"
}

// otherType keeps a declared type that is a plain media type, for the
// name-type-size line, unless it claims a kind the bytes are not (a picture,
// a text, a PDF); anything else is application/octet-stream.
func otherType(declared string) string {
	declared = strings.ToLower(strings.TrimSpace(strings.Split(declared, ";")[0]))
	if strings.HasPrefix(declared, "image/") || strings.HasPrefix(declared, "text/") || declared == "application/pdf" ||
		declared == "application/json" || declared == "application/yaml" || declared == "application/xml" {
		return "application/octet-stream"
	}
	if t, sub, ok := strings.Cut(declared, "/"); ok && t != "" && sub != "" && !strings.ContainsAny(declared, " \t\"<>") && len(declared) <= 100 {
		return declared
	}
	return "application/octet-stream"
}
