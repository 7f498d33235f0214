package tooloutput

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slackbot/slackbot/tools"
)

// The read-grep sub-agent's tools: Read and Grep over the files of one
// directory, confined to it.

// Bounds of one call, so an answer always fits the sub-agent's context.
const (
	readMaxLines   = 2000
	readMaxBytes   = 100 << 10
	readLineBytes  = 2000 // longer lines are cut, saying how much is left
	grepMaxResults = 1000
	grepDefResults = 100
	grepMaxContext = 10
	grepMaxBytes   = 100 << 10
	grepLineBytes  = 500 // a match line is shown around its match
	// grepMaxPattern bounds a Grep pattern: matching costs the pattern's
	// length for every byte searched.
	grepMaxPattern = 1024
	// grepCheckEvery is how many lines (or candidate matches) a search
	// goes between looks at its context.
	grepCheckEvery = 256
)

var readSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["path"],
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "The file name (the handle)."},
    "offset": {"type": "integer", "minimum": 1, "description": "The line to start at (1 = the first line). Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "How many lines to return. Default and most: 2000."}
  }
}`)

var grepSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["pattern"],
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "A Go (RE2) regular expression, matched against each line. Use (?i) for case-insensitive."},
    "path": {"type": "string", "description": "The file name (the handle) to search. Default: every file."},
    "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "Lines to show before and after each match. Default 0."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "The most matching lines to return. Default 100."}
  }
}`)

type fsProvider struct {
	tools.Base
	root string
}

// fsProviderAt returns the Read and Grep tools over the files of dir. Names are
// relative to dir; absolute names, ".." and symlinks that lead out of dir
// are refused.
func fsProviderAt(dir string) tools.Provider { return &fsProvider{root: dir} }

func (p *fsProvider) Namespace() string { return ToolName }

func (p *fsProvider) Tools(context.Context) ([]tools.Tool, error) {
	return []tools.Tool{
		{Name: "Read", Schema: readSchema, Description: "Read lines of a file, numbered. Lines longer than " +
			strconv.Itoa(readLineBytes) + " bytes are cut; use Grep to find text in them. At most 2000 lines or 100 KB per call; continue with offset."},
		{Name: "Grep", Schema: grepSchema, Description: "Search files for lines matching a regular expression. " +
			"Matches come as \"file:line: text\" and context lines as \"file-line- text\"."},
	}, nil
}

func (p *fsProvider) Call(ctx context.Context, c tools.Call) (tools.Result, error) {
	var text string
	var err error
	switch c.Name {
	case "Read":
		text, err = p.read(ctx, c.Arguments)
	case "Grep":
		text, err = p.grep(ctx, c.Arguments)
	default:
		err = fmt.Errorf("there is no tool %q here: use Read or Grep", c.Name)
	}
	if err != nil {
		return tools.Result{Content: err.Error(), IsError: true}, nil
	}
	return tools.Result{Content: text}, nil
}

// resolve turns a name from the model into a path inside the root, or
// says why it may not be used.
func (p *fsProvider) resolve(name string) (string, error) {
	if name == "" {
		return "", errors.New("path is empty: give the file name (the handle)")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("path %q is refused: absolute paths are not allowed; give the file name (the handle) only", name)
	}
	for seg := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", fmt.Errorf("path %q is refused: \"..\" is not allowed; give the file name (the handle) only", name)
		}
	}
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		return "", fmt.Errorf("the directory of stored outputs is not available: %w", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("there is no file %q. %s", name, p.fileList())
		}
		return "", fmt.Errorf("path %q cannot be used: %w", name, err)
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is refused: it leads outside the directory of stored outputs", name)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("path %q cannot be used: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("path %q is not a file. %s", name, p.fileList())
	}
	return real, nil
}

// files lists the regular files directly in the root, by name.
func (p *fsProvider) files() []string {
	list, err := os.ReadDir(p.root)
	if err != nil {
		return nil
	}
	var names []string
	for _, de := range list {
		if de.Type().IsRegular() {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	return names
}

func (p *fsProvider) fileList() string {
	names := p.files()
	if len(names) == 0 {
		return "There are no files."
	}
	return "Files: " + strings.Join(names, ", ") + "."
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// read returns numbered lines, streaming the file so a line or a file of
// any size costs one buffer.
func (p *fsProvider) read(ctx context.Context, raw json.RawMessage) (string, error) {
	var a readArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("bad arguments for Read: %w", err)
	}
	path, err := p.resolve(a.Path)
	if err != nil {
		return "", err
	}
	offset := max(a.Offset, 1)
	limit := a.Limit
	if limit <= 0 || limit > readMaxLines {
		limit = readMaxLines
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot open %q: %w", a.Path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var b strings.Builder
	line := 0
	for {
		if line%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		head, rest, err := readLine(r, readLineBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading %q: %w", a.Path, err)
		}
		line++
		if line < offset {
			continue
		}
		if line >= offset+limit {
			fmt.Fprintf(&b, "[more lines follow: call Read with offset=%d to continue]\n", line)
			return b.String(), nil
		}
		if rest > 0 {
			cut := trimPartialRune(head)
			rest += len(head) - len(cut)
			head = cut
		}
		entry := fmt.Sprintf("%6d\t%s", line, head)
		if rest > 0 {
			entry += fmt.Sprintf("[… %d more bytes on this line: use Grep to search it]", rest)
		}
		if b.Len()+len(entry)+1 > readMaxBytes {
			fmt.Fprintf(&b, "[output capped at %d KB: call Read with offset=%d to continue]\n", readMaxBytes>>10, line)
			return b.String(), nil
		}
		b.WriteString(entry + "\n")
	}
	if line < offset {
		return fmt.Sprintf("%q has %d lines; offset %d is past its end.", a.Path, line, offset), nil
	}
	return b.String(), nil
}

// readLine reads one line and returns at most keep bytes of it (without
// the newline) and how many bytes of it were left out. It returns io.EOF
// only when no line is left.
func readLine(r *bufio.Reader, keep int) ([]byte, int, error) {
	var head []byte
	rest, started := 0, false
	for {
		frag, err := r.ReadSlice('\n')
		if len(frag) > 0 {
			started = true
		}
		frag = trimNewline(frag, err)
		if room := keep - len(head); room > 0 {
			n := min(room, len(frag))
			head = append(head, frag[:n]...)
			rest += len(frag) - n
		} else {
			rest += len(frag)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && started:
			return head, rest, nil
		case err != nil:
			return nil, 0, err
		}
		return head, rest, nil
	}
}

func trimNewline(frag []byte, err error) []byte {
	if err == nil {
		frag = frag[:len(frag)-1]
		if n := len(frag); n > 0 && frag[n-1] == '\r' {
			frag = frag[:n-1]
		}
	}
	return frag
}
