package tooloutput

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/tools"
)

// fsTools serves fsProviderAt(dir) through an orchestrator, as a sub-agent sees it.
func fsTools(t testing.TB, dir string) func(name string, args any) tools.Outcome {
	t.Helper()
	o := tools.New(context.Background(), tools.Options{}, fsProviderAt(dir))
	t.Cleanup(func() { o.Close() })
	return func(name string, args any) tools.Outcome {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return o.Execute(context.Background(), "call-1", name, string(raw), 0)
	}
}

type obj = map[string]any

func TestReadReturnsNumberedBoundedLines(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	long := "x" + strings.Repeat("é", 3000) // the cut at 2000 bytes falls inside an é
	e := put(t, s, "t", "{}", "alpha\r\nbeta\n"+long+"\ngamma\n"+lines(3000, 20))
	call := fsTools(t, s.Dir())
	for _, tc := range []struct {
		name string
		args obj
		want []string // substrings, in order
		not  []string
	}{
		{"the first lines come numbered", obj{"path": e.Handle, "limit": 2},
			[]string{"     1\talpha\n     2\tbeta\n[more lines follow: call Read with offset=3 to continue]\n"}, []string{"gamma"}},
		{"offset starts later", obj{"path": e.Handle, "offset": 4, "limit": 1}, []string{"     4\tgamma\n"}, []string{"beta"}},
		{"a long line is cut with what is left", obj{"path": e.Handle, "offset": 3, "limit": 1},
			[]string{"     3\tx" + strings.Repeat("é", 999) + "[… 4002 more bytes on this line: use Grep to search it]"}, nil},
		{"at most 2000 lines come back", obj{"path": e.Handle, "offset": 10}, []string{"  2009\t", "offset=2010 to continue"}, []string{"  2010\t"}},
		{"an offset past the end says so", obj{"path": e.Handle, "offset": 99999}, []string{"has 3004 lines; offset 99999 is past its end"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := call("Read", tc.args)
			if !out.OK() {
				t.Fatalf("Read failed: %s", out.Content)
			}
			rest := out.Content
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q:\n%s", w, tools.Snippet(out.Content, 600))
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(out.Content, n) {
					t.Errorf("output has %q", n)
				}
			}
		})
	}
}

func TestGrepFindsLinesWithContext(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	a := put(t, s, "t", "{}", "one\ntwo ERROR here\nthree\nfour\nfive\nsix\nseven error\neight")
	b := put(t, s, "t", "{}", "nothing\nERROR at last\n")
	call := fsTools(t, s.Dir())
	for _, tc := range []struct {
		name string
		args obj
		want string
	}{
		{"matches come as file:line: text", obj{"pattern": "ERROR", "path": a.Handle},
			a.Handle + ":2: two ERROR here\n"},
		{"context lines come as file-line- text with -- between groups", obj{"pattern": "(?i)error", "path": a.Handle, "context": 1},
			a.Handle + "-1- one\n" + a.Handle + ":2: two ERROR here\n" + a.Handle + "-3- three\n--\n" +
				a.Handle + "-6- six\n" + a.Handle + ":7: seven error\n" + a.Handle + "-8- eight\n"},
		{"anchors hold at line boundaries", obj{"pattern": "^f", "path": a.Handle},
			a.Handle + ":4: four\n" + a.Handle + ":5: five\n"},
		{"no path searches every file", obj{"pattern": "ERROR"}, ""},
		{"the result cap says more exist", obj{"pattern": "e", "path": a.Handle, "max_results": 2},
			a.Handle + ":1: one\n" + a.Handle + ":2: two ERROR here\n[more matches exist: showing the first 2; narrow the pattern, search one file, or raise max_results (at most 1000)]\n"},
		{"no match says what was searched", obj{"pattern": "zebra", "path": b.Handle},
			`No lines match "zebra" in ` + b.Handle + "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := call("Grep", tc.args)
			if !out.OK() {
				t.Fatalf("Grep failed: %s", out.Content)
			}
			if tc.want == "" {
				for _, w := range []string{a.Handle + ":2: two ERROR here", b.Handle + ":2: ERROR at last"} {
					if !strings.Contains(out.Content, w) {
						t.Errorf("output lacks %q:\n%s", w, out.Content)
					}
				}
				return
			}
			if out.Content != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.Content, tc.want)
			}
		})
	}
	if out := call("Grep", obj{"pattern": "(unclosed"}); out.OK() || !strings.Contains(out.Content, "not a valid Go regular expression") {
		t.Errorf("a bad pattern: %s", out.Content)
	}
}

