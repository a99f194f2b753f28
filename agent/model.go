package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Model is the chat model the loop talks to; *llm.Client satisfies it.
type Model interface {
	Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error)
}

// chat sends messages to the role's model, offering the workspace tools
// when the configuration allows them.
func (r *run) chat(ctx context.Context, role string, msgs []llm.Message, onDelta func(string)) (*llm.Response, error) {
	cfg := r.e.cfg.Model
	masked := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Content = r.mask(m.Content) // the one place text leaves for the model
		masked[i] = m
	}
	msgs = masked
	req := llm.Request{Model: cfg.RoleModel(role), Messages: msgs, Temperature: cfg.Temperature, Seed: cfg.Seed, MaxTokens: cfg.MaxTokens}
	if cfg.Tools == nil || *cfg.Tools {
		req.Tools = workspaceTools
		req.ToolHandler = func(ctx context.Context, name, args string) (string, error) {
			out, err := r.tool(ctx, name, args)
			if err != nil {
				return "", errors.New(r.mask(err.Error()))
			}
			return r.mask(out), nil
		}
		req.MaxToolRounds = 4
	}
	return r.e.opts.Model.Chat(ctx, req, onDelta)
}

var workspaceTools = []llm.Tool{
	{Name: "read_file", Description: "Read a workspace file (as the current attempt has it).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"workspace-relative path"}},"required":["path"]}`)},
	{Name: "list_files", Description: "List workspace files under a directory.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string","description":"workspace-relative directory; empty for all"}}}`)},
	{Name: "search_code", Description: "Search workspace files for a regular expression; returns path:line: text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
}

// tool runs a workspace tool on the run's current snapshot. Secret and
// ignored files are invisible, as in prompts.
func (r *run) tool(ctx context.Context, name, args string) (string, error) {
	var a struct{ Path, Dir, Pattern string }
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "", fmt.Errorf("bad arguments: %v", err)
	}
	snap := r.cur
	switch name {
	case "read_file":
		p, err := sandbox.CleanRel(a.Path)
		if err != nil {
			return "", err
		}
		_, ok := snap.Files[p]
		if !ok || !r.include(p) {
			return "", fmt.Errorf("no such file: %s", a.Path)
		}
		data, err := snap.Read(p)
		if err != nil {
			return "", err
		}
		return r.mask(trimOutput(string(data), 24000)), nil
	case "list_files":
		dir := strings.Trim(a.Dir, "/")
		var out []string
		for _, p := range snap.Paths() {
			if r.include(p) && (dir == "" || dir == "." || strings.HasPrefix(p, dir+"/")) {
				out = append(out, p)
			}
		}
		if len(out) > 500 {
			out = append(out[:500], fmt.Sprintf("… %d more", len(out)-500))
		}
		return strings.Join(out, "\n"), nil
	case "search_code":
		re, err := regexp.Compile(a.Pattern)
		if err != nil {
			return "", fmt.Errorf("bad pattern: %v", err)
		}
		var out []string
		for _, p := range snap.Paths() {
			if err := ctx.Err(); err != nil { // reads every source file: stop when the run does
				return "", err
			}
			if !r.include(p) || !isSource(p) && path.Ext(p) != ".md" {
				continue
			}
			text, _ := snap.Text(p)
			for i, l := range strings.Split(text, "\n") {
				if re.MatchString(l) {
					out = append(out, fmt.Sprintf("%s:%d: %s", p, i+1, strings.TrimSpace(l)))
					if len(out) >= 100 {
						return r.mask(strings.Join(out, "\n")), nil
					}
				}
			}
		}
		return r.mask(strings.Join(out, "\n")), nil
	}
	return "", fmt.Errorf("unknown tool %q", name)
}
