// Package anthropic is the llm.Provider for Anthropic's Messages API, built
// on the official Go SDK (v2, API version 2026-10-21). It maps the
// provider-neutral conversation onto Messages, makes exactly one attempt per
// call (the SDK's own retries are off; llm.Chain retries), and reports every
// failure as an *llm.Error.
//
// Choices worth knowing:
//   - The leading system messages become the top-level system prompt, in
//     order, joined by a blank line; a system message later in the
//     conversation (a final-turn notice, a reminder) travels as a user turn
//     at its place, since it is an instruction for the next reply.
//     Consecutive tool results become one user turn, and consecutive
//     messages of one role are merged, as the API requires. Tool-call IDs minted by other providers are made
//     to fit the API's pattern, so a conversation survives a fallback.
//   - Tool-call arguments that are not a JSON object cannot be sent back
//     as tool_use input; they travel as {"malformed_arguments": "<text>"}
//     (see malformedArgumentsKey). Empty arguments travel as {}.
//   - temperature and top_p are refused by API version 2026-10-21, even at
//     their defaults, so they are sent only when the provider's headers pin
//     "anthropic-version: 2023-06-01", and then only the ones that are set.
//   - Automatic prompt caching is on (top-level cache_control), since an
//     agent resends the same growing prefix every turn.
//   - The configuration is the only source of settings: ANTHROPIC_* variables
//     of the environment are not read (use ${VAR} in the config file).
//   - A streamed answer is accumulated so the Response is the same as for a
//     plain call; the raw text of tool-call arguments is kept even when it
//     is not valid JSON. A non-streamed call that the SDK refuses because it
//     could outlast ten minutes (a large max_tokens) is streamed instead.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// legacyVersion is the API version that still accepts sampling parameters.
const legacyVersion = "2023-06-01"

// Provider talks to one configured Anthropic endpoint. It is safe for
// concurrent use.
type Provider struct {
	name     string
	key      string // for scrubbing error messages, never for logging
	models   map[string]config.Model
	vision   func(model string) bool
	timeout  time.Duration // per call, 0 = none
	client   sdk.Client
	sampling bool // send temperature/top_p (legacy API version pinned)
	streams  bool // config stream (default true); false makes plain calls
}

var _ llm.Provider = (*Provider)(nil)

// New returns the provider called name, configured by cfg: cfg.BaseURL
// (default https://api.anthropic.com), cfg.APIKey, cfg.Headers sent with
// every request, cfg.Timeout for each call, and cfg.Models for pricing.
func New(name string, cfg config.Provider) (*Provider, error) {
	transport := http.DefaultTransport
	if t, ok := transport.(*http.Transport); ok {
		t = t.Clone() // a connection pool of its own
		// Concurrent sessions call the same host: keep their connections
		// instead of dialling anew for most calls (the default keeps 2).
		t.MaxIdleConnsPerHost = llm.MaxIdleConnsPerHost
		transport = t
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(&http.Client{Transport: transport}),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("llm provider %q: base_url %q is not an http(s) URL", name, cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if key := cfg.APIKey.Reveal(); key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	p := &Provider{name: name, key: cfg.APIKey.Reveal(), models: cfg.Models, vision: cfg.Vision, timeout: cfg.Timeout.D(), streams: cfg.Streams()}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k].Reveal()))
		if strings.EqualFold(k, "anthropic-version") && strings.TrimSpace(cfg.Headers[k].Reveal()) == legacyVersion {
			p.sampling = true
		}
	}
	p.client = sdk.NewClient(opts...)
	return p, nil
}

// Name returns the configured provider name.
func (p *Provider) Name() string { return p.name }

// Complete makes one call to the Messages API.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	params, err := params(req, p.vision(req.Model))
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.name, Model: req.Model, Message: p.redact(err.Error()), Err: err}
	}

	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	var opts []option.RequestOption
	if p.sampling {
		if req.Temperature != nil {
			opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
		}
		if req.TopP != nil {
			opts = append(opts, option.WithJSONSet("top_p", *req.TopP))
		}
	}

	var msg *sdk.Message
	var args map[int]string
	stream := req.Stream && p.streams
	if !stream {
		if _, err := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, nil); err != nil {
			stream = true
		}
	}
	onText := req.OnText
	if !stream {
		onText = nil
	}
	if stream {
		msg, args, err = p.stream(ctx, params, opts, onText)
	} else {
		msg, err = p.create(ctx, params, opts)
	}
	if err != nil {
		return nil, p.classify(ctx, req.Model, err)
	}
	return p.response(req.Model, msg, args, time.Since(start)), nil
}

