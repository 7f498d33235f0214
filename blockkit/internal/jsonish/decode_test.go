package jsonish

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		want  string // compact JSON
		fixes []Fix
	}{
		{"strict JSON is read as it is", `{"a": [1, "x"]}`, `{"a":[1,"x"]}`, nil},
		{"a json code fence is unwrapped", "```json\n[{\"type\": \"divider\"}]\n```", `[{"type":"divider"}]`, []Fix{Unfenced}},
		{"a fence left open runs to the end", "```\n{\"a\": 1}", `{"a":1}`, []Fix{Unfenced}},
		{"single quotes, Python literals and trailing commas are rewritten",
			`[{'type': 'section', 'ok': True, 'n': None, 'text': "it's",},]`,
			`[{"type":"section","ok":true,"n":null,"text":"it's"}]`, []Fix{Relaxed}},
		{"an escaped quote inside single quotes stays a quote", `{'t': 'it\'s "x"'}`, `{"t":"it's \"x\""}`, []Fix{Relaxed}},
		{"an apostrophe inside single quotes stays an apostrophe", `[{'text': 'it's done', 'n': 'a'}]`, `[{"text":"it's done","n":"a"}]`, []Fix{Relaxed}},
		{"unquoted keys are quoted", `{type: "divider", block_id: "d1"}`, `{"type":"divider","block_id":"d1"}`, []Fix{Relaxed}},
		{"quotes escaped once too often are unescaped",
			`[{\"type\":\"section\",\"text\":\"a\\nb\"}]`, `[{"type":"section","text":"a\nb"}]`, []Fix{Unescaped}},
		{"a fenced over-escaped payload needs both fixes",
			"```json\n{\\\"type\\\": \\\"divider\\\"}\n```", `{"type":"divider"}`, []Fix{Unfenced, Unescaped}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, fixes, err := Decode(tc.in)
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			if got := string(v.Marshal()); got != tc.want {
				t.Errorf("Decode(%q) = %s, want %s", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(fixes, tc.fixes) {
				t.Errorf("fixes %v, want %v", fixes, tc.fixes)
			}
		})
	}
}

func TestDecodeLeavesProseAlone(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"Hello there", "[1] see the notes", "{not json at all}", "it's fine"} {
		if v, _, err := Decode(in); err == nil {
			t.Errorf("Decode(%q) = %s, want an error", in, v.Marshal())
		}
	}
}

func TestFindFence(t *testing.T) {
	t.Parallel()
	before, body, after, ok := FindFence("Here it is:\n\n```json\n{\"a\": 1}\n```\n\nThanks.")
	if !ok || before != "Here it is:" || body != `{"a": 1}` || after != "Thanks." {
		t.Errorf("FindFence = %q, %q, %q, %v", before, body, after, ok)
	}
	if _, _, _, ok := FindFence("```go\nfunc main() {}\n```"); ok {
		t.Error("a Go code fence was taken for JSON")
	}
}

func TestSalvageKeepsTheWordsOfTruncatedJSON(t *testing.T) {
	t.Parallel()
	got := Salvage([]byte(`[{"type":"section","text":{"type":"mrkdwn","text":"first"}},{"text":"second, cut`), func(k string) bool { return k == "type" })
	if strings.Join(got, "|") != "first|second, cut" {
		t.Errorf("Salvage = %q", got)
	}
}
