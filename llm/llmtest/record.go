package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/slackbot/slackbot/llm"
)

// Recorded is one request the server received, decoded back into neutral
// terms.
type Recorded struct {
	Format string // FormatOpenAI or FormatAnthropic; "" for an unknown path
	Path   string
	Header http.Header
	Body   []byte
	// APIKey is the credential sent as "Authorization: Bearer" or
	// X-Api-Key, "" when none.
	APIKey string
	Model  string
	Stream bool
	// IncludeUsage reports OpenAI's stream_options.include_usage.
	IncludeUsage bool
	// System is the system prompt: OpenAI system and developer messages
	// joined by a blank line, or Anthropic's system parameter.
	System string
	// Messages is the conversation without the system prompt. Tool results
	// are RoleTool messages with ToolCallID, and ToolName filled from the
	// matching call; an Anthropic user turn with several tool_result blocks
	// becomes several messages.
	Messages []llm.Message
	// Tools are the tools offered, ToolNames their names.
	Tools     []llm.ToolDef
	ToolNames []string
	// ToolChoice is "" when absent, "auto", "required" (OpenAI required,
	// Anthropic any), "none", or the name of a forced tool.
	ToolChoice string
	// MaxTokens is max_completion_tokens, else max_tokens (OpenAI), or
	// max_tokens (Anthropic); 0 when absent.
	MaxTokens   int
	Temperature *float64
	TopP        *float64
	// Invalid says why the request was refused with HTTP 400 as the real
	// service would refuse it ("" when it was accepted). Invalid requests
	// do not consume the script.
	Invalid string

	seq int
}

// Decode unmarshals the raw request body into v, for assertions on fields
// that Recorded does not surface.
func (r *Recorded) Decode(v any) error { return json.Unmarshal(r.Body, v) }

func decodeRequest(format string, r *http.Request) *Recorded {
	body, _ := io.ReadAll(r.Body)
	rec := &Recorded{Format: format, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		rec.APIKey = v
	} else if v := r.Header.Get("X-Api-Key"); v != "" {
		rec.APIKey = v
	}
	if format == FormatOpenAI {
		var req oaRequest
		if err := decodeOpenAI(rec, &req); err != nil {
			rec.Invalid = "We could not parse the JSON body of your request: " + err.Error()
		} else {
			rec.Invalid = validateOpenAI(&req)
		}
		return rec
	}
	var req anRequest
	if err := decodeAnthropic(rec, &req); err != nil {
		rec.Invalid = "There was an error parsing the body: " + err.Error()
	} else {
		rec.Invalid = validateAnthropic(&req)
	}
	return rec
}

// strict decodes body rejecting trailing data.
func strict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return io.ErrUnexpectedEOF
	}
	return nil
}

