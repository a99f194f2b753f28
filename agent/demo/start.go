package demo

import (
	"regexp"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
)

// Prompt markers of the agent's code and reflect prompts (agent tests check
// that they match the agent's own). The reflect prompt is sent only when
// model.reflector is set. MarkPlan marked the separate plan prompt, which
// the agent no longer sends (the first code reply carries the plan); it is
// kept so that scripts written for it still compile, and matches nothing.
const (
	MarkPlan    = "## Task: write a plan"
	MarkCode    = "## Task: write the edits"
	MarkReflect = "## Task: reflect on the failed attempt"
)

// ModelName is the model name the demo server answers as.
const ModelName = "fixpoint-demo"

// Script is the demo model's script: the fix (which starts with its plan)
// for code prompts that show examples/go-bug's Median, CannotHelp for everything else.
func Script() *llmtest.Script {
	bug := regexp.QuoteMeta(GoBugMarker)
	return &llmtest.Script{
		Models: []string{ModelName},
		Rules: []llmtest.Rule{
			{Role: "user", Last: true, Regexp: "(?s)" + bug + ".*" + regexp.QuoteMeta(MarkCode), Reply: &llmtest.Reply{Content: GoBugFix}},
		},
		Default: &llmtest.Reply{Content: CannotHelp},
	}
}

// Start starts the scripted demo model on a local port and points cfg.Model
// at it (no key, no tools). stop shuts the server down.
func Start(cfg *config.Config) (stop func(), err error) {
	srv, err := llmtest.Listen("127.0.0.1:0", Script())
	if err != nil {
		return nil, err
	}
	no := false
	cfg.Model.BaseURL = srv.URL()
	cfg.Model.APIKey = ""
	cfg.Model.Name = ModelName
	cfg.Model.Planner, cfg.Model.Coder, cfg.Model.Reflector = "", "", ""
	cfg.Model.Tools = &no
	cfg.Model.MaxRetries = 0
	return srv.Close, nil
}