// TestGrepAgreesWithALineByLineSearch checks the block search against the
// obvious implementation on a file of several blocks, where matches and
// their context straddle block boundaries.
func TestGrepAgreesWithALineByLineSearch(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	var b strings.Builder
	for i := 1; b.Len() < 3*grepBlock; i++ {
		switch {
		case i%997 == 0:
			fmt.Fprintf(&b, "%d needle in a haystack\n", i)
		case i%5001 == 0:
			b.WriteString(strings.Repeat("long ", 400) + "needle far along\n")
		default:
			fmt.Fprintf(&b, "%d hay hay hay hay hay hay hay\n", i)
		}
	}
	doc := b.String()
	e := put(t, s, "t", "{}", doc)
	call := fsTools(t, s.Dir())
	for _, tc := range []struct {
		pattern string
		context int
	}{{"needle", 0}, {"needle", 3}, {`^\d*777 hay`, 2}, {`hay$`, 0}, {`y\s+h`, 1}, {`(?i)NEEDLE IN`, 1}, {`(?i)(LONG) needle`, 0}} {
		t.Run(fmt.Sprintf("%s with %d context", tc.pattern, tc.context), func(t *testing.T) {
			out := call("Grep", obj{"pattern": tc.pattern, "path": e.Handle, "context": tc.context, "max_results": 1000})
			want := naiveGrep(e.Handle, doc, regexp.MustCompile(tc.pattern), tc.context, 1000)
			if out.Content != want {
				g, w := strings.Split(out.Content, "\n"), strings.Split(want, "\n")
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Fatalf("line %d differs:\n got %q\nwant %q", i+1, g[i], w[i])
					}
				}
				t.Fatalf("got %d lines, want %d", len(g), len(w))
			}
		})
	}
}

// naiveGrep is Grep written line by line.
func naiveGrep(name, doc string, re *regexp.Regexp, context, most int) string {
	ls := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	var b strings.Builder
	last, found := 0, 0
	for i, l := range ls {
		if !re.MatchString(l) {
			continue
		}
		if found == most {
			b.WriteString("[more matches exist: showing the first 1000; narrow the pattern, search one file, or raise max_results (at most 1000)]\n")
			break
		}
		found++
		n := i + 1
		from := max(last+1, n-context, 1)
		if last > 0 && from > last+1 {
			b.WriteString("--\n")
		}
		for c := from; c < n; c++ {
			fmt.Fprintf(&b, "%s-%d- %s\n", name, c, show([]byte(ls[c-1]), 0))
		}
		fmt.Fprintf(&b, "%s:%d: %s\n", name, n, show([]byte(l), re.FindStringIndex(l)[0]))
		last = n
		for c := n + 1; c <= min(n+context, len(ls)); c++ {
			if re.MatchString(ls[c-1]) {
				break
			}
			fmt.Fprintf(&b, "%s-%d- %s\n", name, c, show([]byte(ls[c-1]), 0))
			last = c
		}
	}
	if found == 0 {
		return fmt.Sprintf("No lines match %q in %s.", re.String(), name)
	}
	return b.String()
}

