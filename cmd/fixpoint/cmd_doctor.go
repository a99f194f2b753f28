package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail, info, skip
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func doctorCommand() *command {
	c := &command{
		name:    "doctor",
		summary: "check the Docker engine, runsc, bwrap, images, the Kubernetes cluster, model endpoint and data dir",
		usage: `Usage: fixpoint doctor [--dir D] [--json]

Prints one line per check, with a fix for each failure. Exits 1 when
something fixpoint needs is missing: no sandbox at all (neither a Docker
engine nor bwrap), an unwritable data dir, an unreachable configured
model endpoint, or a runtime version the project requires that the
sandbox cannot provide. For the workspace (--dir) it shows the runtime
version the project requires, next to what the sandbox has, and the
dependency setup step with the state of its cache.
Example:
  fixpoint doctor --json`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		dir := fs.String("dir", ".", "workspace whose .fixpoint.toml, runtime requirement and dependencies are checked")
		asJSON := fs.Bool("json", false, "print the checks as JSON")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		root, err := workspaceDir(*dir)
		if err != nil {
			return a.fail(err)
		}
		cfg, err := a.loadConfig(root, nil)
		if err != nil {
			return a.fail(err)
		}
		checks, healthy := runDoctor(ctx, a, cfg)
		proj, projOK := checkProject(ctx, cfg, root)
		checks = append(checks, proj...)
		healthy = healthy && projOK
		if *asJSON {
			enc := json.NewEncoder(termsafe.JSONWriter{W: a.stdout})
			enc.SetIndent("", "  ")
			enc.Encode(struct {
				OK     bool    `json:"ok"`
				Checks []check `json:"checks"`
			}{healthy, checks})
		} else {
			for _, ch := range checks {
				// A detail may quote the project's files (doctor_project.go).
				line := fmt.Sprintf("%-4s  %-24s %s", strings.ToUpper(ch.Status), ch.Name, termsafe.Strip(ch.Detail))
				if ch.Fix != "" {
					line += " (fix: " + termsafe.Strip(ch.Fix) + ")"
				}
				fmt.Fprintln(a.stdout, line)
			}
		}
		if !healthy {
			return exitNotReached
		}
		return exitOK
	}
	return c
}

// runDoctor runs every check. healthy is false when the user cannot work:
// no sandbox backend, unwritable data dir, or a configured model endpoint
// that does not answer.
func runDoctor(ctx context.Context, a *app, cfg *config.Config) (checks []check, healthy bool) {
	healthy = true
	cli, engine := checkEngine(ctx)
	checks = append(checks, engine)
	engineOK := engine.Status == "ok"
	if cli != nil {
		defer cli.Close()
	}

	bw := checkBwrap(ctx)
	checks = append(checks, bw)
	switch {
	case !engineOK && bw.Status != "ok":
		healthy = false // no sandbox at all
	case !engineOK && engine.Status == "fail":
		checks[0].Status = "warn" // bwrap takes over
	}
	if engineOK {
		checks = append(checks, checkRunsc(ctx, cli))
		checks = append(checks, checkImages(ctx, a, cli, cfg)...)
	} else {
		checks = append(checks,
			check{Name: "runsc (gVisor)", Status: "skip", Detail: "no Docker engine"},
			check{Name: "images", Status: "skip", Detail: "no Docker engine (the bwrap sandbox uses the host's tools)"})
	}
	if cfg.Sandbox.Backend == config.BackendKubernetes {
		k := checkKubernetes(ctx, cfg)
		checks = append(checks, k)
		if k.Status == "fail" {
			healthy = false // the user chose it: no fallback
		}
	}
	m := checkModel(ctx, cfg)
	checks = append(checks, m)
	if m.Status == "fail" {
		healthy = false
	}
	d := checkDataDir(cfg.DataDir)
	checks = append(checks, d)
	if d.Status == "fail" {
		healthy = false
	}
	return checks, healthy
}

func checkEngine(ctx context.Context) (*client.Client, check) {
	ch := check{Name: "docker engine"}
	cli, err := engine.NewClient()
	if err != nil {
		ch.Status, ch.Detail, ch.Fix = "fail", err.Error(), "check DOCKER_HOST (unix://, tcp:// with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, or ssh://) or CONTAINER_HOST"
		return nil, ch
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		cli.Close()
		ch.Status, ch.Detail = "fail", "not answering at "+cli.DaemonHost()
		ch.Fix = "install and start it: `sudo apt-get install docker.io && sudo systemctl enable --now docker`, then `sudo usermod -aG docker $USER` and log in again (other systems: Docker Engine or Docker Desktop); without it fixpoint uses bwrap (set sandbox = \"bwrap\" to choose it)"
		return nil, ch
	}
	// Podman's Docker-compatible API names itself in the version
	// response; it is its own engine, with its own differences (README,
	// "Remote and rootless engines").
	if engine.Kind(v) == "podman" {
		ch.Name = "podman engine"
	}
	ch.Status, ch.Detail = "ok", fmt.Sprintf("%s (API %s) at %s", v.Version, cli.ClientVersion(), cli.DaemonHost())
	if engine.RootlessNoLimits(ctx, cli) {
		ch.Status = "warn"
		ch.Detail += ": rootless on cgroups v1, so the sandbox's memory, pids and CPU limits are not applied (timeouts and rlimits still are)"
		ch.Fix = "boot with cgroups v2 (systemd.unified_cgroup_hierarchy=1) and delegate the memory, pids and cpu controllers to the user, or use a rootful engine"
	}
	return cli, ch
}

