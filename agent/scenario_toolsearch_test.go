package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools/mcp"
	"github.com/slackbot/slackbot/tools/rest/githubtest"
)

// The scenarios of an agent with more tools than its model takes: GitHub's
// whole REST API imported from its OpenAPI description, and ten MCP
// servers of thirty tools each. The fake model speaks OpenAI's wire, which
// refuses a request of more than 128 tools as the real service does.

// openAILimit sets the limit config.Load derives from an openai provider.
func openAILimit(a *config.Agent) {
	a.MaxTools, a.MaxToolsModel = config.DefaultOpenAIMaxTools, "fake/"+testModel
}

// wantToolsBounded asserts that every request carried no more tools than
// the model takes, and at most the offered ones plus the loaded bound.
func wantToolsBounded(t *testing.T, h *harness, reqs []*llmtest.Recorded) {
	t.Helper()
	fit, err := h.runner.ToolFit(h.agent)
	if err != nil {
		t.Fatalf("ToolFit: %v", err)
	}
	if !fit.Search || fit.Loaded < 1 {
		t.Fatalf("fit = %+v, want tool search with room for found tools", fit)
	}
	for i, r := range reqs {
		if n := len(r.ToolNames); n > config.DefaultOpenAIMaxTools || n > fit.Offered+fit.Loaded+1 {
			t.Errorf("request %d carried %d tools; the limit is %d, offered %d + loaded at most %d + tool_output",
				i+1, n, config.DefaultOpenAIMaxTools, fit.Offered, fit.Loaded)
		}
	}
}

// rankOf is the place of name among the lines "- name: …" of a search
// result, from 1; 0 when absent.
func rankOf(result, name string) int {
	rank := 0
	for _, line := range strings.Split(result, "\n") {
		if strings.HasPrefix(line, "- ") {
			rank++
			if strings.HasPrefix(line, "- "+name+":") {
				return rank
			}
		}
	}
	return 0
}

func TestAnAgentWithGitHubsWholeAPISearchesForItsTool(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/repos/octo/hello/issues" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"number":7,"title":"The build is red"}]`)
	}))
	t.Cleanup(api.Close)
	const want = "rest__github_issues_list-for-repo"
	h := newHarness(t,
		withTools(githubtest.Provider(t, api.URL)),
		withAgent(func(a *config.Agent) { a.Tools = []string{"rest__*"}; openAILimit(a) }),
		script(
			llmtest.Call(SearchTool, `{"query":"list the issues of a repository"}`),
			llmtest.Call(want, `{"owner":"octo","repo":"hello"}`),
			llmtest.Report(config.FormatMarkdown, "success", "One open issue: #7 The build is red."),
		))
	res := h.run("Which issues are open in octo/hello?")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(3)
	wantToolsBounded(t, h, reqs)
	if total := len(h.runner.Tools.Tools()); total < 1000 {
		t.Fatalf("GitHub's description gave %d tools, want over a thousand", total)
	}
	if slices.Contains(reqs[0].ToolNames, want) || !slices.Contains(reqs[0].ToolNames, SearchTool) {
		t.Errorf("first request offered %v: want %s and none of GitHub's operations", reqs[0].ToolNames, SearchTool)
	}
	if reqs[0].ToolChoice == "required" {
		t.Error("the session started on its final turn")
	}
	found := lastToolResult(t, reqs[1])
	if r := rankOf(found, want); r < 1 || r > 3 {
		t.Errorf("%s is at rank %d of the search, want among the first three:\n%s", want, r, found)
	}
	if !slices.Contains(reqs[1].ToolNames, want) {
		t.Errorf("second request does not offer the tool found: %v", reqs[1].ToolNames)
	}
	if got := lastToolResult(t, reqs[2]); !strings.Contains(got, "The build is red") {
		t.Errorf("the call of %s returned %q", want, got)
	}
	var status string
	for _, e := range h.events.ofKind(EventToolStarted) {
		if e.Tool.Name == SearchTool {
			status = e.Tool.Status
		}
	}
	if status != "Looking for a tool to list the issues of a repository" {
		t.Errorf("search status = %q", status)
	}
	if !h.events.hasNotice("tool search") {
		t.Errorf("no notice says the session searches its tools: %v", h.events.notices())
	}
}

