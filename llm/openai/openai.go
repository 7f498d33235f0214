// Package openai adapts the OpenAI Chat Completions API, and every server
// that speaks it (Ollama, vLLM, LM Studio, OpenRouter, gateways), to
// llm.Provider, over the official SDK github.com/openai/openai-go/v3.
//
// The adapter makes exactly one attempt per call (the SDK's retries are off;
// llm.Chain decides about retries) and reports every failure as *llm.Error
// whose messages never contain the API key.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// defaultBaseURL is used when the configuration names no base_url.
const defaultBaseURL = "https://api.openai.com/v1/"

// Provider is one configured OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Provider struct {
	name    string
	key     string // only to scrub it from error messages
	models  map[string]config.Model
	vision  func(model string) bool
	timeout time.Duration
	// completionTokens sends max_completion_tokens instead of max_tokens.
	completionTokens bool
	// noStream makes every call a plain one (config stream: false), for
	// servers whose streaming is broken or slower.
	noStream bool
	chat     sdk.ChatCompletionService
}

var _ llm.Provider = (*Provider)(nil)

// New returns the provider called name, configured by cfg: cfg.BaseURL
// (default defaultBaseURL), cfg.APIKey (no Authorization header when empty,
// for local servers), cfg.Headers sent with every request, cfg.Timeout for
// each call, and cfg.Models for pricing and which models read images.
//
// The client reads nothing from the environment: an OPENAI_API_KEY meant
// for another tool must not reach a local server, nor OPENAI_BASE_URL
// redirect a configured one.
func New(name string, cfg config.Provider) (*Provider, error) {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm provider %q: base_url %q is not an http(s) URL", name, cfg.BaseURL)
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(&http.Client{Transport: transport()}),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if key := cfg.APIKey.Reveal(); key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	headers := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		headers = append(headers, k)
	}
	slices.Sort(headers)
	for _, k := range headers {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k].Reveal()))
	}
	host := strings.ToLower(u.Hostname())
	return &Provider{
		name:             name,
		key:              cfg.APIKey.Reveal(),
		models:           cfg.Models,
		vision:           cfg.Vision,
		timeout:          cfg.Timeout.D(),
		noStream:         !cfg.Streams(),
		completionTokens: host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com"),
		// NewChatCompletionService, unlike NewClient, does not read
		// OPENAI_* variables.
		chat: sdk.NewChatCompletionService(opts...),
	}, nil
}

// Name returns the configured provider name.
func (p *Provider) Name() string { return p.name }

// Complete makes one Chat Completions call.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	if req.Stream && p.noStream {
		plain := *req
		plain.Stream = false
		req = &plain
	}
	params, err := params(req, p.completionTokens, p.vision(req.Model))
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.name, Model: req.Model, Message: p.redact(err.Error())}
	}
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	var res *http.Response
	var cc *sdk.ChatCompletion
	var usage sdk.CompletionUsage
	if req.Stream {
		cc, usage, err = p.stream(ctx, params, req.OnText, &res)
	} else {
		cc, err = p.create(ctx, params, &res)
		if cc != nil {
			usage = cc.Usage
		}
	}
	if err != nil {
		return nil, p.classify(ctx, req.Model, err, res)
	}
	return p.response(req.Model, cc, usage, time.Since(start))
}

// create makes a plain call. It decodes the body itself, so that an answer
// that cannot be decoded (bad response) is told apart from a connection
// that broke while it was read (network).
func (p *Provider) create(ctx context.Context, params sdk.ChatCompletionNewParams, res **http.Response) (*sdk.ChatCompletion, error) {
	var body []byte
	if _, err := p.chat.New(ctx, params, option.WithResponseInto(res), option.WithResponseBodyInto(&body)); err != nil {
		return nil, err
	}
	var cc sdk.ChatCompletion
	if err := json.Unmarshal(body, &cc); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadResponse, err)
	}
	return &cc, nil
}

// stream makes a streamed call and accumulates it. It returns the usage of
// the final usage chunk (the accumulator drops cache writes).
func (p *Provider) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onText func(string), res **http.Response) (*sdk.ChatCompletion, sdk.CompletionUsage, error) {
	var usage sdk.CompletionUsage
	s := p.chat.NewStreaming(ctx, params, option.WithResponseInto(res))
	defer s.Close()
	var acc sdk.ChatCompletionAccumulator
	finished := false
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, usage, fmt.Errorf("%w: a stream chunk does not continue the ones before it", errBadResponse)
		}
		if chunk.JSON.Usage.Valid() {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if onText != nil && ch.Delta.Content != "" {
				onText(ch.Delta.Content)
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, usage, err
	}
	if !finished {
		return nil, usage, fmt.Errorf("%w: the stream ended before the model finished", errBadResponse)
	}
	return &acc.ChatCompletion, usage, nil
}

// response maps a completion onto the neutral Response.
func (p *Provider) response(model string, cc *sdk.ChatCompletion, usage sdk.CompletionUsage, latency time.Duration) (*llm.Response, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadResponse, Provider: p.name, Model: model, Message: "the answer has no choices"}
	}
	ch := cc.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant, Content: ch.Message.Content}
	if msg.Content == "" {
		msg.Content = ch.Message.Refusal
	}
	for i, tc := range ch.Message.ToolCalls {
		call := llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		if call.ID == "" {
			// Some compatible servers send no ids; the agent needs one
			// to pair the result with the call.
			call.ID = fmt.Sprintf("call_%d", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, call)
	}

	cached := int(usage.PromptTokensDetails.CachedTokens)
	written := int(usage.PromptTokensDetails.CacheWriteTokens)
	u := llm.Usage{
		InputTokens:      max(0, int(usage.PromptTokens)-cached-written),
		OutputTokens:     int(usage.CompletionTokens),
		CacheReadTokens:  cached,
		CacheWriteTokens: written,
	}
	price, ok := p.models[model]
	if !ok {
		price = p.models[cc.Model]
	}
	u.CostUSD = llm.Cost(price, u)

	return &llm.Response{
		Message:      msg,
		FinishReason: finishReason(ch.FinishReason, len(msg.ToolCalls) > 0),
		Usage:        u,
		Provider:     p.name,
		Model:        model,
		Latency:      latency,
	}, nil
}

// finishReason normalises finish_reason. Some compatible servers (Ollama,
// older vLLM) answer "stop" to a tool call; the calls decide.
func finishReason(r string, hasCalls bool) llm.FinishReason {
	switch r {
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "stop", "":
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishFilter
	}
	return llm.FinishOther
}

// transport is a private copy of the default transport, so that this
// provider's connections are its own; when the default has been replaced
// (tracing middleware), that replacement is used as it is.
func transport() http.RoundTripper {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		// Concurrent sessions call the same host: keep their connections
		// instead of dialling anew for most calls (the default keeps 2).
		t.MaxIdleConnsPerHost = llm.MaxIdleConnsPerHost
		return t
	}
	return http.DefaultTransport
}