// checkKubernetes reads the cluster sandbox.backend = "kubernetes" uses:
// reachable, namespace, runtime class, nodes.
func checkKubernetes(ctx context.Context, cfg *config.Config) check {
	ch := check{Name: "kubernetes cluster"}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	d, err := kubernetes.Diagnose(ctx, *backends.KubernetesOptions(cfg, nil, nil))
	if err != nil {
		ch.Status, ch.Detail = "fail", oneLine(err.Error())
		ch.Fix = "point sandbox.kubernetes.kubeconfig (or KUBECONFIG) at a kubeconfig whose cluster answers (`kubectl version` with it), or choose another sandbox.backend"
		return ch
	}
	nodes := "nodes: not visible to this user"
	if d.Nodes >= 0 {
		nodes = fmt.Sprintf("%d nodes, %d Ready", d.Nodes, d.ReadyNodes)
	}
	ch.Status = "ok"
	ch.Detail = fmt.Sprintf("%s %s (kubeconfig %s), namespace %s, runtime class %s, %s, NetworkPolicy %s, dependency caches: %s, images: %s",
		d.Server, d.Version, d.Source, d.Namespace, orDash(d.RuntimeClass), nodes, d.Policy, d.CacheStorage, d.Images)
	if !d.ImagesOK {
		ch.Status, ch.Fix = "warn", "sandbox pods cannot start: run `fixpoint sandbox images push "+cfg.Sandbox.Kubernetes.ImageRegistry+"` and put the image_tags it prints in your user config"
	}
	if !d.CacheOK && d.ImagesOK {
		// Projects without a setup step still run.
		ch.Status, ch.Fix = "warn", "projects whose dependencies are installed before tests (go.mod requirements, package-lock.json, requirements.txt) cannot be set up: set sandbox.kubernetes.cache_storage_class to a StorageClass that `kubectl get storageclass` lists"
	}
	if d.Nodes >= 0 && d.ReadyNodes == 0 {
		ch.Status, ch.Fix = "fail", "no node is Ready: sandbox pods cannot start; check the kubelets"
	}
	return ch
}

func checkBwrap(ctx context.Context) check {
	ch := check{Name: "bwrap"}
	b, err := bwrap.New(nil)
	if err != nil {
		ch.Status, ch.Detail, ch.Fix = "warn", "not installed", "apt-get install bubblewrap"
		return ch
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Check(ctx); err != nil {
		ch.Status, ch.Detail = "warn", "cannot start a sandbox: "+oneLine(err.Error())
		ch.Fix = "allow unprivileged user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1`"
		return ch
	}
	ch.Status, ch.Detail = "ok", "starts a sandbox (user, pid, net namespaces)"
	return ch
}

// checkRunsc starts a tiny container with runtime runsc when an image
// exists; otherwise it only checks that the runtime is registered.
func checkRunsc(ctx context.Context, cli *client.Client) check {
	ch := check{Name: "runsc (gVisor)"}
	info, err := cli.Info(ctx)
	if err != nil {
		ch.Status, ch.Detail = "warn", "engine info: "+oneLine(err.Error())
		return ch
	}
	if _, ok := info.Runtimes["runsc"]; !ok {
		ch.Status, ch.Detail = "warn", "runtime not registered with the engine (optional; runc is used)"
		ch.Fix = "build the pinned gVisor with `sudo .ci/runsc-install` (or apt-get install runsc, slower), then `sudo .ci/docker-up` registers it in /etc/docker/daemon.json"
		return ch
	}
	var img string
	for _, l := range registry.Names() {
		if _, err := cli.ImageInspect(ctx, image.ImageName(l)); err == nil {
			img = image.ImageName(l)
			break
		}
	}
	if img == "" {
		ch.Status, ch.Detail = "warn", "registered, but not tried: no sandbox image to start"
		ch.Fix = "fixpoint sandbox images build --lang " + exampleLang()
		return ch
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := runTiny(ctx, cli, img, "runsc"); err != nil {
		ch.Status, ch.Detail = "warn", "registered but cannot start a container: "+oneLine(err.Error())
		ch.Fix = `runsc needs "runtimeArgs": ["--network=none", "--platform=systrap"] in /etc/docker/daemon.json (Debian's runsc: ["--network=none"]); sudo .ci/docker-up writes them and reloads dockerd`
		return ch
	}
	ch.Status, ch.Detail = "ok", "started `true` in "+img+" under runsc"
	return ch
}

func runTiny(ctx context.Context, cli *client.Client, img, runtime string) error {
	created, err := cli.ContainerCreate(ctx,
		&container.Config{Image: img, Cmd: []string{"true"}, Labels: docker.OwnerLabels("doctor", map[string]string{"fixpoint.component": "doctor"})},
		&container.HostConfig{Runtime: runtime, NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return err
	}
	defer cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	waitC, errC := cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return err
	}
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			return fmt.Errorf("`true` exited %d", w.StatusCode)
		}
		return nil
	case err := <-errC:
		return err
	}
}

