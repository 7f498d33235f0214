package rest

import (
	"slices"
	"testing"

	"github.com/slackbot/slackbot/config"
)

func TestApprovalFollowsTheHTTPMethod(t *testing.T) {
	t.Parallel()
	writes := config.ApprovalPolicy{Approval: config.ApprovalWrites, Approvers: []string{"U0OPS"}}
	h := newHarness(t, map[string]config.RestTool{
		"get":    {URL: "https://api.example.com/x", ApprovalPolicy: writes},
		"post":   {Method: "POST", URL: "https://api.example.com/x", ApprovalPolicy: writes},
		"always": {Method: "HEAD", URL: "https://api.example.com/x", ApprovalPolicy: config.ApprovalPolicy{Approval: config.ApprovalAlways}},
		"never":  {Method: "DELETE", URL: "https://api.example.com/x"},
	}, map[string]config.OpenAPI{"petstore": {Spec: petstore, ApprovalPolicy: writes}}, Options{})
	var asks []string
	for _, tool := range h.o.Tools() {
		if a := tool.Approval; a != nil {
			asks = append(asks, tool.Name)
			if tool.Name == "rest__post" && (a.Server != "rest" || a.Tool != "post" || !slices.Equal(a.Approvers, []string{"U0OPS"})) {
				t.Errorf("approval %+v", a)
			}
		}
	}
	want := []string{"rest__always", "rest__petstore_createPet", "rest__petstore_deletePet", "rest__post"}
	if !slices.Equal(asks, want) {
		t.Errorf("tools that ask: %v\nwant %v", asks, want)
	}
}
