package config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SuggestedPrompt is one of the prompts Slack offers a person who opens a
// new conversation with the bot: Title is the button's label, Message what
// the person sends by pressing it. In a file it is either a mapping with
// both keys or a plain string, which is then both.
type SuggestedPrompt struct {
	Title   string `yaml:"title"`
	Message string `yaml:"message"`
}

// UnmarshalYAML reads a prompt written as a string or as a mapping.
func (p *SuggestedPrompt) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		*p = SuggestedPrompt{Title: s, Message: s}
		return nil
	}
	type plain SuggestedPrompt
	var v plain
	if err := unmarshal(&v); err != nil {
		return err
	}
	*p = SuggestedPrompt(v)
	return nil
}

// Bounds on suggested prompts. Slack takes at most four prompts in one
// assistant.threads.setSuggestedPrompts call. It documents no length
// limits; a prompt's title is a button label, so it is held to what such a
// label shows (75 characters, as a feedback button's), and its message to
// one short question.
const (
	MaxSuggestedPrompts       = 4
	MaxSuggestedPromptTitle   = 75
	MaxSuggestedPromptMessage = 1000
)

// checkSuggestedPrompts checks a suggested_prompts list at key: at most
// MaxSuggestedPrompts, each with a title and a message within their bounds.
// Surrounding spaces are trimmed.
func checkSuggestedPrompts(w *walker, key string, prompts []SuggestedPrompt) {
	if len(prompts) > MaxSuggestedPrompts {
		w.errorf(key, "lists %d prompts; Slack shows at most %d, so keep the %d that matter most", len(prompts), MaxSuggestedPrompts, MaxSuggestedPrompts)
	}
	for i := range prompts {
		p := &prompts[i]
		p.Title, p.Message = strings.TrimSpace(p.Title), strings.TrimSpace(p.Message)
		ik := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case p.Title == "" && p.Message == "":
			w.errorf(ik, "is empty; write the question as a string, or give a title and a message")
		case p.Title == "":
			w.errorf(ik+".title", "is empty; write the label Slack shows on the prompt")
		case p.Message == "":
			w.errorf(ik+".message", "is empty; write what the person sends by pressing the prompt")
		}
		if n := utf8.RuneCountInString(p.Title); n > MaxSuggestedPromptTitle {
			w.errorf(ik+".title", "is %d characters; a prompt's label holds at most %d (put the whole question in message)", n, MaxSuggestedPromptTitle)
		}
		if n := utf8.RuneCountInString(p.Message); n > MaxSuggestedPromptMessage {
			w.errorf(ik+".message", "is %d characters; keep a suggested prompt under %d", n, MaxSuggestedPromptMessage)
		}
	}
}
