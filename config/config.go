// Package config loads fixpoint's configuration from its layers into one
// [Config].
//
// Precedence, highest first: command-line flags; inside the LSP,
// initializationOptions and workspace/configuration (section "fixpoint");
// environment variables; .fixpoint.toml at the workspace root;
// ~/.config/fixpoint/config.toml; built-in defaults.
//
// An unknown key or a bad value in a file is an error naming the file and
// the line.
//
// Trust: the workspace's .fixpoint.toml is the only layer a cloned
// repository controls. Its user-only keys (userkeys.go: the model
// endpoint, isolation, limits, prewarm, what weakens verification) are
// refused with [ErrUntrusted] unless the user's [TrustStore] holds a
// record of that file's exact content (`fixpoint trust`); its project keys
// always apply. The same store records folder trust, which the language
// server asks for before it prepares a folder's sandbox.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid marks a configuration error (exit code 2).
var ErrInvalid = errors.New("invalid configuration")

// Config is the whole configuration. Zero values are filled by Defaults.
type Config struct {
	Model   Model   `toml:"model" json:"model"`
	Sandbox Sandbox `toml:"sandbox" json:"sandbox"`
	Agent   Agent   `toml:"agent" json:"agent"`
	Memory  Memory  `toml:"memory" json:"memory"`
	Policy  Policy  `toml:"policy" json:"policy"`
	// DataDir holds memory, run logs and history. FIXPOINT_DATA_DIR.
	DataDir string `toml:"data_dir" json:"dataDir"`
	// TestCmd overrides test runner detection, e.g. "pytest -q tests".
	TestCmd string `toml:"test_cmd" json:"testCmd"`
	Test    Test   `toml:"test" json:"test"`
	Server  Server `toml:"server" json:"server"`
}

// Server configures `fixpoint serve`.
type Server struct {
	// IdleTimeout is how long the sandbox session that serve starts ahead
	// of the first action (after initialize, and again after each run)
	// stays up without an action; default 10m. "0s" turns the pre-started
	// session off: every action starts its own.
	IdleTimeout Duration `toml:"idle_timeout" json:"idleTimeout"`
}

// Test configures the test command's environment.
type Test struct {
	// Env holds extra variables for every test command, e.g.
	// env = { CI = "true", TZ = "UTC" }. Nothing else is added to what the
	// sandbox sets (README: "The test environment"); variables that change
	// how tests behave or print, like NO_COLOR, CI or TERM, come only from here.
	Env map[string]string `toml:"env" json:"env"`
}

// Model configures the OpenAI-compatible endpoint.
type Model struct {
	BaseURL string `toml:"base_url" json:"baseUrl"` // FIXPOINT_BASE_URL, then OPENAI_BASE_URL; default https://api.openai.com/v1
	APIKey  string `toml:"api_key" json:"-"`        // FIXPOINT_API_KEY, then OPENAI_API_KEY; may be empty for local servers
	Name    string `toml:"name" json:"model"`       // FIXPOINT_MODEL; default gpt-4o-mini
	// Per-role models; empty means Name.
	Planner   string `toml:"planner" json:"planner"`
	Coder     string `toml:"coder" json:"coder"`
	Reflector string `toml:"reflector" json:"reflector"`

	Timeout     Duration `toml:"timeout" json:"timeout"`         // per request; default 120s
	MaxRetries  int      `toml:"max_retries" json:"maxRetries"`  // default 4
	Temperature *float64 `toml:"temperature" json:"temperature"` // nil = server default
	Seed        *int     `toml:"seed" json:"seed"`
	MaxTokens   int      `toml:"max_tokens" json:"maxTokens"` // per reply; 0 = server default
	Tools       *bool    `toml:"tools" json:"tools"`          // offer read_file/list_files/search_code; default true
	// Prices in USD per million tokens, for cost accounting. 0 = unknown.
	PriceIn  float64 `toml:"price_in" json:"priceIn"`
	PriceOut float64 `toml:"price_out" json:"priceOut"`

	// configured is true when any model setting came from the user.
	configured bool
}

// Configured reports whether the user configured a model endpoint at all
// (base URL, key or model name from any layer). When false, the CLI demo
// falls back to the bundled scripted model under a banner.
func (m Model) Configured() bool { return m.configured }

// RoleModel returns the model name for a role ("planner", "coder", "reflector").
func (m Model) RoleModel(role string) string {
	var r string
	switch role {
	case "planner":
		r = m.Planner
	case "coder":
		r = m.Coder
	case "reflector":
		r = m.Reflector
	}
	if r != "" {
		return r
	}
	return m.Name
}

