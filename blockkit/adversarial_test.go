package blockkit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/slackbot/slackbot/blockkit"
)

// The adversarial corpus (testdata/adversarial/<family>/<what-it-tries>.json)
// holds final-report arguments the way models write them when they get Block
// Kit wrong. Each payload goes through RepairReport whole, and the result is
// checked against invariants written here from Slack's documented rules, not
// from this package's constants, so the check stays independent of the code
// it checks. See testdata/adversarial/README.md for how expectations are
// stated.

// Invariants, as they appear in failure messages and in the summary.
const (
	invRepair   = "repair"       // no panic, no error for an object, at least one message
	invValidate = "validate"     // blockkit.Validate accepts every message
	invLimits   = "slack-limits" // our own reading of Slack's limits, in UTF-16 units
	invTokens   = "tokens"       // every < and > in mrkdwn belongs to a whole Slack token
	invLost     = "lost-text"    // every word and link host the payload shows survives
	invEmpty    = "empty-answer" // no "The answer was empty" when there was an answer
	invTilde    = "tilde"        // a tilde Slack would not pair stays an ASCII ~
	invTable    = "code-table"   // code tables are narrow enough and aligned
	invExpect   = "expectation"  // a payload's must_not_contain stays out of sight
)

var advInvariants = []string{invRepair, invValidate, invLimits, invTokens, invLost, invEmpty, invTilde, invTable, invExpect}

const advDir = "testdata/adversarial"

// advExpect is the optional sibling <name>.expect.json of a payload.
type advExpect struct {
	Note string `json:"note"`
	// Derive is "auto" (default: expected words come from the payload's
	// user-visible keys) or "none" (the rule cannot read this payload, e.g.
	// single-quoted pseudo-JSON; only MustContain applies).
	Derive      string   `json:"derive"`
	MustContain []string `json:"must_contain"`
	// MustNotContain lists text a person must not be shown, such as the keys
	// of Block Kit JSON that should have been decoded, or Markdown left raw
	// in a plain_text field.
	MustNotContain []string `json:"must_not_contain"`
}

type advCase struct {
	name    string // family/file.json
	family  string
	payload []byte
	expect  advExpect
}

type advProblem struct{ inv, msg string }

func advLoad(t *testing.T) []advCase {
	t.Helper()
	var cases []advCase
	payloads := map[string]bool{}
	var expects []string
	err := filepath.WalkDir(advDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		if strings.HasSuffix(path, ".expect.json") {
			expects = append(expects, path)
			return nil
		}
		rel, err := filepath.Rel(advDir, path)
		if err != nil {
			return err
		}
		c := advCase{name: filepath.ToSlash(rel), family: filepath.ToSlash(filepath.Dir(rel))}
		if c.payload, err = os.ReadFile(path); err != nil {
			return err
		}
		data, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".expect.json")
		switch {
		case err == nil:
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c.expect); err != nil {
				return fmt.Errorf("%s.expect.json: %w", strings.TrimSuffix(path, ".json"), err)
			}
			if c.expect.Derive != "" && c.expect.Derive != "auto" && c.expect.Derive != "none" {
				return fmt.Errorf("%s: derive must be auto or none", path)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		payloads[path] = true
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		t.Fatalf("loading the corpus: %v", err)
	}
	for _, e := range expects {
		if !payloads[strings.TrimSuffix(e, ".expect.json")+".json"] {
			t.Fatalf("%s has no payload beside it", e)
		}
	}
	return cases
}

// TestAdversarialCorpus runs every payload through RepairReport and checks
// the result against every invariant; failures name the payload and the
// invariant, and a summary per invariant and family closes the run.
func TestAdversarialCorpus(t *testing.T) {
	cases := advLoad(t)
	if len(cases) < 150 {
		t.Fatalf("the corpus holds %d payloads; it should hold about 200", len(cases))
	}
	byFamily := map[string][]advCase{}
	for _, c := range cases {
		byFamily[c.family] = append(byFamily[c.family], c)
	}
	var mu sync.Mutex
	failed := map[string]map[string]bool{} // invariant -> payload names
	t.Run("corpus", func(t *testing.T) {
		for family, fc := range byFamily {
			t.Run(family, func(t *testing.T) {
				t.Parallel()
				for _, c := range fc {
					t.Run(strings.TrimPrefix(c.name, c.family+"/"), func(t *testing.T) {
						t.Parallel()
						probs := advRun(c, advRepairReport)
						for _, p := range advCap(probs, 6) {
							t.Errorf("%s: [%s] %s", c.name, p.inv, p.msg)
						}
						mu.Lock()
						defer mu.Unlock()
						for _, p := range probs {
							if failed[p.inv] == nil {
								failed[p.inv] = map[string]bool{}
							}
							failed[p.inv][c.name] = true
						}
					})
				}
			})
		}
	})
	t.Log(advSummary(cases, failed))
}

// advCap keeps at most n problems per invariant, saying how many were left.
func advCap(probs []advProblem, n int) []advProblem {
	count := map[string]int{}
	var out []advProblem
	for _, p := range probs {
		count[p.inv]++
		if count[p.inv] <= n {
			out = append(out, p)
		}
	}
	for _, inv := range advInvariants {
		if count[inv] > n {
			out = append(out, advProblem{inv, fmt.Sprintf("… and %d more", count[inv]-n)})
		}
	}
	return out
}

