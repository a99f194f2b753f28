package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/client"
)

// VolumeGroup is a set of cache volumes removed together: one volume, or
// a dependency setup's caches with their "done" marker (a marker without
// its caches would make the next setup mount volumes that are gone).
type VolumeGroup struct {
	Names   []string
	Kind    string // the fixpoint.cache label: deps, gocache, gomodcache, toolchaincache, ...
	Size    int64  // bytes, as the engine counts them (-1 unknown)
	Created time.Time
	InUse   bool // a container (a running session) mounts one of them
}

// PruneReport is what PruneCacheVolumes did.
type PruneReport struct {
	Removed, KeptInUse []VolumeGroup
	Before, After      int64
}

// PruneCacheVolumes removes fixpoint's cache volumes (those labelled
// fixpoint.cache: dependency installs, Go build caches, runner caches,
// host cache and toolchain copies, old supervisors) that no container
// uses, oldest first, until the rest take at most max bytes (0: every
// one not in use). The supervisor of this build is kept (a session
// starting now would miss it); a volume a container mounts is kept and
// reported. Every session recreates what it needs.
func PruneCacheVolumes(ctx context.Context, cli *client.Client, max int64) (PruneReport, error) {
	var rep PruneReport
	du, err := cli.DiskUsage(ctx, types.DiskUsageOptions{Types: []types.DiskUsageObject{types.VolumeObject}})
	if err != nil {
		return rep, fmt.Errorf("docker volume sizes: %w", err)
	}
	groups := map[string]*VolumeGroup{}
	var order []*VolumeGroup
	keep := "fixpoint-supervisor-" + supervisorID()[:16]
	for _, v := range du.Volumes {
		if v == nil || v.Labels[LabelCache] == "" || v.Name == keep || !pruneMatch(v.Labels) {
			continue
		}
		key := "v\x00" + v.Name
		if k := v.Labels[labelSetupKey]; k != "" && v.Labels[LabelCache] == cacheKindDeps {
			key = "s\x00" + k
		}
		g := groups[key]
		if g == nil {
			g = &VolumeGroup{Kind: v.Labels[LabelCache]}
			groups[key] = g
			order = append(order, g)
		}
		// The marker goes first: a setup then never trusts a half-removed
		// group.
		if v.Labels[labelSetupDone] != "" {
			g.Names = append([]string{v.Name}, g.Names...)
		} else {
			g.Names = append(g.Names, v.Name)
		}
		if c, err := time.Parse(time.RFC3339Nano, v.CreatedAt); err == nil && (g.Created.IsZero() || c.After(g.Created)) {
			g.Created = c // a group is as new as its newest volume
		}
		if v.UsageData != nil {
			if v.UsageData.RefCount > 0 {
				g.InUse = true
			}
			if v.UsageData.Size > 0 {
				g.Size += v.UsageData.Size
			}
		}
	}
	for _, g := range order {
		rep.Before += g.Size
	}
	rep.After = rep.Before
	sort.SliceStable(order, func(i, j int) bool { return order[i].Created.Before(order[j].Created) })
	var errs []error
	for _, g := range order {
		if rep.After <= max && max > 0 {
			break
		}
		if g.InUse {
			rep.KeptInUse = append(rep.KeptInUse, *g)
			continue
		}
		removed := true
		for _, name := range g.Names {
			if err := cli.VolumeRemove(ctx, name, false); err != nil && !strings.Contains(strings.ToLower(err.Error()), "no such volume") {
				errs = append(errs, fmt.Errorf("remove volume %s: %w", name, err))
				removed = false
			}
		}
		if removed {
			rep.Removed = append(rep.Removed, *g)
			rep.After -= g.Size
		}
	}
	return rep, errors.Join(errs...)
}

// pruneMatch narrows PruneCacheVolumes to some volumes (tests, on an
// engine other work shares).
var pruneMatch = func(map[string]string) bool { return true }