func checkImages(ctx context.Context, a *app, cli *client.Client, cfg *config.Config) []check {
	var out []check
	b, err := image.NewBuilder(&image.Options{Client: cli, CacheDir: image.DefaultCacheDir(a.getenv)})
	if err != nil {
		return []check{{Name: "images", Status: "warn", Detail: err.Error()}}
	}
	for _, l := range registry.All() {
		name := image.ImageName(l.Name())
		ch := check{Name: name}
		fix := "fixpoint sandbox images build --lang " + l.Name()
		st, err := b.Status(ctx, l)
		switch {
		case err != nil:
			ch.Status, ch.Detail = "warn", oneLine(err.Error())
		case !st.Present:
			ch.Status, ch.Detail, ch.Fix = "warn", "missing", fix
		case !st.UpToDate:
			ch.Status, ch.Detail, ch.Fix = "warn", fmt.Sprintf("present but outdated (recipe %s, current %s)", orDash(st.Have), st.Want), fix
		default:
			ch.Status, ch.Detail = "ok", fmt.Sprintf("up to date (recipe %s, %d MB)", st.Want, st.Size>>20)
		}
		out = append(out, ch)
	}
	if img := cfg.Sandbox.Image; img != "" {
		ch := check{Name: "image " + img}
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			ch.Status, ch.Detail, ch.Fix = "fail", "configured (sandbox.image) but missing", "docker pull "+img+", or unset sandbox.image / FIXPOINT_IMAGE"
		} else {
			ch.Status, ch.Detail = "ok", "configured (sandbox.image) and present"
		}
		out = append(out, ch)
	}
	return out
}

func checkModel(ctx context.Context, cfg *config.Config) check {
	ch := check{Name: "model endpoint"}
	if !cfg.Model.Configured() {
		ch.Status = "info"
		ch.Detail = "none configured; the demo uses the bundled scripted model (set FIXPOINT_BASE_URL, FIXPOINT_API_KEY, FIXPOINT_MODEL to use a real one)"
		return ch
	}
	url := strings.TrimRight(cfg.Model.BaseURL, "/") + "/models"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		ch.Status, ch.Detail, ch.Fix = "fail", "bad base URL: "+oneLine(err.Error()), "fix FIXPOINT_BASE_URL (model.base_url)"
		return ch
	}
	if cfg.Model.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Model.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		ch.Status, ch.Detail = "fail", "GET "+url+": unreachable ("+oneLine(err.Error())+")"
		ch.Fix = "check FIXPOINT_BASE_URL (model.base_url) and that the server runs"
		return ch
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		ch.Status, ch.Detail, ch.Fix = "fail", fmt.Sprintf("GET %s: %s (key rejected)", url, resp.Status), "check FIXPOINT_API_KEY (model.api_key)"
	case resp.StatusCode >= 300:
		ch.Status, ch.Detail, ch.Fix = "fail", fmt.Sprintf("GET %s: %s", url, resp.Status), "check FIXPOINT_BASE_URL (model.base_url); it should end in /v1 for most servers"
	default:
		ch.Status = "ok"
		ch.Detail = fmt.Sprintf("%s answers", cfg.Model.BaseURL)
		if json.Unmarshal(body, &list) == nil && len(list.Data) > 0 {
			found := false
			for _, m := range list.Data {
				found = found || m.ID == cfg.Model.Name
			}
			ch.Detail += fmt.Sprintf(" (%d models", len(list.Data))
			if found {
				ch.Detail += ", " + cfg.Model.Name + " among them)"
			} else {
				ch.Status = "warn"
				ch.Detail += ", " + cfg.Model.Name + " not listed)"
				ch.Fix = "check FIXPOINT_MODEL (model.name)"
			}
		}
	}
	return ch
}

func checkDataDir(dir string) check {
	ch := check{Name: "data dir"}
	fail := func(err error) check {
		ch.Status, ch.Detail = "fail", dir+": not writable ("+oneLine(err.Error())+")"
		ch.Fix = "set FIXPOINT_DATA_DIR (data_dir) to a writable directory"
		return ch
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return fail(err)
	}
	name := f.Name()
	_, werr := f.WriteString("ok")
	f.Close()
	os.Remove(name)
	if werr != nil {
		return fail(werr)
	}
	ch.Status, ch.Detail = "ok", filepath.Clean(dir)+" is writable"
	return ch
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
