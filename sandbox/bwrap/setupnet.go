package bwrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The setup step's network. With slirp4netns on PATH the step gets its
// own network namespace whose only way out is slirp4netns, started with
// --disable-host-loopback: it reaches the internet and the host's other
// addresses, as a docker bridge does, but nothing listening on the
// host's loopback. Without slirp4netns, or when the user's proxy or
// registry variables name a server on the host's loopback (which the
// step must reach), the step shares the host's network namespace, and
// SECURITY.md says what that leaves open.

// loopbackVarRe lists the variables whose URL the step must reach.
var setupURLVars = []string{"http_proxy", "https_proxy", "all_proxy", "pip_index_url", "pip_extra_index_url",
	"pip_find_links", "npm_config_registry", "goproxy"}

// needsHostLoopback reports whether a proxy or registry variable in env
// names a server on the host's loopback.
func needsHostLoopback(env []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		found := false
		for _, name := range setupURLVars {
			if strings.EqualFold(k, name) {
				found = true
			}
		}
		if !found {
			continue
		}
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
			if !strings.Contains(part, "://") {
				part = "http://" + part
			}
			u, err := url.Parse(part)
			if err != nil {
				continue
			}
			h := strings.ToLower(u.Hostname())
			if h == "localhost" || strings.HasSuffix(h, ".localhost") {
				return true
			}
			if ip := net.ParseIP(h); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
				return true
			}
		}
	}
	return false
}

// slirpNet is a started slirp4netns giving one bwrap sandbox its network.
type slirpNet struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startSlirp connects the sandbox bwrap started to a slirp4netns
// without host loopback. info and block are bwrap's --info-fd and
// --block-fd: while bwrap blocks, the sandbox's user namespace is still
// the one that owns its network namespace (bwrap may nest another before
// the command runs), so both are opened then. started and goAhead are
// slirpWait's pipes: slirp4netns starts once the command runs (bwrap has
// configured the loopback, which slirp4netns must not race) and the
// script waits for it. On error the caller kills bwrap.
func startSlirp(slirp string, info, block, started, goAhead *os.File) (*slirpNet, error) {
	var st struct {
		Pid int `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&st); err != nil || st.Pid <= 0 {
		return nil, fmt.Errorf("read the sandbox's pid from bwrap: %v", err)
	}
	pid := strconv.Itoa(st.Pid)
	userns, err := os.Open("/proc/" + pid + "/ns/user")
	if err != nil {
		return nil, err
	}
	defer userns.Close()
	netns, err := os.Open("/proc/" + pid + "/ns/net")
	if err != nil {
		return nil, err
	}
	defer netns.Close()
	if _, err := block.Write([]byte{1}); err != nil {
		return nil, fmt.Errorf("release bwrap: %w", err)
	}
	if _, err := started.Read(make([]byte, 1)); err != nil {
		return nil, fmt.Errorf("the sandbox did not start: %v", err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer readyR.Close()
	s := &slirpNet{}
	s.cmd = exec.Command(slirp, "--configure", "--mtu=65520", "--disable-host-loopback", "--ready-fd=5",
		"--userns-path=/proc/self/fd/3", "--netns-type=path", "/proc/self/fd/4", "tap0")
	s.cmd.ExtraFiles = []*os.File{userns, netns, readyW}
	s.cmd.Stdout, s.cmd.Stderr = &s.stderr, &s.stderr
	err = s.cmd.Start()
	readyW.Close()
	if err != nil {
		return nil, fmt.Errorf("start slirp4netns: %w", err)
	}
	ready := make(chan error, 1)
	go func() { // ends when slirp4netns writes its ready byte or exits (the pipe closes)
		b := make([]byte, 1)
		_, err := readyR.Read(b)
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = errors.New("not ready after 30 s")
	}
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("slirp4netns: %v: %s", err, strings.TrimSpace(s.stderr.String()))
	}
	if _, err := goAhead.Write([]byte("go\n")); err != nil {
		s.stop()
		return nil, fmt.Errorf("release the setup script: %w", err)
	}
	return s, nil
}

// stop ends slirp4netns (the sandbox has ended or is being killed).
func (s *slirpNet) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// resolvConf writes the resolv.conf of a slirp4netns sandbox (its DNS
// forwarder) under dir and returns its path.
func resolvConf(dir string) (string, error) {
	f, err := os.CreateTemp(dir, "fixpoint-resolv-")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString("nameserver 10.0.2.3\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	return f.Name(), err
}
