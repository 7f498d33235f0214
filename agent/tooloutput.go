package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// Oversized tool results: a result over the agent's tool_output.max_bytes,
// or with more tokens than the session's context has room for, is stored
// whole in the session's store, and the model reads a handle instead. While
// the store holds something (and the turn is not the final one), the model
// is offered tool_output to ask about a stored result; the extraction's
// model calls are the session's (usage, cost, events, tree). The store's
// directory goes when the session ends, however it ends.

// ToolOutputTool is the tool that extracts from stored results.
const ToolOutputTool = tooloutput.ToolName

// PurposeExtraction marks the model calls made to read a stored result
// (LLMCallInfo.Purpose), so that progress can say so.
const PurposeExtraction = "extraction"

var (
	toolOutputArgs = mustCompile(tooloutput.Schema)
	toolOutputDef  = llm.ToolDef{Name: ToolOutputTool, Schema: tooloutput.Schema, Description: "Extract what you need from a tool result " +
		"that was too large to show you. Results like that were replaced by a message with a handle; pass that handle and say " +
		"precisely what you are looking for. You may ask about the same handle several times."}
)

// extractionNonceRe finds the nonce an extraction prompt asks the model to
// wrap its answer with.
var extractionNonceRe = regexp.MustCompile(`<ai-agent-([A-Za-z0-9]+)-FINAL`)

// readGrepResultBytes bounds one Read or Grep result inside the read-grep
// extraction; the tools bound their own answers well below it.
const readGrepResultBytes = 256 << 10

// readGrepTurns bounds the read-grep extraction's own session.
const readGrepTurns = 12

// openStore gives the session its store when the runner keeps stored
// results and the agent has not turned them off.
func (s *session) openStore() {
	if s.r.ToolOutput != nil && s.a.ToolOutput.IsEnabled() {
		s.store = s.r.ToolOutput.NewStore()
	}
}

// closeStore removes the session's stored results.
func (s *session) closeStore() {
	if s.store == nil {
		return
	}
	if err := s.store.Close(); err != nil && s.log != nil {
		s.log.Warn("stored tool output not removed", zap.String("dir", s.store.Dir()), zap.Error(err))
	}
}

// storing reports whether the store holds results the model may ask about.
func (s *session) storing() bool { return s.store != nil && s.store.Len() > 0 }

// resultPolicy is the session's rule for oversized results, for calls made
// while the next request has about room tokens to spare for each result.
func (s *session) resultPolicy(room int) *tools.ResultPolicy {
	max := s.a.ToolOutput.MaxBytes
	if max <= 0 {
		max = config.DefaultToolResponseMaxByte
	}
	cut := tools.Truncate(max)
	p := &tools.ResultPolicy{MaxBytes: max}
	if s.store == nil {
		p.Oversize = func(ctx context.Context, c tools.Call, r tools.Result, _ string) tools.Result { return cut(ctx, c, r) }
		return p
	}
	p.TooManyTokens = func(content string) bool {
		return int(float64(llm.EstimateTokens(content))*llm.EstimateMargin) > room
	}
	p.Oversize = func(ctx context.Context, c tools.Call, r tools.Result, reason string) tools.Result {
		e, err := s.store.Put(c.Name, string(c.Arguments), r.Content)
		if err != nil {
			// Nothing is lost for want of trying: the model still gets
			// the start and the end, and the log says why not more.
			if s.log != nil {
				s.log.Warn("tool output could not be stored; cut instead", zap.String("tool", c.Name), zap.Error(err))
			}
			return cut(ctx, c, r)
		}
		if s.log != nil {
			s.log.Warn("tool output too large: stored behind a handle", zap.String("tool", c.Name), zap.String("handle", e.Handle),
				zap.String("reason", reason), zap.Int("bytes", e.Bytes), zap.Int("lines", e.Lines), zap.Int("tokens", e.Tokens))
		}
		return tools.Result{Content: tooloutput.TooLargeMessage(e)}
	}
	return p
}

// resultRoom is how many tokens each of n results may take in the next
// request: the room the context has left, shared.
func (s *session) resultRoom(n int) int {
	return max(s.guard.room(), 0) / max(n, 1)
}

// toolOutput runs a tool_output call.
func (s *session) toolOutput(ctx context.Context, c *llm.ToolCall, op *Op) callOutcome {
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, toolOutputArgs)
	if msg != "" {
		return callOutcome{msg, true}
	}
	var args struct {
		Handle  string `json:"handle"`
		Extract string `json:"extract"`
		Mode    string `json:"mode"`
	}
	_ = json.Unmarshal(raw, &args)
	chain, err := s.extractionChain()
	if err != nil {
		return callOutcome{"tool_output cannot run: " + err.Error(), true}
	}
	x := &tooloutput.Extractor{
		Policy: tooloutput.Policy{
			MaxChunksForFullMode: s.a.ToolOutput.MaxChunksForFullMode,
			OverlapPercent:       s.a.ToolOutput.OverlapPercent,
			ContextWindow:        s.a.ContextWindow - s.a.ContextBuffer,
			MaxOutputTokens:      s.a.MaxOutputTokens,
		},
		Model:    s.extractionModel(chain, op),
		SubAgent: s.readGrepAgent(c.ID, op),
		Log:      s.log,
	}
	if x.Log == nil {
		x.Log = zap.NewNop()
	}
	o := x.Extract(ctx, tooloutput.Request{Store: s.store, Handle: strings.TrimSpace(args.Handle), Extract: args.Extract, Mode: tooloutput.Mode(args.Mode)})
	if o.FellBack {
		s.emit(Event{Kind: EventNotice, Op: op, Warn: true,
			Notice: fmt.Sprintf("tool_output: %s failed on %s; the model got its top and bottom instead", o.Tried, args.Handle)})
	}
	return callOutcome{o.Text, !o.OK}
}

