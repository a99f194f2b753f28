package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ProjectFile is the per-workspace config file name.
const ProjectFile = ".fixpoint.toml"

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// LoadOptions says where the layers come from. Zero values are documented.
type LoadOptions struct {
	// Root is the workspace root; "" skips the project file.
	Root string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// UserFile is the user config path; "" means
	// $XDG_CONFIG_HOME/fixpoint/config.toml or ~/.config/fixpoint/config.toml.
	// "-" skips it.
	UserFile string
	// Editor is the LSP settings object (initializationOptions or the
	// "fixpoint" section of workspace/configuration), applied above the
	// environment. Keys use the JSON names of the fields.
	Editor json.RawMessage
	// Flags applies command-line flags last.
	Flags func(*Config)
	// TrustDir holds the user's trust records ([TrustStore]): a project
	// file that sets user-only keys loads only when the user trusted its
	// content. "" means [DefaultTrustDir]; "-" means no record (nothing
	// trusted).
	TrustDir string
}

// Load builds the configuration from all layers and validates it.
func Load(opts LoadOptions) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Defaults(getenv)
	userFile := opts.UserFile
	if userFile == "" {
		userFile = defaultUserFile(getenv)
	}
	if userFile != "-" {
		if err := c.mergeFile(userFile); err != nil {
			return nil, err
		}
	}
	if opts.Root != "" {
		trust := TrustStore{Dir: opts.TrustDir}
		switch opts.TrustDir {
		case "":
			trust.Dir = DefaultTrustDir(getenv)
		case "-":
			trust.Dir = ""
		}
		if err := c.mergeProjectFile(opts.Root, trust); err != nil {
			return nil, err
		}
	}
	if err := c.mergeEnv(getenv); err != nil {
		return nil, err
	}
	if len(opts.Editor) > 0 && !bytes.Equal(bytes.TrimSpace(opts.Editor), []byte("null")) {
		if err := c.MergeEditor(opts.Editor); err != nil {
			return nil, err
		}
	}
	if opts.Flags != nil {
		before := c.Model
		opts.Flags(c)
		if c.Model.BaseURL != before.BaseURL || c.Model.Name != before.Name || c.Model.APIKey != before.APIKey {
			c.Model.configured = true
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func defaultUserFile(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "fixpoint", "config.toml")
	}
	home := getenv("HOME")
	if home == "" {
		return "-"
	}
	return filepath.Join(home, ".config", "fixpoint", "config.toml")
}

// mergeFile decodes a TOML file over c. A missing file is not an error.
func (c *Config) mergeFile(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrInvalid, path, err)
	}
	return c.MergeTOML(path, data)
}

// mergeProjectFile decodes the workspace's .fixpoint.toml over c, after
// refusing its user-only keys unless trust holds a record of its content.
func (c *Config) mergeProjectFile(root string, trust TrustStore) error {
	path := filepath.Join(root, ProjectFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrInvalid, path, err)
	}
	if err := trust.checkProjectTrust(root, path, data); err != nil {
		return err
	}
	return c.MergeTOML(path, data)
}

// MergeTOML decodes TOML text over c; name is used in error messages.
func (c *Config) MergeTOML(name string, data []byte) error {
	var probe struct {
		Model *struct {
			BaseURL *string `toml:"base_url"`
			APIKey  *string `toml:"api_key"`
			Name    *string `toml:"name"`
		} `toml:"model"`
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fileError(name, err)
	}
	if err := c.Sandbox.SandboxFiles.check(name, data); err != nil {
		return err
	}
	if toml.Unmarshal(data, &probe) == nil && probe.Model != nil &&
		(probe.Model.BaseURL != nil || probe.Model.APIKey != nil || probe.Model.Name != nil) {
		c.Model.configured = true
	}
	return nil
}

func fileError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		var parts []string
		for _, e := range strict.Errors {
			row, _ := e.Position()
			parts = append(parts, fmt.Sprintf("%s:%d: unknown key %q", name, row, strings.Join(e.Key(), ".")))
		}
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(parts, "; "))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return fmt.Errorf("%w: %s:%d: %s", ErrInvalid, name, row, de.Error())
	}
	return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
}

