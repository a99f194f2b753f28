package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
)

// TestListModels: fixpoint.listModels asks the folder's endpoint (a real
// HTTP server speaking the OpenAI API) and replies with its sorted ids and
// the configured model; an unreachable endpoint is an error naming it.
func TestListModels(t *testing.T) {
	model := llmtest.NewServer(&llmtest.Script{Models: []string{"qwen2.5-coder", "gpt-4o-mini", "qwen2.5-coder"}})
	defer model.Close()
	tests := []struct {
		name     string
		baseURL  string
		settings string // initializationOptions
		want     modelsResult
		wantErr  string
	}{
		{
			name:     "endpoint lists its models",
			baseURL:  model.URL(),
			settings: `{"model":"qwen2.5-coder"}`,
			want:     modelsResult{Models: []string{"gpt-4o-mini", "qwen2.5-coder"}, Current: "qwen2.5-coder", BaseURL: model.URL()},
		},
		{
			name:     "unreachable endpoint",
			baseURL:  "http://127.0.0.1:1/v1",
			settings: `null`,
			wantErr:  "list the models of http://127.0.0.1:1/v1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"FIXPOINT_BASE_URL": tt.baseURL, "FIXPOINT_MODEL": "llmtest"}
			e := newFakeEditor(t, editorOptions{server: &Options{Getenv: func(k string) string { return env[k] }}})
			init := `{"processId":1,"rootUri":"$ROOT","capabilities":{},"initializationOptions":` + tt.settings + `}`
			e.mustCall("initialize", json.RawMessage(e.expand(init)))
			e.notify("initialized", map[string]any{})
			res, err := e.call("workspace/executeCommand", map[string]any{
				"command": cmdListModels, "arguments": []any{map[string]string{"uri": e.uri("a.go")}}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("listModels error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("listModels: %v", err)
			}
			var got modelsResult
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Models, ",") != strings.Join(tt.want.Models, ",") || got.Current != tt.want.Current || got.BaseURL != tt.want.BaseURL {
				t.Errorf("listModels = %+v, want %+v", got, tt.want)
			}
		})
	}
}