// extractionChain is the chain extraction calls use: tool_output.model
// when set, else the session's own.
func (s *session) extractionChain() (*llm.Chain, error) {
	ref := s.a.ToolOutput.Model
	if ref == "" {
		return s.chain, nil
	}
	targets, err := s.r.targets([]string{ref})
	if err != nil {
		return nil, err
	}
	return &llm.Chain{Targets: targets, MaxRetries: s.a.MaxRetries, Timeout: s.a.LLMTimeout.D(), Backoff: s.r.Backoff}, nil
}

// extractionModel makes one extraction call through chain, paid for by the
// session and shown under the tool_output call.
func (s *session) extractionModel(chain *llm.Chain, under *Op) tooloutput.Model {
	return func(ctx context.Context, system, user string) (string, error) {
		op := under.child("llm", "extraction", s.now())
		req := &llm.Request{
			Messages:        []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
			MaxOutputTokens: s.a.MaxOutputTokens, Temperature: s.a.Temperature, Stream: true,
		}
		resp, err := chain.Complete(ctx, req)
		if err != nil {
			op.finish(false, s.now())
			s.emit(Event{Kind: EventLLMCall, Op: op, LLM: &LLMCallInfo{Err: err.Error(), Purpose: PurposeExtraction}})
			// The model reads why in words; the cause stays for the log.
			return "", llm.RedactedError(unreachable(err), err)
		}
		op.rename(resp.Provider + "/" + resp.Model)
		op.finish(true, s.now())
		s.mu.Lock()
		s.usage.Add(resp.Usage)
		s.mu.Unlock()
		s.emit(Event{Kind: EventLLMCall, Op: op, LLM: &LLMCallInfo{Provider: resp.Provider, Model: resp.Model, Usage: resp.Usage,
			Latency: resp.Latency, FinishReason: resp.FinishReason, TextBytes: len(resp.Message.Content), Purpose: PurposeExtraction}})
		return resp.Message.Content, nil
	}
}

// readGrepAgent runs the read-grep extraction: a session of its own whose
// only tools are Read and Grep over the store's directory, nested under the
// tool_output call like a sub-agent.
func (s *session) readGrepAgent(callID string, under *Op) tooloutput.SubAgent {
	return func(ctx context.Context, system, user string, fs tools.Provider) (string, bool, error) {
		models := s.a.Models
		if s.a.ToolOutput.Model != "" {
			models = []string{s.a.ToolOutput.Model}
		}
		off := false
		a := &config.Agent{
			Name: ToolOutputTool, Description: "Reads a stored tool result with Read and Grep.", Prompt: system,
			AgentDefaults: config.AgentDefaults{
				Models: models, MaxTurns: readGrepTurns, MaxRetries: s.a.MaxRetries,
				MaxToolCallsPerTurn: s.a.MaxToolCallsPerTurn, Temperature: s.a.Temperature, MaxOutputTokens: s.a.MaxOutputTokens,
				ContextWindow: s.a.ContextWindow, ContextBuffer: s.a.ContextBuffer, LLMTimeout: s.a.LLMTimeout,
				ToolTimeout: s.a.ToolTimeout, MaxSessionDuration: s.a.MaxSessionDuration,
			},
			Tools:      []string{"Read", "Grep"},
			Output:     config.Output{Format: config.FormatText},
			ToolOutput: config.ToolOutput{Enabled: &off, MaxBytes: readGrepResultBytes},
		}
		fsTools := tools.New(ctx, tools.Options{MaxResultBytes: readGrepResultBytes, Log: s.r.Log}, fs)
		defer func() { _ = fsTools.Close() }()
		r := &Runner{Providers: s.r.Providers, Tools: fsTools, Log: s.r.Log, Backoff: s.r.Backoff, Now: s.r.Now}
		in := Input{Agent: a, Format: config.FormatText, Prompt: user, Observer: s.in.Observer,
			SessionID: s.id + "/" + ToolOutputTool + "-" + randomID(2)}
		if m := extractionNonceRe.FindStringSubmatch(system); m != nil {
			in.nonce = m[1]
		}
		res := r.run(ctx, in, &link{path: s.path, call: callID, op: under})
		s.mu.Lock()
		s.usage.Add(res.Usage)
		s.mu.Unlock()
		err := res.Err
		if err != nil {
			err = llm.RedactedError(res.Report.Text(), err) // the report says why in words
		}
		return res.Report.Text(), res.Report.Synthetic(), err
	}
}