// mcpDomains name ten MCP servers; each offers every action on each of
// its objects: 6 × 5 = 30 tools.
var mcpDomains = map[string][]string{
	"calendar": {"event", "invite", "room", "reminder", "timezone"},
	"mail":     {"message", "draft", "folder", "filter", "signature"},
	"crm":      {"contact", "lead", "deal", "account", "note"},
	"billing":  {"invoice", "payment", "refund", "subscription", "coupon"},
	"drive":    {"file", "folder", "permission", "comment", "revision"},
	"chat":     {"channel", "thread", "emoji", "bookmark", "pin"},
	"deploy":   {"release", "rollback", "environment", "secret", "pipeline"},
	"wiki":     {"page", "space", "attachment", "label", "template"},
	"hr":       {"employee", "leave", "payslip", "review", "team"},
	"tickets":  {"ticket", "queue", "macro", "sla", "tag"},
}

var mcpVerbs = []string{"list", "get", "create", "update", "delete", "search"}

// domainServer is an MCP server of one domain over streamable HTTP.
func domainServer(t *testing.T, domain string) string {
	s := mcpserver.NewMCPServer(domain, "1.0.0", mcpserver.WithToolCapabilities(true))
	for _, obj := range mcpDomains[domain] {
		for _, verb := range mcpVerbs {
			name := verb + "_" + obj
			s.AddTool(mcpgo.NewTool(name,
				mcpgo.WithDescription(fmt.Sprintf("%s %s records in the %s service.", strings.ToUpper(verb[:1])+verb[1:], obj, domain)),
				mcpgo.WithString(obj+"_id")),
				func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return mcpgo.NewToolResultText(domain + " ran " + name), nil
				})
		}
	}
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestAnAgentWithTenMCPServersSearchesForItsTool(t *testing.T) {
	servers := map[string]config.MCPServer{}
	for domain := range mcpDomains {
		servers[domain] = config.MCPServer{Type: "http", URL: domainServer(t, domain)}
	}
	reg, err := mcp.NewRegistry(servers, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	const want = "calendar__create_reminder"
	h := newHarness(t,
		withTools(reg.Providers()...),
		withAgent(func(a *config.Agent) {
			a.Tools = []string{"*__*", TaskStatusTool}
			a.ToolsPinned = []string{"tickets__create_ticket"}
			openAILimit(a)
		}),
		script(
			llmtest.Call(SearchTool, `{"query":"set a reminder in my calendar","namespaces":["calendar"]}`),
			llmtest.Call(want, `{"reminder_id":"standup"}`),
			llmtest.Report(config.FormatMarkdown, "success", "Reminder set."),
		))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.runner.Tools.Warmup(ctx); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	if n := len(h.runner.Tools.Tools()); n != 300 {
		t.Fatalf("%d tools, want 300", n)
	}
	res := h.run("Remind me of the standup.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(3)
	wantToolsBounded(t, h, reqs)
	for i, r := range reqs[:2] {
		if !slices.Contains(r.ToolNames, "tickets__create_ticket") || !slices.Contains(r.ToolNames, TaskStatusTool) {
			t.Errorf("request %d lacks the pinned tools: %v", i+1, r.ToolNames)
		}
	}
	found := lastToolResult(t, reqs[1])
	if r := rankOf(found, want); r < 1 || r > 3 {
		t.Errorf("%s is at rank %d, want among the first three:\n%s", want, r, found)
	}
	if rankOf(found, "mail__create_draft") > 0 {
		t.Errorf("a search in calendar returned a mail tool:\n%s", found)
	}
	if got := lastToolResult(t, reqs[2]); got != "calendar ran create_reminder" {
		t.Errorf("the call returned %q", got)
	}
}

// searchBox is a toolbox of many tools whose names say what they do.
func searchBox(n int) toolbox {
	b := toolbox{}
	for i := range n {
		b[fmt.Sprintf("tool%03d_%s", i, []string{"weather", "stocks", "news", "maps"}[i%4])] = echo()
	}
	return b
}

func TestToolSearchLoadsWhatItFindsAndForgetsTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		withTools(searchBox(200)),
		withAgent(func(a *config.Agent) { a.ToolSearchLoaded = 6; a.MaxToolCallsPerTurn = 10 }),
		script(
			llmtest.Call("test__tool000_weather", `{"text":"too early"}`),
			llmtest.Call(SearchTool, `{"query":"weather"}`),
			llmtest.Call("test__tool000_weather", `{"text":"now"}`),
			llmtest.Call(SearchTool, `{"query":"stocks"}`),
			llmtest.Report(config.FormatMarkdown, "success", "done"),
		))
	res := h.run("go")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(5)
	if got := lastToolResult(t, reqs[1]); !strings.Contains(got, "is not loaded yet") || !strings.Contains(got, SearchTool) {
		t.Errorf("a call before the search got %q, want a hint to search", got)
	}
	if !slices.Contains(reqs[2].ToolNames, "test__tool000_weather") {
		t.Fatalf("after the search, tools = %v", reqs[2].ToolNames)
	}
	if got := lastToolResult(t, reqs[3]); got != "echo: now" {
		t.Errorf("the loaded tool returned %q", got)
	}
	// Five weather tools, then five stocks tools with room for six: the
	// weather tool just used stays, the four others leave.
	last := reqs[4].ToolNames
	weather := 0
	for _, n := range last {
		if strings.HasSuffix(n, "_weather") {
			weather++
		}
	}
	if weather != 1 || !slices.Contains(last, "test__tool000_weather") {
		t.Errorf("after the second search, tools = %v; want the used weather tool kept and the others gone", last)
	}
}

