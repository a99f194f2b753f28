package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// sandboxImagesPush tags fixpoint's local sandbox images as
// REGISTRY/fixpoint-sandbox-LANG:<recipe hash>, pushes them through the
// Docker (or Podman) engine and prints the [sandbox.kubernetes] setting
// that makes the kubernetes backend's pods use them, pinned by digest.
func sandboxImagesPush(ctx context.Context, a *app, args []string) int {
	c := &command{name: "sandbox images push", usage: `Usage: fixpoint sandbox images push REGISTRY [--lang ` + langChoices() + `]

Tags each local fixpoint-sandbox-<lang> image as
REGISTRY/fixpoint-sandbox-<lang>:<recipe hash> and pushes it through the
Docker (or Podman) engine, then prints the [sandbox.kubernetes] setting to put
in your user configuration: the kubernetes backend's pods then pull the images
from REGISTRY, pinned by the manifest digest the registry returned.
REGISTRY is a host with an optional port and path, without a scheme.
Credentials: FIXPOINT_REGISTRY_AUTH=USER:PASSWORD (or USER:TOKEN) when set,
else what ` + "`docker login REGISTRY`" + ` (or podman login) stored; never a workspace file.
Example:
  fixpoint sandbox images push registry.example.com/team --lang python`}
	fs := newFlags(c, a.stderr)
	langFlag := fs.String("lang", "all", strings.Join(registry.Names(), ", ")+" or all (the images built locally)")
	var reg string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		reg, args = args[0], args[1:]
	}
	if done, code := parseFlags(fs, args); done {
		return code
	}
	if reg == "" && fs.NArg() == 1 {
		reg = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return a.fail(usagef("sandbox images push: unexpected argument %q", fs.Arg(0)))
	}
	if reg == "" {
		return a.fail(usagef("sandbox images push: give the REGISTRY (registry.example.com/team, 127.0.0.1:5000)"))
	}
	reg = strings.TrimSuffix(reg, "/")
	if err := image.ValidateRegistry(reg); err != nil {
		return a.fail(usagef("sandbox images push: %v", err))
	}
	langs := registry.All()
	if *langFlag != "all" {
		l := registry.ByName(*langFlag)
		if l == nil {
			return a.fail(usagef("--lang %s: want %s or all", *langFlag, strings.Join(registry.Names(), ", ")))
		}
		langs = []lang.Language{l}
	}
	cli, err := engine.NewClient()
	if err != nil {
		fmt.Fprintf(a.stderr, "fixpoint: %v\n", errNoEngine)
		return exitUsage
	}
	defer cli.Close()
	if err := requireEngine(ctx); err != nil {
		fmt.Fprintf(a.stderr, "fixpoint: %v\n", err)
		return exitUsage
	}
	host := image.RegistryHost(reg)
	auth, source, err := image.RegistryAuth(ctx, host, a.getenv)
	if err != nil {
		return a.fail(fmt.Errorf("registry credentials for %s: %w", host, err))
	}
	fmt.Fprintf(a.stderr, "pushing to %s (credentials: %s)\n", reg, source)
	progress := termsafe.Writer{W: a.stderr} // the registry's words reach the terminal
	tags := map[string]string{}
	var missing []string
	for _, l := range langs {
		name := image.ImageName(l.Name())
		if _, err := cli.ImageInspect(ctx, name); err != nil {
			missing = append(missing, l.Name())
			continue
		}
		fmt.Fprintf(a.stderr, "%s:\n", name)
		p, err := image.Push(ctx, cli, name, reg, auth, progress)
		if err != nil {
			if ctx.Err() != nil {
				return exitSIGINT
			}
			return a.fail(fmt.Errorf("%w; check that %s accepts pushes from this engine (`docker login %s`, or FIXPOINT_REGISTRY_AUTH)", err, host, host))
		}
		fmt.Fprintf(a.stderr, "%s -> %s@%s\n", name, p.Remote, p.Digest)
		tags[l.Name()] = p.Pinned()
	}
	if len(tags) == 0 {
		fmt.Fprintf(a.stderr, "fixpoint: no sandbox image to push: build them first with `fixpoint sandbox images build --lang %s`\n", *langFlag)
		return exitUsage
	}
	if len(missing) > 0 && *langFlag == "all" {
		fmt.Fprintf(a.stderr, "not built here, not pushed: %s (`fixpoint sandbox images build --lang LANG`, then push again)\n", strings.Join(missing, ", "))
	}
	fmt.Fprint(a.stdout, kubernetesImageSetting(reg, tags))
	return exitOK
}

// kubernetesImageSetting is the user-config snippet that points the
// kubernetes backend at the pushed images.
func kubernetesImageSetting(reg string, tags map[string]string) string {
	var b strings.Builder
	b.WriteString("# Add to your user configuration (~/.config/fixpoint/config.toml), not to a workspace .fixpoint.toml:\n")
	b.WriteString("[sandbox.kubernetes]\n")
	fmt.Fprintf(&b, "image_registry = %q\n", reg)
	b.WriteString("image_pull_policy = \"IfNotPresent\"\n")
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, fmt.Sprintf("%s = %q", k, tags[k]))
	}
	fmt.Fprintf(&b, "image_tags = { %s }\n", strings.Join(kv, ", "))
	return b.String()
}
