package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunServesUntilStdinCloses(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"models": ["m1", "m2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"--script", script}, stdinR, outW, &stderr) }()

	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("first line %q, want a loopback base URL ending in /v1", url)
	}
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"m2"`) {
		t.Errorf("/v1/models = %s, want the scripted ids", body)
	}
	stdinW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d, want 0; stderr %s", code, stderr.String())
	}
}

func TestRunBadScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"replys": []}`), 0o644)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--script", script}, strings.NewReader(""), io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--script") || !strings.Contains(stderr.String(), "replys") {
		t.Errorf("run = %d, stderr %q; want 2 naming --script and the bad key", code, stderr.String())
	}
}

func TestRunIgnoresStdinWhenAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--watch-stdin=false"}, strings.NewReader(""), outW, io.Discard) }()
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(strings.TrimSpace(url)+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatalf("server gone although stdin was at EOF: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"content":"ok"`) {
		t.Errorf("reply %s, want the default \"ok\"", body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after cancel, want 0", code)
	}
}
