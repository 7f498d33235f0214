package attach_test

import (
	"testing"

	"github.com/slackbot/slackbot/attach"
)

func TestTheKindOfAFileIsReadFromItsBytesNotItsName(t *testing.T) {
	t.Parallel()
	png := pngOf(t, 4, 4)
	for _, tt := range []struct {
		name, file, declared string
		data                 []byte
		kind                 attach.Kind
		mediaType            string
	}{
		{"a PNG is an image", "shot.png", "image/png", png, attach.KindImage, "image/png"},
		{"a PNG named .txt is still an image", "notes.txt", "text/plain", png, attach.KindImage, "image/png"},
		{"a JPEG by its magic", "a", "", []byte("\xff\xd8\xff\xe0\x00\x10JFIF"), attach.KindImage, "image/jpeg"},
		{"a GIF by its magic", "a", "", []byte("GIF89a\x01\x00\x01\x00"), attach.KindImage, "image/gif"},
		{"a WebP by its RIFF header", "a", "", []byte("RIFF\x24\x00\x00\x00WEBPVP8 "), attach.KindImage, "image/webp"},
		{"a program named .png is not an image", "photo.png", "image/png", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), attach.KindOther, "application/octet-stream"},
		{"a declared type of another kind is kept", "book.epub", "application/epub+zip", []byte("PK\x03\x04\x00\x00"), attach.KindOther, "application/epub+zip"},
		{"a PDF by its header", "spec", "application/octet-stream", buildPDF("x"), attach.KindPDF, "application/pdf"},
		{"a PDF after junk bytes", "spec", "", append([]byte("\x00\x01junk\n"), buildPDF("x")...), attach.KindPDF, "application/pdf"},
		{"a log that mentions %PDF- is text", "app.log", "", []byte("INFO upload header=%PDF-1.7 ok\n"), attach.KindText, "text/plain"},
		{"a log is text", "app.log", "", []byte("2026-11-23 INFO started\n\x1b[31mERROR\x1b[0m failed\n"), attach.KindText, "text/plain"},
		{"JSON is recognised by content", "data", "application/octet-stream", []byte(`{"a": [1, 2]}`), attach.KindText, "application/json"},
		{"YAML by its name", "deploy.yaml", "", []byte("replicas: 3\n"), attach.KindText, "application/yaml"},
		{"CSV by its declared type", "export", "text/csv", []byte("a,b\n1,2\n"), attach.KindText, "text/csv"},
		{"source code is text", "main.go", "", []byte("package main\n\nfunc main() {}\n"), attach.KindText, "text/plain"},
		{"UTF-8 prose is text", "notes", "", []byte("Grüße, 世界 — ok\n"), attach.KindText, "text/plain"},
		{"a NUL byte makes a binary", "x.txt", "text/plain", []byte("abc\x00def"), attach.KindOther, "application/octet-stream"},
		{"invalid UTF-8 is not text", "latin1.txt", "", []byte("caf\xe9 cr\xe8me"), attach.KindOther, "application/octet-stream"},
		{"a lying declared type is not repeated", "x", "text/html\"><script>", []byte{0, 1, 2}, attach.KindOther, "application/octet-stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kind, mt := attach.Sniff(tt.file, tt.declared, tt.data)
			if kind != tt.kind || mt != tt.mediaType {
				t.Fatalf("Sniff = %s, %s; want %s, %s", kind, mt, tt.kind, tt.mediaType)
			}
		})
	}
}
