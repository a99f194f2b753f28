package sandboxbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
)

// runscVariantPrefix starts the mode of each gVisor variant: mode
// "fixpoint-runsc-<name>" runs fixpoint's docker backend on the engine
// runtime "runsc-<name>" (.ci/docker-up registers one per runsc
// configuration worth comparing, each with its own runtimeArgs).
const runscVariantPrefix = "fixpoint-"

// RunscVariantModes returns one mode per gVisor variant runtime the engine
// has ("runsc-<name>", not "runsc" itself, which ModeFixpointRunsc
// measures), sorted by name. No client or no answer gives none.
func RunscVariantModes(ctx context.Context, cli *client.Client) []string {
	if cli == nil {
		return nil
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return nil
	}
	var modes []string
	for name := range info.Runtimes {
		if name != "runsc" && docker.IsGVisor(name) {
			modes = append(modes, runscVariantPrefix+name)
		}
	}
	slices.Sort(modes)
	return modes
}

// variantRuntime returns the engine runtime of a gVisor variant mode.
func variantRuntime(mode string) (string, bool) {
	rt, ok := strings.CutPrefix(mode, runscVariantPrefix)
	if !ok || rt == "runsc" || !docker.IsGVisor(rt) {
		return "", false
	}
	return rt, true
}

// newVariantRunner runs fixpoint's docker backend on a gVisor variant.
func newVariantRunner(ctx context.Context, o *Options, runtime string) (runner, error) {
	if o.Client == nil {
		return nil, errors.New("no Docker client")
	}
	if _, err := o.Client.ImageInspect(ctx, o.Image); err != nil {
		return nil, fmt.Errorf("image %s: %w", o.Image, err)
	}
	return newFixpointRunner(ctx, o, runtime)
}
