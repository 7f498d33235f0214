package config

import "strings"

// Vision reports whether model, served by this provider, reads images: the
// model's own vision key when set, else what its family is known to do.
// Known families that see: OpenAI's gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and
// the o-series from o1 on (not o1-mini or o3-mini), and Anthropic's Claude
// 3 and later. Any other model is taken not to, so a text-only model is
// never sent a picture it would refuse.
func (p Provider) Vision(model string) bool {
	if m, ok := p.Models[model]; ok && m.Vision != nil {
		return *m.Vision
	}
	return visionFamily(model)
}

// visionFamily matches the model's own name, after any routing prefix a
// gateway puts before it ("openai/gpt-4o", "anthropic/claude-sonnet-4").
func visionFamily(model string) bool {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case strings.HasPrefix(name, "gpt-4o"), strings.HasPrefix(name, "chatgpt-4o"),
		strings.HasPrefix(name, "gpt-4.1"), strings.HasPrefix(name, "gpt-4.5"),
		strings.HasPrefix(name, "gpt-5"), strings.HasPrefix(name, "gpt-4-turbo"),
		strings.HasPrefix(name, "gpt-4-vision"):
		return true
	case strings.HasPrefix(name, "o1-mini"), strings.HasPrefix(name, "o3-mini"):
		return false
	case len(name) >= 2 && name[0] == 'o' && name[1] >= '1' && name[1] <= '9':
		return true
	case strings.HasPrefix(name, "claude-"):
		return claudeSees(strings.TrimPrefix(name, "claude-"))
	}
	return false
}

// claudeSees tells Claude 3 and later (claude-3-haiku, claude-3-5-sonnet,
// claude-sonnet-4-5, claude-opus-4) from Claude 2 and Instant.
func claudeSees(rest string) bool {
	for _, part := range strings.Split(rest, "-") {
		if part == "" || part[0] < '0' || part[0] > '9' {
			continue
		}
		return part[0] >= '3' || len(part) > 1 && part[1] >= '0' && part[1] <= '9'
	}
	return false
}
