package tools

import (
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Index ranks tools against a question in words, so that an agent with
// more tools than its model accepts can find the few it needs. It is BM25
// over each tool's name (split on _ - . and camelCase), the first line of
// its description, the rest of it and its parameter names, each field
// weighted. Building it reads the tools once; searching touches only the
// postings of the query's words. An Index is immutable and safe for
// concurrent use; it makes no network call and asks no model.
type Index struct {
	docs     []indexDoc
	postings map[string][]posting
}

type indexDoc struct {
	name      string
	namespace string
	summary   string // the description's first line, shortened
}

// posting is one tool holding a word: what the word weighs in it, already
// saturated and length-normalised (a search only multiplies it by the
// word's rarity), and whether a name, summary or parameter holds it.
type posting struct {
	doc    int32
	sat    float32
	strong bool
}

// Hit is one tool a search found.
type Hit struct {
	Name string
	// Summary is the first line of the tool's description, at most
	// SummaryLen bytes.
	Summary string
	Score   float64
}

// SummaryLen bounds a Hit's summary.
const SummaryLen = 160

// The fields of a tool, each with its weight and how strongly its length
// discounts a word (BM25F): a word in a short name says more about a tool
// than one in the tail of a long description.
const (
	fieldName = iota
	fieldSummary
	fieldBody
	fieldParams
	numFields
)

var (
	fieldWeight = [numFields]float64{3, 2, 0.3, 0.3}
	fieldB      = [numFields]float64{1, 0.5, 0.75, 0.5}
)

// mentionWeight is how much a word of the query counts as answered when
// only the body of a description holds it.
const mentionWeight = 0.5

// bm25K1 is the usual saturation of repeated words.
const bm25K1 = 1.2

// maxQueryTerms bounds the words of a query that are looked up: a query is
// model output, and a page of text must not cost more than a sentence.
const maxQueryTerms = 32

// NewIndex indexes ts.
func NewIndex(ts []Tool) *Index {
	x := &Index{docs: make([]indexDoc, len(ts)), postings: map[string][]posting{}}
	type count struct {
		doc int32
		tf  [numFields]float32
	}
	counts := map[string][]count{}
	lengths := make([][numFields]float64, len(ts))
	var total [numFields]float64
	tf := map[string]*[numFields]float32{}
	for i, t := range ts {
		clear(tf)
		add := func(text string, f int) {
			for _, term := range Terms(text) {
				c := tf[term]
				if c == nil {
					c = new([numFields]float32)
					tf[term] = c
				}
				c[f]++
				lengths[i][f]++
			}
		}
		ns, rest, _ := strings.Cut(t.Name, Separator)
		add(rest, fieldName)
		first, body, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		add(first, fieldSummary)
		add(body, fieldBody)
		for _, p := range paramNames(t.Schema) {
			add(p, fieldParams)
		}
		for term, c := range tf {
			counts[term] = append(counts[term], count{int32(i), *c})
		}
		x.docs[i] = indexDoc{name: t.Name, namespace: ns, summary: summaryOf(first)}
		for f := range numFields {
			total[f] += lengths[i][f]
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = max(total[f]/float64(max(len(ts), 1)), 1)
	}
	for term, list := range counts {
		ps := make([]posting, len(list))
		for j, c := range list {
			w := 0.0
			for f := range numFields {
				if c.tf[f] > 0 {
					w += fieldWeight[f] * float64(c.tf[f]) / (1 - fieldB[f] + fieldB[f]*lengths[c.doc][f]/avg[f])
				}
			}
			ps[j] = posting{doc: c.doc, sat: float32(w * (bm25K1 + 1) / (w + bm25K1)),
				strong: c.tf[fieldName]+c.tf[fieldSummary]+c.tf[fieldParams] > 0}
		}
		x.postings[term] = ps
	}
	return x
}

// Len is the number of tools indexed.
func (x *Index) Len() int { return len(x.docs) }

// Namespaces returns each namespace of the indexed tools (the part of a
// name before "__") with how many tools it holds, sorted by name.
func (x *Index) Namespaces() []NamespaceCount {
	counts := map[string]int{}
	for _, d := range x.docs {
		counts[d.namespace]++
	}
	out := make([]NamespaceCount, 0, len(counts))
	for ns, n := range counts {
		out = append(out, NamespaceCount{ns, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out
}

// NamespaceCount is a namespace and the number of its tools.
type NamespaceCount struct {
	Namespace string
	Tools     int
}

// Search returns the k best tools for query, best first, among the
// namespaces given (all when none). Tools that share no word with the
// query are not returned, so fewer than k may come back.
func (x *Index) Search(query string, namespaces []string, k int) []Hit {
	if k <= 0 || len(x.docs) == 0 {
		return nil
	}
	scores := make([]float64, len(x.docs))
	matched := make([]uint32, len(x.docs))   // own words found in a name, summary or parameter
	mentioned := make([]uint32, len(x.docs)) // own words found only deep in a description
	n := float64(len(x.docs))
	terms, own := queryTerms(query)
	for term, qt := range terms {
		list := x.postings[term]
		if len(list) == 0 {
			continue
		}
		df := float64(len(list))
		c := qt.weight * math.Log(1+(n-df+0.5)/(df+0.5))
		for _, p := range list {
			scores[p.doc] += c * float64(p.sat)
			if p.strong {
				matched[p.doc] |= qt.groups
			} else {
				mentioned[p.doc] |= qt.groups
			}
		}
	}
	// The k best in a small sorted slice: sorting every tool that shares
	// a common word ("repository") with the query would cost more than
	// scoring them.
	hits := make([]Hit, 0, k+1)
	better := func(a, b *Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.Name < b.Name }
	for i, s := range scores {
		if s <= 0 || len(namespaces) > 0 && !slices.Contains(namespaces, x.docs[i].namespace) {
			continue
		}
		// A tool that answers more of the question's words ranks above
		// one that answers a few of them many times (the score is scaled
		// by the share of the query's own words it holds).
		if own > 0 {
			covered := float64(bits.OnesCount32(matched[i])) + mentionWeight*float64(bits.OnesCount32(mentioned[i]&^matched[i]))
			s *= covered / float64(own)
		}
		h := Hit{Name: x.docs[i].name, Summary: x.docs[i].summary, Score: s}
		if len(hits) == k && !better(&h, &hits[k-1]) {
			continue
		}
		at := sort.Search(len(hits), func(j int) bool { return better(&h, &hits[j]) })
		hits = slices.Insert(hits, at, h)
		if len(hits) > k {
			hits = hits[:k]
		}
	}
	return hits
}

// queryTerm is a word a search looks up: its weight (1 for the query's
// own words, expansionWeight for the words an API would use for them),
// and the own words it stands for, as bits.
type queryTerm struct {
	weight float64
	groups uint32
}

// expansionWeight is how much an expansion counts against a word of the
// query itself.
const expansionWeight = 0.5

// queryTerms returns the words of a query to look up and how many of its
// own words there are (at most maxQueryTerms, each one bit of groups).
func queryTerms(query string) (map[string]*queryTerm, int) {
	out := map[string]*queryTerm{}
	own := 0
	put := func(term string, w float64, groups uint32) {
		qt := out[term]
		if qt == nil {
			qt = &queryTerm{}
			out[term] = qt
		}
		qt.weight = max(qt.weight, w)
		qt.groups |= groups
	}
	words(query, func(term string, stop bool) {
		if own == maxQueryTerms {
			return
		}
		var bit uint32
		if !stop {
			if qt := out[term]; qt != nil && qt.weight == 1 {
				return
			}
			bit = 1 << own
			own++
			put(term, 1, bit)
		}
		for _, e := range expansions[term] {
			put(e, expansionWeight, bit)
		}
	})
	return out, own
}

// expansions map the words people ask with to the words APIs name their
// operations with ("show me" is a get or a list; "open" a create). They
// apply to queries only, after Terms.
var expansions = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range []string{
		"show get list", "see get list", "view get list", "display get list", "read get", "fetch get", "look get",
		"detail get", "information get", "what get list", "which list", "who list user",
		"open create", "new create", "make create", "add create", "publish create", "start create", "set create update",
		"write create update", "post create", "submit create",
		"change update", "edit update", "modify update", "rename update", "close update", "reopen update",
		"remove delete", "drop delete", "erase delete", "find search", "lookup get", "recent list", "history list",
		"contributed contributor", "starred stargazer star", "assign assignee", "approve review", "reply comment create",
		"say comment", "ask request", "discussion comment", "run workflow", "bug issue", "ticket issue", "file content", "newest latest",
		"latest newest", "collaborator collaborator", "member member", "account user authenticated", "mine authenticated",
	} {
		f := strings.Fields(line)
		var key string
		words(f[0], func(w string, _ bool) { key = w })
		for _, w := range f[1:] {
			m[key] = append(m[key], Terms(w)...)
		}
	}
	return m
}()

// Terms splits text into the words the index compares: on anything but
// letters and digits and at camelCase humps, lower-cased, stop words,
// single letters and numbers dropped, common abbreviations spelt out and
// plurals and verb endings taken off ("listForRepo" → list, for,
// repository).
func Terms(text string) []string {
	var out []string
	words(text, func(w string, stop bool) {
		if !stop {
			out = append(out, w)
		}
	})
	return out
}

// words calls f with each word of text, normalised as Terms says, and
// whether it is a stop word (which Terms drops).
func words(text string, f func(w string, stop bool)) {
	emit := func(w string) {
		w = strings.ToLower(w)
		if len(w) == 1 || isNumber(w) {
			return
		}
		if full, ok := abbreviations[w]; ok {
			w = full
		}
		if stopWords[w] {
			f(w, true)
			return
		}
		f(stem(w), false)
	}
	start := -1
	var prev rune
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			if start >= 0 {
				emit(text[start:i])
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev),
			unicode.IsDigit(r) != unicode.IsDigit(prev):
			emit(text[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		emit(text[start:])
	}
}

// stem takes off the endings that most often separate a question's words
// from a tool's ("issues" and "issue", "listing" and "list"). It is not a
// full stemmer: both sides go through it, so only consistency matters.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 6 && strings.HasSuffix(w, "ers"):
		return w[:len(w)-3]
	case len(w) > 6 && strings.HasSuffix(w, "er"):
		return w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be by can do does for from how i in is it its me my of on or " +
		"please that the this to us want we what which who will with would you your all any some") {
		m[w] = true
	}
	return m
}()

// abbreviations are spelt out on both sides, so "repo" in a name meets
// "repository" in a question.
var abbreviations = map[string]string{
	"repo": "repository", "repos": "repositories", "org": "organization", "orgs": "organizations",
	"pr": "pull", "prs": "pull", "config": "configuration", "env": "environment", "envs": "environments",
	"info": "information", "auth": "authentication", "dir": "directory", "msg": "message", "id": "identifier",
	"ci": "workflow", "del": "delete", "repositories": "repository",
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// paramNames lists the names of the top-level properties of a JSON Schema.
func paramNames(schema json.RawMessage) []string {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	return names
}

// summaryOf shortens a description's first line for a search result.
func summaryOf(line string) string {
	line = strings.Join(strings.Fields(line), " ")
	if len(line) <= SummaryLen {
		return line
	}
	cut := SummaryLen - len("…")
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "…"
}