type oaRequest struct {
	Model    string      `json:"model"`
	Messages []oaMessage `json:"messages"`
	Tools    []oaTool    `json:"tools"`
	// ToolChoice is a string or an object.
	ToolChoice          json.RawMessage `json:"tool_choice"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// textOf flattens a content field: a string, null, or an array of parts
// whose text parts are concatenated.
func textOf(raw json.RawMessage) (string, error) {
	text, _, err := partsOf(raw)
	return text, err
}

// oaPart is one part of an OpenAI content array.
type oaPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// partsOf reads a content field: its text parts concatenated, and its
// image_url parts holding data: URIs as images (MediaType and Data; an
// image that is not a data: URI keeps its URL as Name).
func partsOf(raw json.RawMessage) (string, []llm.Image, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var parts []oaPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var images []llm.Image
	for _, p := range parts {
		b.WriteString(p.Text)
		if p.Type == "image_url" && p.ImageURL != nil {
			images = append(images, imageOfURL(p.ImageURL.URL))
		}
	}
	return b.String(), images, nil
}

// imageOfURL decodes a data: URI; any other URL is kept as the Name.
func imageOfURL(u string) llm.Image {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return llm.Image{Name: u}
	}
	meta, data, _ := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	img := llm.Image{MediaType: mediaType}
	if isBase64 {
		img.Data, _ = base64.StdEncoding.DecodeString(data)
	}
	return img
}

func decodeOpenAI(rec *Recorded, req *oaRequest) error {
	if err := strict(rec.Body, req); err != nil {
		return err
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	rec.IncludeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	rec.Temperature, rec.TopP = req.Temperature, req.TopP
	if req.MaxCompletionTokens != nil {
		rec.MaxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		rec.MaxTokens = *req.MaxTokens
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
		rec.ToolNames = append(rec.ToolNames, t.Function.Name)
	}
	if tc := bytes.TrimSpace(req.ToolChoice); len(tc) > 0 && string(tc) != "null" {
		var s string
		if json.Unmarshal(tc, &s) == nil {
			rec.ToolChoice = s
		} else {
			var named struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(tc, &named); err != nil {
				return err
			}
			rec.ToolChoice = named.Function.Name
		}
	}
	var system []string
	names := map[string]string{}
	for _, m := range req.Messages {
		text, images, err := partsOf(m.Content)
		if err != nil {
			return err
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: text}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
				names[c.ID] = c.Function.Name
			}
			rec.Messages = append(rec.Messages, msg)
		case "tool":
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: m.ToolCallID, ToolName: names[m.ToolCallID]})
		default:
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.Role(m.Role), Content: text, Images: images})
		}
	}
	rec.System = strings.Join(system, "\n\n")
	return nil
}

type anRequest struct {
	Model       string          `json:"model"`
	MaxTokens   *int            `json:"max_tokens"`
	System      json.RawMessage `json:"system"`
	Messages    []anMessage     `json:"messages"`
	Tools       []anTool        `json:"tools"`
	ToolChoice  *anToolChoice   `json:"tool_choice"`
	Temperature *float64        `json:"temperature"`
	TopP        *float64        `json:"top_p"`
	Stream      bool            `json:"stream"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Source    *anSource       `json:"source"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// anSource is an image block's source.
type anSource struct {
	Type      string `json:"type"` // base64 | url | file
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

type anTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// blocksOf decodes Anthropic content: a string is one text block.
func blocksOf(raw json.RawMessage) ([]anBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anBlock{{Type: "text", Text: &s}}, nil
	}
	var blocks []anBlock
	err := json.Unmarshal(raw, &blocks)
	return blocks, err
}

func decodeAnthropic(rec *Recorded, req *anRequest) error {
	if err := strict(rec.Body, req); err != nil {
		return err
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	rec.Temperature, rec.TopP = req.Temperature, req.TopP
	if req.MaxTokens != nil {
		rec.MaxTokens = *req.MaxTokens
	}
	system, err := textOf(req.System)
	if err != nil {
		return err
	}
	rec.System = system
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, llm.ToolDef{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
		rec.ToolNames = append(rec.ToolNames, t.Name)
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Type {
		case "any":
			rec.ToolChoice = string(llm.ToolChoiceRequired)
		case "tool":
			rec.ToolChoice = tc.Name
		default:
			rec.ToolChoice = tc.Type
		}
	}
	names := map[string]string{}
	for _, m := range req.Messages {
		blocks, err := blocksOf(m.Content)
		if err != nil {
			return err
		}
		var text strings.Builder
		var calls []llm.ToolCall
		var images []llm.Image
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text != nil {
					text.WriteString(*b.Text)
				}
			case "image":
				if b.Source != nil {
					img := llm.Image{MediaType: b.Source.MediaType, Name: b.Source.URL}
					img.Data, _ = base64.StdEncoding.DecodeString(b.Source.Data)
					images = append(images, img)
				}
			case "tool_use":
				calls = append(calls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				names[b.ID] = b.Name
			case "tool_result":
				content, err := toolResultText(b.Content)
				if err != nil {
					return err
				}
				rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleTool, Content: content,
					ToolCallID: b.ToolUseID, ToolName: names[b.ToolUseID], IsError: b.IsError})
			}
		}
		if text.Len() > 0 || len(calls) > 0 || len(images) > 0 || m.Role == "assistant" || !hasToolResult(blocks) {
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.Role(m.Role), Content: text.String(), ToolCalls: calls, Images: images})
		}
	}
	return nil
}

func hasToolResult(blocks []anBlock) bool {
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// toolResultText flattens tool_result content: a string or text blocks.
func toolResultText(raw json.RawMessage) (string, error) {
	blocks, err := blocksOf(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text != nil {
			b.WriteString(*bl.Text)
		}
	}
	return b.String(), nil
}
