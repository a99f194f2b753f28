package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pelletier/go-toml/v2"
)

// Every key of a .fixpoint.toml is either a user-only key or a project key,
// declared once here (TestEveryKeyClassified walks [Config] and fails on a
// key in neither list).
//
// A user-only key decides where the API key and the code go, whether and
// how isolation applies, what the machine spends, or what weakens the check
// of the model's work. Only the user sets it: flags, the environment, the
// user file and the editor's settings. A workspace's .fixpoint.toml that
// sets one is refused unless the user trusted that exact content
// (`fixpoint trust`, [TrustStore]). A project key describes the project and
// works from any layer.
//
// An entry names a key ("sandbox.backend") or a whole table ("model").

// userOnlyKeys are the keys a workspace file sets only when trusted.
func userOnlyKeys() []string {
	return []string{
		// where the key and the code go, and what the endpoint is asked
		"model", // base_url, api_key, name, planner/coder/reflector, timeout, retries, tokens, prices
		"memory.embedder", "memory.embed_base_url", "memory.embed_model",
		"memory.global", // reads and writes the user's cross-project memory
		"data_dir",
		"policy.include_ignored", // what of the user's ignored files reaches the model
		// whether and how isolation applies
		"sandbox.backend", "sandbox.runtime", "sandbox.image", "sandbox.dockerfile",
		"sandbox.kubernetes",      // which cluster, credentials, namespace, runtime class, requests, network check
		"sandbox.go_mod_cache",    // shares the host's module cache
		"sandbox.include_secrets", // secret files entering the sandbox
		// resources the user's machine spends
		"sandbox.memory", "sandbox.cpus", "sandbox.pids", "sandbox.timeout", "sandbox.output_cap",
		"sandbox.workspace_size", "sandbox.tmp_size", "sandbox.max_file_size", "sandbox.max_workspace_size",
		"sandbox.cache_size",
		"server", // idle_timeout: how long a sandbox stays up, and whether opening the folder starts one
		// what weakens the check of the model's work
		"agent.allow_test_edits",
		"policy.allow_protected",
		"policy.allow_deps", // dependencies installed, with network, without asking
	}
}

// projectKeys are the keys any layer may set.
func projectKeys() []string {
	return []string{
		"test_cmd", "test.env",
		"sandbox.include", "sandbox.exclude", "sandbox.setup",
		"agent.max_iterations", "agent.token_budget", "agent.wall_budget", "agent.max_malformed", "agent.context_tokens",
		"agent.narrow_min", "agent.trace",
		"memory.enabled", "memory.k", "memory.threshold", "memory.cap",
		"policy.rules", // a rule set to warn or off is user-only: see UserOnlySet
		// sandbox.setup: only "off" from a workspace; a command is user-only
		// (it runs with network): see UserOnlySet
	}
}

// UserOnlyKeys lists the user-only keys and tables, for documentation and
// messages.
func UserOnlyKeys() []string { return userOnlyKeys() }

// UserOnlySet returns the user-only keys a TOML text sets, sorted, as
// dotted paths ("model.base_url"). A policy rule set to anything but
// "block" counts: a workspace may make a check stricter, not weaker.
func UserOnlySet(data []byte) ([]string, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			// The decoder matches a key to a field by strings.ToLower
			// (go-toml), so "[MODEL]" or a Kelvin sign in "bac\u212aend"
			// set the field: classify what the decoder sees. Map keys
			// below test.env and policy.rules are names, not fields.
			seg := strings.ToLower(k)
			key := seg
			if prefix != "" {
				key = prefix + "." + seg
			}
			if key == "sandbox.setup" {
				// A setup command runs with network, before any test:
				// only the user chooses one. "off" (no setup) is a
				// project's to say.
				if s, ok := v.(string); !ok || s != "off" {
					out = append(out, graphic(key))
				}
				continue
			}
			if prefix == "policy.rules" {
				if s, ok := v.(string); !ok || s != "block" {
					out = append(out, graphic(key))
				}
				continue
			}
			if sub, ok := v.(map[string]any); ok && key != "test.env" {
				walk(key, sub)
				continue
			}
			if isUserOnly(key) {
				out = append(out, graphic(key))
			}
		}
	}
	walk("", doc)
	// A second look, as the decoder sees the file: a user-only field it
	// fills is flagged whatever spelling reached it.
	var probe Config
	if toml.Unmarshal(data, &probe) == nil {
		for _, k := range setUserOnlyFields(reflect.ValueOf(probe), "") {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// setUserOnlyFields lists the user-only keys whose fields hold a non-zero
// value in v (a Config, or a table of it), by their TOML paths.
func setUserOnlyFields(v reflect.Value, prefix string) []string {
	var out []string
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous {
			out = append(out, setUserOnlyFields(fv, prefix)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		key := prefix + name
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration(0)) {
			out = append(out, setUserOnlyFields(fv, key+".")...)
			continue
		}
		if isUserOnly(key) && !fv.IsZero() {
			out = append(out, key)
		}
	}
	return out
}

// isUserOnly reports whether key is a user-only key or lies in a
// user-only table.
func isUserOnly(key string) bool {
	for _, u := range userOnlyKeys() {
		if key == u || strings.HasPrefix(key, u+".") {
			return true
		}
	}
	return false
}

// untrustedError is the refusal of a workspace file's user-only keys.
func untrustedError(file, dir string, keys []string, changed *TrustRecord) error {
	what := "has not been trusted"
	if changed != nil {
		what = fmt.Sprintf("changed since you trusted it on %s", changed.TrustedAt.Format("2006-01-02 15:04"))
	}
	return fmt.Errorf("%w: %w: %s %s, and it sets %s that only you may set: %s. "+
		"A repository's file does not choose where your key and code go, whether the sandbox applies or what it may spend. "+
		"Review the file; if you trust this exact content, run `fixpoint trust %s` (a later change is refused again), "+
		"or set these in ~/.config/fixpoint/config.toml, the environment or flags instead",
		ErrInvalid, ErrUntrusted, graphic(file), what, plural(len(keys), "a key", "keys"), strings.Join(keys, ", "), shellQuote(dir))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// graphic returns s, or s quoted in Go syntax when it holds a control or
// other non-graphic character: a key or path from a workspace reaches the
// terminal with no escape sequence in it.
func graphic(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 {
		return strconv.QuoteToGraphic(s)
	}
	return s
}

// shellQuote quotes a path for a command line shown to the user.
func shellQuote(s string) string {
	if g := graphic(s); g != s {
		return g
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == '@' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