// MergeEditor applies an LSP settings object over c. Unknown keys are
// ignored, as editors send settings of their own; bad values are errors.
func (c *Config) MergeEditor(raw json.RawMessage) error {
	var flat struct {
		Model         *string  `json:"model"`
		BaseURL       *string  `json:"baseUrl"`
		Sandbox       *string  `json:"sandbox"`
		Image         *string  `json:"image"`
		MaxIterations *int     `json:"maxIterations"`
		TestCmd       *string  `json:"testCmd"`
		DataDir       *string  `json:"dataDir"`
		Memory        *bool    `json:"memory"`
		Runtime       *string  `json:"runtime"`
		AllowTests    *bool    `json:"allowTestEdits"`
		Temperature   *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(raw, &flat); err != nil {
		return fmt.Errorf("%w: editor settings: %v", ErrInvalid, err)
	}
	set := func(dst *string, v *string) {
		if v != nil && *v != "" {
			*dst = *v
		}
	}
	if (flat.Model != nil && *flat.Model != "") || (flat.BaseURL != nil && *flat.BaseURL != "") {
		c.Model.configured = true
	}
	set(&c.Model.Name, flat.Model)
	set(&c.Model.BaseURL, flat.BaseURL)
	set(&c.Sandbox.Backend, flat.Sandbox)
	set(&c.Sandbox.Image, flat.Image)
	set(&c.Sandbox.Runtime, flat.Runtime)
	set(&c.TestCmd, flat.TestCmd)
	set(&c.DataDir, flat.DataDir)
	if flat.MaxIterations != nil && *flat.MaxIterations > 0 {
		c.Agent.MaxIterations = *flat.MaxIterations
	}
	if flat.Memory != nil {
		c.Memory.Enabled = flat.Memory
	}
	if flat.AllowTests != nil {
		c.Agent.AllowTestEdits = *flat.AllowTests
	}
	if flat.Temperature != nil {
		c.Model.Temperature = flat.Temperature
	}
	return nil
}

func (c *Config) mergeEnv(getenv func(string) string) error {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := getenv(k); v != "" {
				return v
			}
		}
		return ""
	}
	if v := first("FIXPOINT_BASE_URL", "OPENAI_BASE_URL"); v != "" {
		c.Model.BaseURL, c.Model.configured = v, true
	}
	if v := first("FIXPOINT_API_KEY", "OPENAI_API_KEY"); v != "" {
		c.Model.APIKey, c.Model.configured = v, true
	}
	if v := getenv("FIXPOINT_MODEL"); v != "" {
		c.Model.Name, c.Model.configured = v, true
	}
	if v := getenv("FIXPOINT_SANDBOX"); v != "" {
		c.Sandbox.Backend = v
	}
	if v := getenv("FIXPOINT_IMAGE"); v != "" {
		c.Sandbox.Image = v
	}
	if v := getenv("FIXPOINT_DATA_DIR"); v != "" {
		c.DataDir = v
	}
	if v := getenv("FIXPOINT_MAX_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: FIXPOINT_MAX_ITERATIONS=%q: want a positive integer", ErrInvalid, v)
		}
		c.Agent.MaxIterations = n
	}
	return nil
}

// Validate checks values that every layer could have set wrongly.
func (c *Config) Validate() error {
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, key, fmt.Sprintf(format, a...))
	}
	if !ValidBackend(c.Sandbox.Backend) {
		return bad("sandbox.backend (FIXPOINT_SANDBOX)", "%q is not one of %s", c.Sandbox.Backend, strings.Join(Backends(), ", "))
	}
	switch rt := c.Sandbox.Runtime; {
	case rt == "", rt == "runc", rt == "runsc":
	case strings.HasPrefix(rt, "runsc-") && len(rt) > len("runsc-"):
		// a gVisor variant registered in the engine (.ci/docker-up)
	default:
		return bad("sandbox.runtime", "%q is not one of runc, runsc, runsc-<variant>", rt)
	}
	if _, err := ParseSize(c.Sandbox.Memory); err != nil {
		return bad("sandbox.memory", "%v", err)
	}
	if _, err := ParseSize(c.Sandbox.OutputCap); err != nil {
		return bad("sandbox.output_cap", "%v", err)
	}
	for key, v := range map[string]string{"sandbox.workspace_size": c.Sandbox.WorkspaceSize, "sandbox.tmp_size": c.Sandbox.TmpSize, "sandbox.cache_size": c.Sandbox.CacheSize} {
		if v == "" {
			continue
		}
		if n, err := ParseSize(v); err != nil || n < 1<<20 {
			return bad(key, "%q: want a size of at least 1m, such as 1g, or leave it out for the default", v)
		}
	}
	if c.Sandbox.Pids < 0 || c.Sandbox.Timeout < 0 || c.Sandbox.CPUs < 0 {
		return bad("sandbox.pids, sandbox.timeout, sandbox.cpus", "negative limits are refused (0 or absent means the default): pids %d, timeout %v, cpus %v", c.Sandbox.Pids, c.Sandbox.Timeout.D(), c.Sandbox.CPUs)
	}
	if err := c.Sandbox.SandboxFiles.check("", nil); err != nil {
		return err
	}
	if c.Agent.MaxIterations < 1 {
		return bad("agent.max_iterations (FIXPOINT_MAX_ITERATIONS)", "must be at least 1")
	}
	switch c.Memory.Embedder {
	case "local", "openai":
	default:
		return bad("memory.embedder", "%q is not one of local, openai", c.Memory.Embedder)
	}
	for rule, v := range c.Policy.Rules {
		switch v {
		case "block", "warn", "off":
		default:
			return bad("policy.rules."+rule, "%q is not one of block, warn, off", v)
		}
	}
	for k := range c.Test.Env {
		if !envNameRe.MatchString(k) {
			return bad("test.env."+k, "not a variable name (letters, digits and _, not starting with a digit)")
		}
	}
	if !strings.HasPrefix(c.Model.BaseURL, "http://") && !strings.HasPrefix(c.Model.BaseURL, "https://") {
		return bad("model.base_url (FIXPOINT_BASE_URL)", "%q is not an http(s) URL", c.Model.BaseURL)
	}
	return nil
}

// MemoryEnabled reports whether failure memory is on.
func (c *Config) MemoryEnabled() bool { return c.Memory.Enabled == nil || *c.Memory.Enabled }

// TraceEnabled reports agent.trace (default true).
func (c *Config) TraceEnabled() bool { return c.Agent.Trace == nil || *c.Agent.Trace }
