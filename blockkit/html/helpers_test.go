package html

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// renderCase is one rendering expectation: the message, fragments its HTML
// must hold, and fragments it must not.
type renderCase struct {
	name   string
	blocks string
	text   string
	opts   Options
	want   []string
	reject []string
}

func runCases(t *testing.T, cases []renderCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := string(tc.opts.Message(json.RawMessage(tc.blocks), tc.text))
			checkHTML(t, got)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, r := range tc.reject {
				if strings.Contains(got, r) {
					t.Errorf("unexpected %q in\n%s", r, got)
				}
			}
		})
	}
}

var tagRe = regexp.MustCompile(`<(/?)([a-z0-9]+)[^>]*>`)

// handlerRe finds an event handler attribute outside a quoted value.
var handlerRe = regexp.MustCompile(`^<[a-z0-9]+(\s+[a-z-]+="[^"]*")*\s+on[a-z]+=`)

// voidTags have no closing tag.
var voidTags = map[string]bool{"br": true, "hr": true, "img": true}

// checkHTML asserts that got is one bk-message whose tags nest properly and
// that nothing from a message became live markup.
func checkHTML(t *testing.T, got string) {
	t.Helper()
	if !strings.HasPrefix(got, `<div class="bk-message">`) || !strings.HasSuffix(got, `</div>`) {
		t.Errorf("not wrapped in a bk-message div:\n%s", got)
	}
	var stack []string
	for _, m := range tagRe.FindAllStringSubmatch(got, -1) {
		name := m[2]
		if voidTags[name] {
			continue
		}
		if m[1] == "" {
			stack = append(stack, name)
			continue
		}
		if len(stack) == 0 || stack[len(stack)-1] != name {
			t.Fatalf("</%s> closes %v in\n%s", name, stack, got)
		}
		stack = stack[:len(stack)-1]
	}
	if len(stack) > 0 {
		t.Fatalf("unclosed %v in\n%s", stack, got)
	}
	for _, m := range tagRe.FindAllString(got, -1) {
		tag := strings.ToLower(m)
		if strings.HasPrefix(tag, "<script") || handlerRe.MatchString(tag) ||
			strings.Contains(tag, `="javascript`) || strings.Contains(tag, `="data:`) {
			t.Errorf("live markup %s in\n%s", m, got)
		}
	}
}
