package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/llm"
)

// Files shared earlier in a thread are not downloaded with the question:
// the history turns list them (name, type, size, who shared it, id), and
// the session is offered FetchFileTool to read one on demand into its
// tool_output store. The tool reaches only the files listed in this
// thread's history: any other id is refused before anything is asked of
// Slack, so a model (or a message quoting another thread's file id) cannot
// read a file the people of this thread were not shown.

// FetchFileTool is the tool that reads a file shared earlier in the thread.
const FetchFileTool = "slack__fetch_file"

var fetchFileSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["file_id"],` +
	`"properties":{"file_id":{"type":"string","description":"The id of a file listed in this thread's messages, like F0123ABCD."}}}`)

// threadFile is a file of an earlier message of the thread.
type threadFile struct {
	attachedFile
	by string // who shared it, as the history names them
}

// listFiles is the lines naming m's files in its history turn, and the
// files themselves.
func listFiles(by string, m slackapi.Message) (string, []threadFile) {
	files := filesOf(m.Files)
	if len(files) == 0 {
		return "", nil
	}
	var b strings.Builder
	out := make([]threadFile, 0, len(files))
	for _, f := range files {
		typ := f.Type
		if typ == "" {
			typ = "unknown type"
		}
		fmt.Fprintf(&b, "\n[File %s shared by %s: %s, %s, %s; read it with %s]", f.ID, by, attach.DisplayName(f.Name), typ,
			attach.FormatSize(f.Size), FetchFileTool)
		out = append(out, threadFile{attachedFile: f, by: by})
	}
	return b.String(), out
}

// threadTools are the session's own tools: FetchFileTool when the thread
// has files.
func (r *run) threadTools(files []threadFile) []agent.SessionTool {
	if len(files) == 0 {
		return nil
	}
	def := llm.ToolDef{Name: FetchFileTool, Schema: fetchFileSchema,
		Description: "Read a file shared earlier in this Slack thread, by the id its message lists. Texts, logs, data and PDFs " +
			"are stored whole and you get a handle to ask tool_output about; for a picture or another kind you get its description. " +
			"Only the files of this thread can be read."}
	return []agent.SessionTool{{Def: def, Run: func(ctx context.Context, args json.RawMessage) agent.SessionResult {
		var a struct {
			FileID string `json:"file_id"`
		}
		_ = json.Unmarshal(args, &a)
		return r.fetchThreadFile(ctx, files, strings.TrimSpace(a.FileID))
	}}}
}

// fetchThreadFile runs one FetchFileTool call.
func (r *run) fetchThreadFile(ctx context.Context, files []threadFile, id string) agent.SessionResult {
	i := slices.IndexFunc(files, func(f threadFile) bool { return f.ID == id })
	if i < 0 {
		ids := make([]string, 0, len(files))
		for _, f := range files {
			ids = append(ids, f.ID)
		}
		return agent.SessionResult{IsError: true, Content: fmt.Sprintf("%q is not a file of this thread: only the files its messages list can be read (%s).",
			id, strings.Join(ids, ", "))}
	}
	f := files[i]
	log := r.b.log.With(zap.String("session", r.id), zap.String("file", f.ID))
	if f.Size > fileMaxBytes(r.b.cfg) {
		log.Info("thread file not read: too large", zap.Int64("bytes", f.Size))
		return agent.SessionResult{IsError: true, Content: attach.TooLargeReason(f.Name, f.Size, fileMaxBytes(r.b.cfg))}
	}
	data, why := r.download(ctx, f.attachedFile)
	if why != "" {
		log.Info("thread file not read")
		return agent.SessionResult{IsError: true, Content: why}
	}
	kind, mt := attach.Sniff(f.Name, f.Type, data)
	log.Info("thread file read", zap.String("kind", string(kind)), zap.String("media_type", mt), zap.Int("bytes", len(data)))
	head := fmt.Sprintf("%s (%s, %s, shared by %s)", attach.DisplayName(f.Name), mt, attach.FormatSize(int64(len(data))), f.by)
	switch kind {
	case attach.KindText:
		return agent.SessionResult{Content: strings.TrimPrefix(string(data), "\ufeff"), Store: true, Name: f.Name}
	case attach.KindPDF:
		text, err := attach.PDFText(data)
		if err != nil {
			return agent.SessionResult{IsError: true, Content: head + ": " + err.Error()}
		}
		return agent.SessionResult{Content: text, Store: true, Name: f.Name}
	case attach.KindImage:
		return agent.SessionResult{Content: head + " is a picture: a tool cannot show it. Ask the person to attach it to their question if you need to see it."}
	}
	return agent.SessionResult{Content: head + ": its content is not shown; only pictures, texts and PDFs are read."}
}
