package llmtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
)

func post(t *testing.T, url string, body any) (int, http.Header, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

type msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func chat(msgs ...msg) map[string]any { return map[string]any{"model": "m", "messages": msgs} }

func content(t *testing.T, body []byte) string {
	t.Helper()
	var r openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("reply %s: %v", body, err)
	}
	if len(r.Choices) == 0 {
		return ""
	}
	if len(r.Choices[0].Message.ToolCalls) > 0 {
		return "tool:" + r.Choices[0].Message.ToolCalls[0].Function.Name
	}
	return r.Choices[0].Message.Content
}

func TestScriptFile(t *testing.T) {
	s, err := llmtest.LoadScript("testdata/script.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(s)
	defer srv.Close()
	url := srv.URL() + "/chat/completions"
	steps := []struct {
		name       string
		msgs       []msg
		wantStatus int
		want       string
	}{
		{"ordered 429", []msg{{"user", "hello"}}, 429, ""},
		{"ordered reply", []msg{{"user", "hello"}}, 200, "first"},
		{"rule by role", []msg{{"system", "REFLECT on it"}, {"user", "x"}}, 200, "reflection"},
		{"role mismatch falls through", []msg{{"user", "REFLECT"}}, 200, "tool:read_file"},
		{"regexp on last message", []msg{{"user", "plan this"}}, 200, "1. edit a.go"},
		{"max uses spent", []msg{{"user", "plan this"}}, 200, "default"},
		{"regexp not on last message", []msg{{"user", "plan"}, {"user", "later"}}, 200, "default"},
		{"rule sequence 1", []msg{{"user", "retry me"}}, 500, ""},
		{"rule sequence 2", []msg{{"user", "retry me"}}, 200, "ok after 500"},
		{"rule used up", []msg{{"user", "retry me"}}, 200, "default"},
	}
	for _, st := range steps {
		code, hdr, body := post(t, url, chat(st.msgs...))
		if code != st.wantStatus {
			t.Fatalf("%s: status %d, want %d (%s)", st.name, code, st.wantStatus, body)
		}
		if code == 429 && hdr.Get("Retry-After") != "1" {
			t.Errorf("%s: Retry-After %q, want 1", st.name, hdr.Get("Retry-After"))
		}
		if code == 200 {
			if got := content(t, body); got != st.want {
				t.Errorf("%s: reply %q, want %q", st.name, got, st.want)
			}
		}
	}
	reqs := srv.Requests()
	if len(reqs) != len(steps) || reqs[2].Reply != "rule 0" || reqs[1].Reply != "reply 1" || reqs[5].Reply != "default" {
		t.Errorf("log: %d requests, replies %q %q %q", len(reqs), reqs[1].Reply, reqs[2].Reply, reqs[5].Reply)
	}
	if reqs[2].Messages[0].Role != "system" || reqs[2].Messages[0].Content != "REFLECT on it" || reqs[2].Model != "m" || reqs[2].Stream {
		t.Errorf("recorded %+v", reqs[2])
	}
}

func TestLoadScriptErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"unknown key", `{"replys": []}`, "replys"},
		{"bad fault", `{"replies": [{"fault": "explode"}]}`, `unknown fault "explode"`},
		{"bad regexp", `{"rules": [{"regexp": "(", "reply": {}}]}`, "rule 0"},
		{"rule without reply", `{"rules": [{"contains": "x"}]}`, "rule 0: no reply"},
		{"bad duration", `{"replies": [{"hang": "soon"}]}`, "bad duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := t.TempDir() + "/s.json"
			if err := writeFile(p, tt.json); err != nil {
				t.Fatal(err)
			}
			_, err := llmtest.LoadScript(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadScript(%s) = %v, want an error containing %q", tt.json, err, tt.want)
			}
		})
	}
}

