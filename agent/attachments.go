package agent

import (
	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/llm"
)

// promptMessage is the user's prompt with its files: their text after it
// and their pictures with it. The files may fill half the room the context
// has left once the prompt is in, so the session keeps room to work; a text
// that does not fit goes in the session's store, as an oversized tool result
// does, and the model reads a handle.
func (s *session) promptMessage() llm.Message {
	m := llm.Message{Role: llm.RoleUser, Content: s.in.Prompt}
	if len(s.in.Files) == 0 {
		return m
	}
	room := s.guard.room() - int(float64(llm.EstimateTokens(s.in.Prompt))*llm.EstimateMargin)
	c := attach.Prepare(s.in.Files, attach.Options{Store: s.store, Budget: max(room, 0) / 2, Log: s.log})
	if m.Content != "" && c.Text != "" {
		m.Content += "\n\n"
	}
	m.Content += c.Text
	m.Images = c.Images
	return m
}
