package agent

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// estimateCorpus returns texts of the kinds sessions carry, to hold the
// token estimate to its margin: the repository's own Go code and Markdown
// answers, and generated prose in several scripts, JSON, logs, CSV, URLs,
// identifiers, hex, random base64 and emoji.
func estimateCorpus(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, glob := range []string{"*.go", "../blockkit/testdata/corpus/*"} {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("no files for %s: %v", glob, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 9000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	for name, text := range map[string]string{
		"random base64":  base64.StdEncoding.EncodeToString(random),
		"random hex":     hex.EncodeToString(random[:6000]),
		"uuids":          rep("550e8400-e29b-41d4-a716-446655440000, 6ba7b810-9dad-11d1-80b4-00c04fd430c8\n", 100),
		"japanese":       rep("日本語のテキストを処理するためのサンプル文章です。東京は日本の首都であり、多くの人々が住んでいます。", 60),
		"chinese":        rep("中文文本示例，这是一个用于测试分词器的句子。北京是中国的首都。", 80),
		"korean":         rep("한국어 텍스트 샘플입니다. 서울은 대한민국의 수도입니다. ", 80),
		"russian":        rep("Пример русского текста для проверки токенизатора. Москва — столица России. ", 60),
		"greek":          rep("Αυτό είναι ένα δείγμα ελληνικού κειμένου για τον έλεγχο. ", 60),
		"arabic":         rep("هذا نص عربي لاختبار تقدير عدد الرموز في الجلسة. ", 60),
		"emoji":          rep("🎉🚀 done ✅ ❌ 👍🏽 🇫🇷 ", 200),
		"json api":       rep(`{"id": 4182, "title": "Release notes for v2.3", "url": "https://example.com/releases/v2.3", "tags": ["go", "slack"]}`+"\n", 100),
		"csv numbers":    rep("2024-01-15,12345.67,-0.000123,987654321,3.14159\n", 200),
		"minified js":    rep("function(a,b){return a.map(function(c){return c*b+1})};var x=[1,2,3];if(x.length>2){console.log(x[0])}", 60),
		"log lines":      rep("2026-11-23T20:01:43.123Z INFO [http] GET /api/v1/users/8213?expand=true 200 12.3ms ua=Mozilla/5.0\n", 100),
		"indented code":  rep("    if x {\n        return y\n    }\n", 300),
		"urls":           rep("https://github.com/slackbot/slackbot/blob/main/agent/session.go#L120-L140 ", 100),
		"camel case ids": rep("getUserAccountSettings handleHTTPRequestError parseJSONWebToken ", 150),
	} {
		out[name] = text
	}
	return out
}