// Sandbox configures where commands run.
type Sandbox struct {
	Backend    string   `toml:"backend" json:"sandbox"`       // docker|bwrap|none; "" = docker when an engine answers, else bwrap. FIXPOINT_SANDBOX
	Image      string   `toml:"image" json:"image"`           // FIXPOINT_IMAGE; "" = fixpoint-sandbox-<lang>
	Dockerfile string   `toml:"dockerfile" json:"dockerfile"` // project recipe, relative to the workspace root
	Runtime    string   `toml:"runtime" json:"runtime"`       // "" (runc) or "runsc"
	Memory     string   `toml:"memory" json:"memory"`         // e.g. "1g"; default 1g
	CPUs       float64  `toml:"cpus" json:"cpus"`             // default 2
	Pids       int      `toml:"pids" json:"pids"`             // default 256
	Timeout    Duration `toml:"timeout" json:"timeout"`       // per test command; default 120s
	OutputCap  string   `toml:"output_cap" json:"outputCap"`  // per stream; default 1m
	GoModCache *bool    `toml:"go_mod_cache" json:"goModCache"`
	// Disk caps of a session (docker and bwrap): the workspace copy and
	// /tmp are size-limited tmpfs; past the cap a write gets ENOSPC.
	WorkspaceSize string `toml:"workspace_size" json:"workspaceSize"` // default 1g
	TmpSize       string `toml:"tmp_size" json:"tmpSize"`             // default 256m
	// CacheSize caps the per-project caches the sandboxes keep on this
	// machine (Go build caches, bwrap dependency caches), taken together;
	// the least recently used that no session uses go first
	// (sandbox/cachedir). User-only; default 10g.
	CacheSize string `toml:"cache_size" json:"cacheSize"`
	SandboxFiles
	// Setup is the dependency install command run once, with network,
	// before tests (a shell command); "" = detected from the project
	// (go mod download, npm ci, pip install), "off" = none.
	Setup string `toml:"setup" json:"setup"`
	// Kubernetes configures backend = "kubernetes" (user-only, like every
	// key that decides where code runs).
	Kubernetes Kubernetes `toml:"kubernetes" json:"kubernetes"`
}

// Kubernetes configures the kubernetes sandbox backend. Every zero value
// keeps the default named on its field.
type Kubernetes struct {
	// Kubeconfig is a kubeconfig file; "" = $KUBECONFIG, ~/.kube/config,
	// else the in-cluster service account (kubectl's rules).
	Kubeconfig string `toml:"kubeconfig" json:"kubeconfig"`
	Context    string `toml:"context" json:"context"`     // "" = the current context
	Namespace  string `toml:"namespace" json:"namespace"` // "" = the context's, else default
	// RuntimeClass names a RuntimeClass (e.g. "gvisor"); "" = the default.
	RuntimeClass string `toml:"runtime_class" json:"runtimeClass"`
	// ImagePullPolicy is Never (images preloaded on the nodes),
	// IfNotPresent (default) or Always.
	ImagePullPolicy string `toml:"image_pull_policy" json:"imagePullPolicy"`
	// CPURequest and MemoryRequest are what the scheduler reserves per
	// session ("250m", "256Mi"); "" = 100m and 128Mi. The limits are
	// sandbox.cpus and sandbox.memory.
	CPURequest    string `toml:"cpu_request" json:"cpuRequest"`
	MemoryRequest string `toml:"memory_request" json:"memoryRequest"`
	// NetworkCheck is "enforce" (default: refuse a cluster whose pods
	// reach their node despite the deny-all NetworkPolicy) or "warn".
	NetworkCheck string `toml:"network_check" json:"networkCheck"`
	// ImageRegistry is where `fixpoint sandbox images push REGISTRY` put
	// fixpoint's images ("registry.example.com/team", "127.0.0.1:5000");
	// "" = pods use the image names as they are (images preloaded on the
	// nodes). With it, the pod of a fixpoint-sandbox-LANG session uses
	// REGISTRY/fixpoint-sandbox-LANG:ImageTags[LANG].
	ImageRegistry string `toml:"image_registry" json:"imageRegistry"`
	// ImageTags maps a language to the tag its image was pushed with, and
	// its manifest digest ("3f2a0c1d9e8b@sha256:…", as the push command
	// prints it); the digest pins the content, so a later push to the
	// same tag cannot change what sessions run.
	ImageTags map[string]string `toml:"image_tags" json:"imageTags"`
	// CacheStorageClass is the StorageClass of the PersistentVolumeClaims
	// that hold dependency caches (filled by the setup pod, mounted
	// read-only by test pods); "" = the cluster's default StorageClass.
	CacheStorageClass string `toml:"cache_storage_class" json:"cacheStorageClass"`
	// CacheSize is the size each cache claim requests ("4Gi" default).
	CacheSize string `toml:"cache_size" json:"cacheSize"`
}