// create makes a plain call. It decodes the body itself, so that an answer
// that cannot be decoded is told apart from a connection that broke.
func (p *Provider) create(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption) (*sdk.Message, error) {
	var body []byte
	if _, err := p.client.Messages.New(ctx, params, append(opts, option.WithResponseBodyInto(&body))...); err != nil {
		return nil, err
	}
	var msg sdk.Message
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadResponse, err)
	}
	if msg.Type != "message" && !msg.JSON.Content.Valid() {
		return nil, fmt.Errorf("%w: the answer is not a message", errBadResponse)
	}
	return &msg, nil
}

// stream makes a streaming call and accumulates it. It returns the raw
// argument text of each tool_use block by content index, which the SDK's
// accumulator replaces with {} when it is not valid JSON.
func (p *Provider) stream(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption, onText func(string)) (*sdk.Message, map[int]string, error) {
	s := p.client.Messages.NewStreaming(ctx, params, opts...)
	defer s.Close()

	var msg sdk.Message
	var partial map[int]*strings.Builder
	started, stopped := false, false
	for s.Next() {
		ev := s.Current()
		if ev.Type != "message_start" && !started {
			return nil, nil, fmt.Errorf("%w: stream event %q before message_start", errBadResponse, ev.Type)
		}
		if err := msg.Accumulate(ev); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errBadResponse, err)
		}
		switch ev.Type {
		case "message_start":
			started = true
		case "message_stop":
			stopped = true
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if onText != nil && ev.Delta.Text != "" {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				if partial == nil {
					partial = map[int]*strings.Builder{}
				}
				b := partial[int(ev.Index)]
				if b == nil {
					b = &strings.Builder{}
					partial[int(ev.Index)] = b
				}
				b.WriteString(ev.Delta.PartialJSON)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, nil, err
	}
	if !stopped {
		return nil, nil, fmt.Errorf("%w: the stream ended before message_stop", errBadResponse)
	}
	args := make(map[int]string, len(partial))
	for i, b := range partial {
		args[i] = b.String()
	}
	return &msg, args, nil
}

// response converts the API's message. args, from a stream, overrides the
// input of tool_use blocks by content index.
func (p *Provider) response(model string, msg *sdk.Message, args map[int]string, latency time.Duration) *llm.Response {
	out := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			a, ok := args[i]
			if !ok {
				a = inputText(b.Input)
			}
			if strings.TrimSpace(a) == "" {
				a = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: a})
		}
		// Thinking and server-side tool blocks are not part of the
		// provider-neutral answer.
	}
	out.Content = text.String()

	u := llm.Usage{
		InputTokens:      int(msg.Usage.InputTokens),
		OutputTokens:     int(msg.Usage.OutputTokens),
		CacheReadTokens:  int(msg.Usage.CacheReadInputTokens),
		CacheWriteTokens: int(msg.Usage.CacheCreationInputTokens),
	}
	u.CostUSD = llm.Cost(p.models[model], u)
	return &llm.Response{
		Message:      out,
		FinishReason: finishReason(msg.StopReason),
		Usage:        u,
		Provider:     p.name,
		Model:        model,
		Latency:      latency,
	}
}

// inputText returns the arguments of a non-streamed tool_use block. The
// input is a JSON object; a gateway that could not parse what the model
// wrote may pass the text on as a JSON string instead, which is unwrapped so
// that the caller sees the model's text.
func inputText(in json.RawMessage) string {
	in = bytes.TrimSpace(in)
	if len(in) > 0 && in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s
		}
	}
	return string(in)
}

func finishReason(r sdk.StopReason) llm.FinishReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return llm.FinishStop
	case sdk.StopReasonToolUse:
		return llm.FinishToolCalls
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.FinishLength
	case sdk.StopReasonRefusal:
		return llm.FinishFilter
	}
	return llm.FinishOther
}