func TestReadAndGrepStayInsideTheSessionDirectory(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", "mine\n")
	other := s.run.NewStore()
	defer other.Close()
	foreign := put(t, other, "t", "{}", "secret of another session\n")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("secret outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Dir(), "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+filepath.Base(other.Dir())+"/"+foreign.Handle, filepath.Join(s.Dir(), "link-sibling")); err != nil {
		t.Fatal(err)
	}
	call := fsTools(t, s.Dir())
	for _, tc := range []struct {
		path, why string
	}{
		{"../x", `".." is not allowed`},
		{"a/../../" + e.Handle, `".." is not allowed`},
		{"/etc/passwd", "absolute paths are not allowed"},
		{e.Path, "absolute paths are not allowed"},
		{"link-out", "leads outside the directory"},
		{"link-sibling", "leads outside the directory"},
		{foreign.Handle, "there is no file"},
		{"../" + filepath.Base(other.Dir()) + "/" + foreign.Handle, `".." is not allowed`},
	} {
		for _, tool := range []string{"Read", "Grep"} {
			args := obj{"path": tc.path}
			if tool == "Grep" {
				args["pattern"] = "secret"
			}
			out := call(tool, args)
			if out.OK() || !strings.Contains(out.Content, tc.why) || strings.Contains(out.Content, "secret") && !strings.Contains(out.Content, "no file") {
				t.Errorf("%s %q: ok=%v %q, want a refusal saying %q", tool, tc.path, out.OK(), out.Content, tc.why)
			}
		}
	}
	// Searching every file skips nothing of ours and follows no link out.
	out := call("Grep", obj{"pattern": "secret|mine"})
	if strings.Contains(out.Content, "secret") || !strings.Contains(out.Content, e.Handle+":1: mine") {
		t.Errorf("grep of every file: %s", out.Content)
	}
}

func TestReadGrepSubAgentSearchesTheFile(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	doc := lines(5000, 50) + "the needle: 42\n" + lines(100, 50)
	e := put(t, s, "logs__fetch", `{"since":"1h"}`, doc)
	var gotSystem string
	sub := func(ctx context.Context, system, user string, fs tools.Provider) (string, bool, error) {
		gotSystem = system
		o := tools.New(ctx, tools.Options{}, fs)
		defer o.Close()
		if names := fmt.Sprint(toolNames(o.Tools())); names != "[Grep Read]" {
			return "", false, fmt.Errorf("tools %s", names)
		}
		g := o.Execute(ctx, "1", "Grep", `{"pattern":"needle","path":"`+e.Handle+`"}`, 0)
		if !g.OK() {
			return "", false, fmt.Errorf("grep: %s", g.Content)
		}
		var n int
		fmt.Sscanf(strings.TrimPrefix(g.Content, e.Handle+":"), "%d", &n)
		r := o.Execute(ctx, "2", "Read", fmt.Sprintf(`{"path":%q,"offset":%d,"limit":1}`, e.Handle, n), 0)
		return wrap(system, "found at line "+fmt.Sprint(n)+": "+strings.TrimSpace(strings.SplitN(r.Content, "\n", 2)[0][7:])), false, nil
	}
	x := &Extractor{Policy: smallModel, SubAgent: sub}
	out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "the needle's value"})
	want := "ABSTRACT FROM TOOL OUTPUT logs__fetch WITH HANDLE " + e.Handle + ", STRATEGY:read-grep:\n\nfound at line 5001: the needle: 42"
	if !out.OK || out.Mode != ModeReadGrep || out.Text != want || out.Calls != 0 {
		t.Fatalf("outcome %+v", out)
	}
	for _, w := range []string{"You can only use Read and Grep tools.", "IMPORTANT: The handle is the filename.",
		"- Name: logs__fetch", `- Arguments (verbatim JSON): {"since":"1h"}`,
		"- Handle/filename: " + e.Handle, "- Root directory: " + s.Dir(), "WHAT TO EXTRACT\nthe needle's value\n"} {
		if !strings.Contains(gotSystem, w) {
			t.Errorf("sub-agent prompt lacks %q", w)
		}
	}
}

func toolNames(ts []tools.Tool) []string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name)
	}
	return n
}

func TestPrefiltersOnlyUseLiteralsEveryMatchHolds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, lit string
		fold         bool
	}{
		{"needle", "needle", false},
		{`^\d+ ERROR req=\w+`, " ERROR req=", false},
		{"(?i)Needle Found", "needle found", true},
		{"(?i)status", "tatu", true}, // s and k also fold to non-ASCII letters
		{"error|warn", "", false},
		{"ab", "", false},
		{"(foo)bar(baz)+", "foo", false},
	} {
		p := newPrefilter(tc.pattern)
		got, fold := "", false
		if p != nil {
			got, fold = string(p.lit), p.fold
		}
		if got != tc.lit || fold != tc.fold {
			t.Errorf("%s: prefilter %q (fold %v), want %q (fold %v)", tc.pattern, got, fold, tc.lit, tc.fold)
		}
	}
}