func TestExhaustedScript(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Replies("only"))
	defer srv.Close()
	url := srv.URL() + "/chat/completions"
	if code, _, _ := post(t, url, chat(msg{"user", "a"})); code != 200 {
		t.Fatalf("first status %d", code)
	}
	code, _, body := post(t, url, chat(msg{"user", "b"}))
	if code != 400 || !strings.Contains(string(body), "no scripted reply left for request 2") {
		t.Errorf("second = %d %s, want 400 naming request 2", code, body)
	}
	srv.Push(llmtest.Text("pushed"))
	if _, _, body := post(t, url, chat(msg{"user", "c"})); content(t, body) != "pushed" {
		t.Errorf("after Push: %s", body)
	}
}

func TestNonStreamingFaults(t *testing.T) {
	tests := []struct {
		reply      llmtest.Reply
		wantStatus int
		want       string
	}{
		{llmtest.Reply{Fault: llmtest.FaultOllama, Error: "model not found"}, 400, `{"error":"model not found"}`},
		{llmtest.Reply{Fault: llmtest.FaultGarbage}, 200, "<html>"},
		{llmtest.Reply{Fault: llmtest.FaultEmptyChoices}, 200, `"choices":[]`},
		{llmtest.Reply{Fault: llmtest.FaultStatus, Status: 503, Error: "overloaded"}, 503, "overloaded"},
	}
	for _, tt := range tests {
		t.Run(string(tt.reply.Fault), func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{tt.reply}})
			defer srv.Close()
			code, _, body := post(t, srv.URL()+"/chat/completions", chat(msg{"user", "x"}))
			if code != tt.wantStatus || !strings.Contains(string(body), tt.want) {
				t.Errorf("= %d %s, want %d containing %s", code, body, tt.wantStatus, tt.want)
			}
		})
	}
}

func TestEmbeddings(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{EmbeddingDims: 48})
	defer srv.Close()
	in := []string{"TypeError: foo is not a function", "typeerror foo is not a function!", "segfault in bar"}
	code, _, body := post(t, srv.URL()+"/embeddings", map[string]any{"model": "e", "input": in})
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var r openai.EmbeddingResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Data) != 3 {
		t.Fatalf("%d vectors, want 3", len(r.Data))
	}
	for i, d := range r.Data {
		if d.Index != i || len(d.Embedding) != 48 {
			t.Errorf("vector %d: index %d, %d dims", i, d.Index, len(d.Embedding))
		}
		if n := norm(d.Embedding); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v, want 1", i, n)
		}
	}
	same, other := dot(r.Data[0].Embedding, r.Data[1].Embedding), dot(r.Data[0].Embedding, r.Data[2].Embedding)
	if same < 0.99 || other > 0.5 {
		t.Errorf("similarity same-words %v, different %v", same, other)
	}
	if got := llmtest.Embed(in[0], 48); dot(got, r.Data[0].Embedding) < 0.9999 {
		t.Errorf("Embed differs from the server's vector")
	}
}

func norm(v []float32) float64 { return math.Sqrt(dot(v, v)) }

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHangForADuration(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{{Fault: llmtest.FaultHang, Hang: llmtest.Duration(20 * time.Millisecond), Content: "late"}}})
	defer srv.Close()
	code, _, body := post(t, srv.URL()+"/chat/completions", chat(msg{"user", "x"}))
	if code != 200 || content(t, body) != "late" {
		t.Errorf("= %d %s, want 200 \"late\" after the hang", code, body)
	}
}

func TestCloseUnblocksHang(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Fault: llmtest.FaultHang}})
	errc := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(chat(msg{"user", "x"}))
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	if err := srv.Wait(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	select {
	case <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not unblock a hanging reply")
	}
}

func TestEditBlock(t *testing.T) {
	got := llmtest.EditBlock("a.go", "x := 1", "x := 2\n")
	want := "a.go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n"
	if got != want {
		t.Errorf("EditBlock = %q, want %q", got, want)
	}
}