func TestToolSearchNeverRefusesAnAgentOverTheLimitWithTheNumbers(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		withTools(searchBox(200)),
		withAgent(func(a *config.Agent) { a.ToolSearch = config.ToolSearchNever; openAILimit(a) }))
	_, err := h.runner.ToolFit(h.agent)
	if err == nil {
		t.Fatal("an agent of 201 tools under a limit of 128 was accepted")
	}
	for _, want := range []string{"201 tools", "limit of 128 tools of fake/test-model", "tool_search: auto"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	res := h.run("go")
	if res.Report.Status != StatusFailure || !strings.Contains(res.Report.Text(), "201 tools") {
		t.Errorf("report = %s %q, want a failure with the numbers", res.Report.Status, res.Report.Text())
	}
	h.wantRequests(0)
}

func TestToolSearchIsOffOnlyWhileTheToolsFit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tools  int
		mode   string
		search bool
	}{
		{"a few tools are offered whole", 10, "", false},
		{"above the threshold, search", 100, "", true},
		{"always searches", 10, config.ToolSearchAlways, true},
		{"never, under the limit, offers all", 100, config.ToolSearchNever, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(searchBox(c.tools)), withAgent(func(a *config.Agent) { a.ToolSearch = c.mode; openAILimit(a) }))
			fit, err := h.runner.ToolFit(h.agent)
			if err != nil {
				t.Fatal(err)
			}
			if fit.Search != c.search || fit.Tools != c.tools+1 {
				t.Errorf("fit = %s (search %v), want search %v over %d tools", fit, fit.Search, c.search, c.tools+1)
			}
		})
	}
}

// Attack: the model chooses the query and the namespaces. A search must
// never reveal or load a tool the agent's globs do not allow, and hostile
// arguments are answered as errors.
func TestToolSearchNeverReachesToolsTheAgentMayNotCall(t *testing.T) {
	t.Parallel()
	box := searchBox(100)
	box["admin_drop_database"] = echo()
	h := newHarness(t,
		withTools(box),
		withAgent(func(a *config.Agent) { a.Tools = []string{"test__tool*"}; a.ToolSearch = config.ToolSearchAlways }),
		script(
			llmtest.Calls(
				tc(SearchTool, `{"query":"admin drop database"}`),
				tc(SearchTool, `{"query":"weather","namespaces":["admin","../etc"]}`),
				tc(SearchTool, `{"query":"`+strings.Repeat("weather ", 500)+`"}`),
				tc(SearchTool, `{"query":""}`),
				tc("test__admin_drop_database", `{"text":"x"}`),
			),
			llmtest.Report(config.FormatMarkdown, "success", "done"),
		))
	h.run("go")
	reqs := h.wantRequests(2)
	results := toolResults(reqs[1])
	if len(results) != 5 {
		t.Fatalf("%d tool results, want 5", len(results))
	}
	for i, r := range results[:4] {
		if strings.Contains(r.Content, "admin_drop_database") {
			t.Errorf("result %d names a tool the agent may not call: %q", i+1, r.Content)
		}
	}
	if !strings.Contains(results[1].Content, "No tools to search in admin, ../etc") {
		t.Errorf("unknown namespaces: %q", results[1].Content)
	}
	if !strings.Contains(results[2].Content, "at most 1000") {
		t.Errorf("a page of a query: %q", results[2].Content)
	}
	if !strings.Contains(results[3].Content, "minLength") {
		t.Errorf("an empty query: %q", results[3].Content)
	}
	if !strings.Contains(results[4].Content, "There is no tool named") || strings.Contains(results[4].Content, "echo:") {
		t.Errorf("a call of a tool the agent may not call: %q", results[4].Content)
	}
	if slices.Contains(reqs[1].ToolNames, "test__admin_drop_database") {
		t.Error("a forbidden tool was offered")
	}
}