func advSummary(cases []advCase, failed map[string]map[string]bool) string {
	total := map[string]int{}
	var families []string
	for _, c := range cases {
		if total[c.family] == 0 {
			families = append(families, c.family)
		}
		total[c.family]++
	}
	sort.Strings(families)
	var b strings.Builder
	anyFail := map[string]bool{}
	for _, names := range failed {
		for n := range names {
			anyFail[n] = true
		}
	}
	fmt.Fprintf(&b, "adversarial summary: %d of %d payloads fail at least one invariant\n", len(anyFail), len(cases))
	fmt.Fprintf(&b, "%-14s", "invariant")
	for _, f := range families {
		fmt.Fprintf(&b, " %9.9s", f)
	}
	fmt.Fprintf(&b, " %9s\n", "all")
	famOf := map[string]string{}
	for _, c := range cases {
		famOf[c.name] = c.family
	}
	row := func(label string, names map[string]bool) {
		fmt.Fprintf(&b, "%-14s", label)
		per := map[string]int{}
		for n := range names {
			per[famOf[n]]++
		}
		for _, f := range families {
			fmt.Fprintf(&b, " %4d/%-4d", per[f], total[f])
		}
		fmt.Fprintf(&b, " %4d/%-4d\n", len(names), len(cases))
	}
	for _, inv := range advInvariants {
		row(inv, failed[inv])
	}
	row("any", anyFail)
	return b.String()
}

// advRepairReport is the function under test, wrapped so the self-tests can
// substitute one that misbehaves.
func advRepairReport(payload []byte) ([]blockkit.Message, error) {
	msgs, _, err := blockkit.RepairReport(json.RawMessage(payload))
	return msgs, err
}

// advRun repairs one payload and checks every invariant.
func advRun(c advCase, repair func([]byte) ([]blockkit.Message, error)) (probs []advProblem) {
	var msgs []blockkit.Message
	var err error
	panicked := func() (p bool) {
		defer func() {
			if r := recover(); r != nil {
				probs = append(probs, advProblem{invRepair, fmt.Sprintf("RepairReport panicked: %v", r)})
				p = true
			}
		}()
		msgs, err = repair(c.payload)
		return false
	}()
	switch {
	case panicked:
		return probs
	case err != nil:
		return append(probs, advProblem{invRepair, fmt.Sprintf("RepairReport returned an error for a JSON object: %v", err)})
	case len(msgs) == 0:
		return append(probs, advProblem{invRepair, "RepairReport returned no message"})
	}
	return advInspect(c, msgs)
}

// advInspect checks repaired messages against every invariant but repair.
func advInspect(c advCase, msgs []blockkit.Message) (probs []advProblem) {
	add := func(inv, format string, args ...any) {
		probs = append(probs, advProblem{inv, fmt.Sprintf(format, args...)})
	}
	out := make([]map[string]any, 0, len(msgs))
	for i, m := range msgs {
		if err := blockkit.Validate(m); err != nil {
			add(invValidate, "message %d: %v", i, err)
		}
		data, err := json.Marshal(m)
		if err != nil {
			add(invValidate, "message %d does not marshal: %v", i, err)
			continue
		}
		var v map[string]any
		if err := advDecode(data, &v); err != nil {
			add(invValidate, "message %d does not decode: %v", i, err)
			continue
		}
		out = append(out, v)
		for _, p := range advLimitProblems(v) {
			add(invLimits, "message %d: %s", i, p)
		}
		for _, s := range advMrkdwnTexts(v) {
			for _, p := range advTokenProblems(s.text, c.payload) {
				add(invTokens, "message %d %s: %s", i, s.where, p)
			}
		}
	}
	want := advDerive(c.payload, c.expect)
	vis := advVisible(out)
	for _, p := range advLostProblems(want, vis) {
		add(invLost, "%s", p)
	}
	if want.answer && strings.Contains(strings.ToLower(vis.norm+"\n"+advNotifications(out)), "the answer was empty") {
		add(invEmpty, "the output says the answer was empty, but the payload holds one (%d words, e.g. %q)", len(want.words), advFirst(want.words, want.must))
	}
	for _, tok := range want.tildes {
		if !strings.Contains(vis.norm, tok) {
			seen := ""
			if strings.Contains(vis.norm, "∼"+tok[1:]) {
				seen = " (it became the look-alike ∼)"
			}
			add(invTilde, "%q should keep its ASCII tilde%s", tok, seen)
		}
	}
	for _, p := range advTableProblems(out, want) {
		add(invTable, "%s", p)
	}
	for _, s := range c.expect.MustNotContain {
		if strings.Contains(vis.norm, s) {
			add(invExpect, "the output shows %q", s)
		}
	}
	return probs
}

func advFirst(lists ...[]string) string {
	for _, l := range lists {
		if len(l) > 0 {
			return l[0]
		}
	}
	return ""
}

func advDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