// Agent configures the loop.
type Agent struct {
	MaxIterations  int      `toml:"max_iterations" json:"maxIterations"` // FIXPOINT_MAX_ITERATIONS; default 6
	TokenBudget    int      `toml:"token_budget" json:"tokenBudget"`     // per run, in+out; default 400000
	WallBudget     Duration `toml:"wall_budget" json:"wallBudget"`       // per run; default 15m
	MaxMalformed   int      `toml:"max_malformed" json:"maxMalformed"`   // replies whose edits don't apply; default 3
	AllowTestEdits bool     `toml:"allow_test_edits" json:"allowTestEdits"`
	ContextTokens  int      `toml:"context_tokens" json:"contextTokens"` // prompt budget; default 24000
	// NarrowMin: in fix mode an iteration runs the tests that failed at
	// baseline alone first only when the whole suite's baseline run took
	// at least this long; a shorter suite goes straight to the verifying
	// run of the whole suite, as running the failing tests first would
	// cost a session and a test process more than it saves. 0 = always
	// run them first. Default 5s. It changes what runs, never the verdict.
	// A suite over it still goes straight to the verifying run when the
	// failing tests took at least half of it by their own reported times
	// (agent.targetsCostly); 0 turns that off too.
	NarrowMin Duration `toml:"narrow_min" json:"narrowMin"`
	// Trace: in fix mode the tests that failed at baseline run once more,
	// traced (lang.Tracer), before the first prompt, and the code they
	// executed ranks the context. nil = true. It changes what the model
	// is shown, never the verdict.
	Trace *bool `toml:"trace" json:"trace"`
}

// Memory configures the failure memory.
type Memory struct {
	Enabled   *bool   `toml:"enabled" json:"enabled"`     // default true
	K         int     `toml:"k" json:"k"`                 // default 3
	Threshold float64 `toml:"threshold" json:"threshold"` // default 0.5
	Cap       int     `toml:"cap" json:"cap"`             // records per project; default 5000
	Global    bool    `toml:"global" json:"global"`       // also use the cross-project collection
	Embedder  string  `toml:"embedder" json:"embedder"`   // "local" (default) or "openai"
	// For Embedder "openai": endpoint and model; empty BaseURL = model endpoint.
	EmbedBaseURL string `toml:"embed_base_url" json:"embedBaseUrl"`
	EmbedModel   string `toml:"embed_model" json:"embedModel"`
}

// Policy configures checks on model-written code and dependencies.
type Policy struct {
	// Rules maps a rule name (e.g. "python.subprocess") to block|warn|off.
	Rules map[string]string `toml:"rules" json:"rules"`
	// AllowDeps lists dependencies that may be installed without approval.
	AllowDeps []string `toml:"allow_deps" json:"allowDeps"`
	// IncludeIgnored lets .gitignored files into prompts (never .env, keys).
	IncludeIgnored bool `toml:"include_ignored" json:"includeIgnored"`
	// AllowProtected lists protected files the model may change anyway
	// (.vscode/launch.json, "ci/" for a directory, or a glob such as
	// ".github/workflows/*.yml"). .fixpoint.toml itself always stays
	// protected. See agent/edit.Protected.
	AllowProtected []string `toml:"allow_protected" json:"allowProtected"`
}

// Duration is a time.Duration written as "90s" or "2m" in files.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. 90s, 2m)", b)
	}
	if v < 0 {
		return fmt.Errorf("bad duration %q: negative", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Defaults returns the built-in defaults. DataDir is derived from env.
func Defaults(getenv func(string) string) *Config {
	t := true
	c := &Config{
		Model: Model{
			BaseURL:    "https://api.openai.com/v1",
			Name:       "gpt-4o-mini",
			Timeout:    Duration(120 * time.Second),
			MaxRetries: 4,
			Tools:      &t,
		},
		Sandbox: Sandbox{
			Memory:    "1g",
			CPUs:      2,
			Pids:      256,
			Timeout:   Duration(120 * time.Second),
			OutputCap: "1m",
		},
		Agent: Agent{
			MaxIterations: 6,
			TokenBudget:   400000,
			WallBudget:    Duration(15 * time.Minute),
			MaxMalformed:  3,
			ContextTokens: 24000,
			NarrowMin:     Duration(5 * time.Second),
		},
		Memory: Memory{Enabled: &t, K: 3, Threshold: 0.5, Cap: 5000, Embedder: "local"},
		Server: Server{IdleTimeout: Duration(10 * time.Minute)},
	}
	c.DataDir = defaultDataDir(getenv)
	return c
}

func defaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "fixpoint")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "fixpoint")
}

// ParseSize parses "512m", "1g", "64k" or a byte count.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "b"), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 512m, 1g)", s)
	}
	return n * mult, nil
}