func TestFoundToolsNeverTakeMoreThanTheirShareOfTheWindow(t *testing.T) {
	t.Parallel()
	// Five heavy tools of about 1,300 tokens each are found; the schemas'
	// quarter of a 20,000-token window leaves room for three of them.
	heavy := describedToolbox{searchBox(100), "Weather forecast. " + strings.Repeat("Forecasts the weather for a city, hour by hour, with wind and rain. ", 100)}
	h := newHarness(t, withTools(heavy),
		withAgent(func(a *config.Agent) { a.ContextWindow, a.MaxOutputTokens, a.ContextBuffer = 20000, 1000, 200 }),
		script(llmtest.Call(SearchTool, `{"query":"weather forecast"}`), llmtest.Report(config.FormatMarkdown, "success", "done")))
	h.run("go")
	reqs := h.wantRequests(2)
	if n := strings.Count(lastToolResult(t, reqs[1]), "\n- "); n != 5 {
		t.Fatalf("the search returned %d tools, want 5:\n%s", n, lastToolResult(t, reqs[1]))
	}
	found := 0
	for _, n := range reqs[1].ToolNames {
		if strings.HasPrefix(n, "test__") {
			found++
		}
	}
	if found < 1 || found > 3 {
		t.Errorf("%d found tools offered, want 1 to 3 within a quarter of the window: %v", found, reqs[1].ToolNames)
	}
	for _, e := range h.events.ofKind(EventToolStarted) {
		if e.Tool.Name == SearchTool && e.Tool.Status != "Looking for a tool to weather forecast" {
			t.Errorf("status = %q", e.Tool.Status)
		}
	}
}

func TestASearchStatusIsShortWhateverTheQuery(t *testing.T) {
	t.Parallel()
	long := `{"query":"` + strings.Repeat("find the weather ", 60) + `"}`
	if got := searchStatus(long); len(got) > 200 || !strings.HasPrefix(got, "Looking for a tool to find the weather") {
		t.Errorf("status of a long query = %d bytes: %q", len(got), got)
	}
	if got := searchStatus(`not json`); got != "Looking for a tool" {
		t.Errorf("status of broken arguments = %q", got)
	}
}

func TestToolSearchNeverCountsToolOutputAgainstTheLimit(t *testing.T) {
	t.Parallel()
	// 127 tools and the final report make 128, OpenAI's limit: they fit
	// until tool_output may join them.
	h := newHarness(t, withTools(searchBox(127)),
		withAgent(func(a *config.Agent) { a.ToolSearch = config.ToolSearchNever; openAILimit(a) }))
	if _, err := h.runner.ToolFit(h.agent); err != nil {
		t.Fatalf("128 tools without tool_output were refused: %v", err)
	}
	h = newHarness(t, withTools(searchBox(127)),
		withAgent(func(a *config.Agent) { a.ToolSearch = config.ToolSearchNever; openAILimit(a) }))
	withToolOutput(t, h)
	if _, err := h.runner.ToolFit(h.agent); err == nil || !strings.Contains(err.Error(), "with tool_output that is one over the limit of 128") {
		t.Errorf("128 tools with tool_output: err = %v, want a refusal", err)
	}
}
