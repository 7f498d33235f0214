package blockkit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The parallel path of FromMarkdown (chunk.go) must give byte-identical
// output to converting the document in one piece. These tests cut documents
// at every candidate place, far more cuts than FromMarkdown makes, so that
// every cut is exercised.

// chunkedVsWhole converts md cut into up to n chunks and in one piece. ok is
// false when there is no cut or a cut was refused (FromMarkdown then converts
// in one piece, so there is nothing to compare).
func chunkedVsWhole(t testing.TB, md string, n int) (chunked, whole []byte, ok bool) {
	t.Helper()
	src := []byte(md)
	bounds := chunkBounds(src, n)
	if len(bounds) <= 2 {
		return nil, nil, false
	}
	chunks, ok := convertChunks(src, bounds)
	if !ok {
		return nil, nil, false
	}
	chunked, err := json.Marshal(packUnits(chunks))
	if err != nil {
		t.Fatal(err)
	}
	whole, err = json.Marshal(packUnits([]chunkOut{convertWhole(src)}))
	if err != nil {
		t.Fatal(err)
	}
	return chunked, whole, true
}

func checkChunked(t testing.TB, md string) (compared int) {
	t.Helper()
	for _, n := range []int{2, 3, len(md)} {
		chunked, whole, ok := chunkedVsWhole(t, md, n)
		if !ok {
			continue
		}
		compared++
		if !bytes.Equal(chunked, whole) {
			t.Fatalf("chunked (n=%d) differs from whole for %q:\nchunked: %s\nwhole:   %s", n, md, chunked, whole)
		}
	}
	return compared
}

// fuzzSeedStrings reads the string arguments of a fuzz seed corpus.
func fuzzSeedStrings(t testing.TB, name string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if v, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// chunkCases are the documents TestChunkedEqualsWhole compares: the corpus,
// the fuzz seeds (Repair's too, read as Markdown), every ordered pair of
// corpus documents, every seed after and before every corpus document, and
// the benchmark document.
func chunkCases(t testing.TB) []string {
	docs := corpusDocs(t)
	seeds := append(fuzzSeedStrings(t, "FuzzFromMarkdown"), fuzzSeedStrings(t, "FuzzRepair")...)
	seeds = append(seeds, fuzzSeedStrings(t, "FuzzChunkedEqualsWhole")...)
	cases := append(append([]string{}, docs...), seeds...)
	for _, a := range docs {
		for _, b := range docs {
			cases = append(cases, a+"\n\n"+b, a+b)
		}
		for _, s := range seeds {
			cases = append(cases, a+"\n\n"+s, s+"\n\n"+a)
		}
	}
	var big strings.Builder
	for big.Len() < 100*1024 {
		for _, d := range docs {
			big.WriteString(d)
			big.WriteString("\n\n")
		}
	}
	return append(cases, big.String())
}

func corpusDocs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus (%v)", err)
	}
	docs := make([]string, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = string(data)
	}
	return docs
}

func TestChunkedEqualsWhole(t *testing.T) {
	cases := chunkCases(t)
	compared := 0
	for _, md := range cases {
		compared += checkChunked(t, md)
	}
	t.Logf("%d documents, %d chunked conversions compared", len(cases), compared)
	if compared < len(cases) {
		t.Fatalf("only %d chunked conversions for %d documents: the cut rule refuses too much", compared, len(cases))
	}
}

// TestChunkedRefusesOpenBlocks checks that cuts inside top-level code and
// HTML blocks are found wrong, and that references defined in another chunk
// resolve as in the whole document.
func TestChunkedRefusesOpenBlocks(t *testing.T) {
	for _, md := range []string{
		"```\ncode\n\nmore code\n\nstill code\n```\n\nafter\n",
		"~~~~\n```\n\nText in code\n~~~~\n\nafter\n",
		"<!-- a comment\n\nStill comment -->\n\nafter\n",
		"<pre>\n\nPre text\n</pre>\n\nafter\n",
	} {
		src := []byte(md)
		bounds := []int{0, strings.Index(md, "\n\n") + 2, len(src)}
		if _, ok := convertChunks(src, bounds); ok {
			t.Errorf("cut at %d accepted inside an open block: %q", bounds[1], md)
		}
	}
	md := "Use [the docs] and [spec].\n\n[spec]: https://a.example\n\nNext [the docs] and [spec].\n\n[the docs]: https://b.example\n[spec]: https://c.example\n"
	if n := checkChunked(t, md); n == 0 {
		t.Fatal("no chunked conversion compared")
	}
}

func FuzzChunkedEqualsWhole(f *testing.F) {
	for _, md := range corpusDocs(f) {
		f.Add(md)
	}
	for _, md := range fuzzSeedStrings(f, "FuzzFromMarkdown") {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		checkChunked(t, md)
		// The input twice: definitions and uses meet across chunks.
		checkChunked(t, md+"\n\n"+md)
	})
}
