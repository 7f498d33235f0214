package blockkit

import (
	"maps"
	"slices"
	"strings"
)

// An option object may carry a url (Slack opens it when an overflow menu's
// option is chosen), and its label shows nothing of where it goes. So an
// option whose url is on a host the policy does not trust loses the url
// and keeps its place in the menu, which keeps its shape and size; the
// link it held is shown beside the block instead, with its host in view,
// as an untrusted URL button's is. The links of one block's options share
// one section, as many as its text holds (a select has up to a hundred
// options, a message fifty blocks); the others are only dropped. Choosing
// the option then only sends an action, as an option without a url always
// does.

// optionKeys are the keys under which an element holds option objects:
// overflow menus and selects, their option groups and initial choices.
var optionKeys = []string{"options", "initial_options", "initial_option"}

// optionLinks takes the untrusted url off every option object under v and
// returns the text of the section that shows them, "" when there is none:
// a line per url, in the order the options appear, initial choices last.
func (w *voiceWalk) optionLinks(v any) string {
	var links []string
	seen := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.SortedFunc(maps.Keys(x), initialLast) {
				switch {
				case !slices.Contains(optionKeys, k):
				case k == "initial_option":
					if o, ok := x[k].(map[string]any); ok {
						links = w.option(o, seen, links)
					}
				default:
					opts, _ := x[k].([]any)
					for _, o := range opts {
						if o, ok := o.(map[string]any); ok {
							links = w.option(o, seen, links)
						}
					}
				}
				visit(x[k])
			}
		case []any:
			for _, c := range x {
				visit(c)
			}
		}
	}
	visit(v)
	text := ""
	for _, l := range links {
		next := l
		if text != "" {
			next = text + "\n" + l
		}
		if Len(next) > SlackSectionTextMax {
			break
		}
		text = next
	}
	return text
}

// option drops o's url when the policy does not trust its host, adding its
// link line to links unless seen holds the url already.
func (w *voiceWalk) option(o map[string]any, seen map[string]bool, links []string) []string {
	u, ok := o["url"].(string)
	if !ok || u != "" && w.p.trusted(u) {
		return links
	}
	delete(o, "url")
	w.changed = true
	if u == "" || seen[u] {
		return links
	}
	seen[u] = true
	label := ""
	if t, ok := o["text"].(map[string]any); ok {
		label = str(t["text"])
	}
	return append(links, linkLine(u, label))
}

// initialLast orders an object's keys by name, those of initial choices
// after the rest, so that a link comes where its option is listed.
func initialLast(a, b string) int {
	ia, ib := strings.HasPrefix(a, "initial_"), strings.HasPrefix(b, "initial_")
	switch {
	case ia && !ib:
		return 1
	case ib && !ia:
		return -1
	}
	return strings.Compare(a, b)
}
