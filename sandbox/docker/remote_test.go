package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// remoteEngine is a second dockerd on this machine, reachable only over TLS
// on 127.0.0.1 (plus a private unix socket nobody uses): its own data root,
// exec root, pidfile, containerd and config file, no bridge and no iptables
// rules, so the main engine is not disturbed.
type remoteEngine struct {
	Host    string // tcp://127.0.0.1:PORT
	CertDir string // DOCKER_CERT_PATH for a client: ca.pem, cert.pem, key.pem
	Dir     string
}

// startRemoteEngine starts the second engine and stops it and removes its
// directories at cleanup (SIGTERM, then SIGKILL after 20 s).
func startRemoteEngine(t *testing.T) *remoteEngine {
	t.Helper()
	dockerd := sandboxtest.RequireCommand(t, "dockerd")
	if os.Geteuid() != 0 {
		if sandboxtest.InCI() {
			t.Fatal("a second dockerd needs root; CI runs as root")
		}
		t.Skip("a second dockerd needs root")
	}
	// Short path: the unix socket's path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "fpe2-")
	if err != nil {
		t.Fatal(err)
	}
	e := &remoteEngine{Dir: dir, CertDir: filepath.Join(dir, "client")}
	srv := filepath.Join(dir, "server")
	for _, d := range []string{e.CertDir, srv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeCerts(t, srv, e.CertDir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	e.Host = "tcp://127.0.0.1:" + strconv.Itoa(port)
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A bridge of its own: dockerd with --bridge=none deletes the
	// interface named docker0, and interfaces are host-wide, so the main
	// engine would lose its default bridge (the setup containers need it).
	bridge := fmt.Sprintf("fpe2-%d", os.Getpid()%100000)
	if out, err := exec.Command("ip", "link", "add", "name", bridge, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("create the second engine's bridge %s: %v: %s", bridge, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "link", "delete", bridge).Run() })
	_, hadDocker0 := net.InterfaceByName("docker0")
	t.Cleanup(func() {
		if _, err := net.InterfaceByName("docker0"); hadDocker0 == nil && err != nil {
			t.Errorf("the main engine's docker0 is gone after the second engine ran: %v", err)
		}
	})
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dockerd,
		"--config-file", filepath.Join(dir, "daemon.json"),
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--containerd-namespace", "fixpoint-e2",
		"--containerd-plugins-namespace", "fixpoint-e2-plugins",
		"-H", "unix://"+filepath.Join(dir, "d.sock"),
		"-H", e.Host,
		"--tlsverify",
		"--tlscacert", filepath.Join(srv, "ca.pem"),
		"--tlscert", filepath.Join(srv, "cert.pem"),
		"--tlskey", filepath.Join(srv, "key.pem"),
		"--bridge="+bridge, "--iptables=false", "--ip-masq=false", "--userland-proxy=false",
		"--log-level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		// dockerd's own containerd stops with it; kill it if it did not.
		if b, err := os.ReadFile(filepath.Join(dir, "exec", "containerd", "containerd.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		logf.Close()
		unmountUnder(dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the second engine's directory: %v", err)
		}
	})
	t.Setenv("DOCKER_CERT_PATH", e.CertDir)
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	deadline := time.Now().Add(60 * time.Second)
	for {
		cli, err := engine.ForHost(e.Host)
		if err == nil {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			_, err = cli.Ping(ctx)
			cancel()
			cli.Close()
		}
		if err == nil {
			return e
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			t.Fatalf("second dockerd exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			t.Fatalf("second dockerd does not answer at %s: %v\n%s", e.Host, err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unmountUnder detaches every mount below dir (left by a killed dockerd).
func unmountUnder(dir string) {
	// A path can carry stacked mounts (Podman's store makes its overlay
	// directory a mount of its own, and may do it again): unmount until
	// mountinfo lists nothing under dir, a bounded number of passes.
	for range 8 {
		b, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return
		}
		var mnts []string
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				mnts = append(mnts, f[4])
			}
		}
		if len(mnts) == 0 {
			return
		}
		for i := len(mnts) - 1; i >= 0; i-- {
			syscall.Unmount(mnts[i], syscall.MNT_DETACH)
		}
	}
}

// writeCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, in the file names dockerd and DOCKER_CERT_PATH expect.
func writeCerts(t *testing.T, serverDir, clientDir string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fixpoint test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(dir string, certDER []byte, key *ecdsa.PrivateKey) {
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{
			"ca.pem":   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
			"cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}),
			"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	sDER, sKey := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	write(serverDir, sDER, sKey)
	cDER, cKey := leaf(3, "fixpoint client", x509.ExtKeyUsageClientAuth, nil)
	write(clientDir, cDER, cKey)
}

// TestRemoteEngineTLS runs a whole session on a second engine reached only
// through DOCKER_HOST=tcp:// with TLS: the image gets there through the API
// (ImageSave from the main engine, ImageLoad, then ImageBuild of a derived
// image carrying a Go build cache), files go in by Sync, results come back
// by Run and ReadFile, no bind mount is used, the Go build cache volume is
// created on that engine, and Reap removes a dead owner's container there.
func TestRemoteEngineTLS(t *testing.T) {
	local := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, local, testImage)
	t0 := time.Now()
	e := startRemoteEngine(t)
	ctx := t.Context()
	t.Logf("second engine up at %s in %v", e.Host, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()

	// DOCKER_HOST is what a user sets; NewClient must pick up the TLS files.
	t.Setenv("DOCKER_HOST", e.Host)
	cli, err := engine.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx); err != nil {
		t.Fatalf("ping %s over TLS: %v", e.Host, err)
	}
	// Without a client certificate the engine refuses the connection.
	t.Run("refuses a client without certificate", func(t *testing.T) {
		plain, err := client.NewClientWithOpts(client.WithHost(e.Host), client.WithAPIVersionNegotiation())
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if _, err := plain.Ping(ctx); err == nil {
			t.Fatal("ping without TLS succeeded; the engine must require a client certificate")
		}
	})

	// The image: saved from the main engine, loaded through the API.
	rc, err := local.ImageSave(ctx, []string{testImage})
	if err != nil {
		t.Fatalf("ImageSave %s: %v", testImage, err)
	}
	resp, err := cli.ImageLoad(ctx, rc)
	rc.Close()
	if err != nil {
		t.Fatalf("ImageLoad on %s: %v", e.Host, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	t.Logf("image %s saved and loaded through the API in %v", testImage, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()

	// A derived image built on the remote engine: it names a prebuilt Go
	// build cache directory, so sessions get a cache volume there.
	const derived = "fixpoint-e2e-remote"
	var bctx bytes.Buffer
	tw := tar.NewWriter(&bctx)
	for name, data := range map[string]string{
		"Dockerfile": "FROM " + testImage + "\nLABEL fixpoint.gocache=/opt/gocache\nCOPY marker /opt/gocache/marker\n",
		"marker":     "prebuilt cache\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))})
		tw.Write([]byte(data))
	}
	tw.Close()
	br, err := cli.ImageBuild(ctx, &bctx, build.ImageBuildOptions{
		Tags: []string{derived}, Remove: true, ForceRemove: true, NetworkMode: "none", Version: build.BuilderV1,
	})
	if err != nil {
		t.Fatalf("ImageBuild on %s: %v", e.Host, err)
	}
	if err := jsonmessage.DisplayJSONMessagesStream(br.Body, io.Discard, 0, false, nil); err != nil {
		t.Fatalf("ImageBuild on %s: %v", e.Host, err)
	}
	br.Body.Close()

	b, err := docker.New(ctx, &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New on %s: %v", e.Host, err)
	}
	defer b.Close()
	sess, err := b.Start(ctx, sandbox.Spec{Image: derived, Labels: map[string]string{docker.LabelProject: "remote-e2e"}})
	if err != nil {
		t.Fatalf("Start on %s: %v", e.Host, err)
	}
	s := sess.(*docker.Session)
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	t.Logf("derived image built and session started in %v", time.Since(t0).Round(time.Millisecond))
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"calc.py":      {Data: []byte("def add(a, b):\n    return a + b\n")},
		"test_calc.py": {Data: []byte("from calc import add\nassert add(2, 3) == 5\nopen('result.txt', 'w').write('passed')\nprint('ok')\n")},
	}}
	if st, err := s.Sync(ctx, snap); err != nil {
		t.Fatalf("Sync: %v", err)
	} else if st.Written != 2 {
		t.Errorf("Sync wrote %d files, want 2", st.Written)
	}
	for _, tc := range []struct {
		args       []string
		wantStdout string
	}{
		{[]string{"python3", "test_calc.py"}, "ok\n"},
		{[]string{"cat", "/opt/gocache/marker"}, "prebuilt cache\n"},
	} {
		res, err := s.Run(ctx, sandbox.Command{Args: tc.args, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
		if err != nil || res.ExitCode != 0 || string(res.Stdout) != tc.wantStdout {
			t.Fatalf("Run(%q) on the remote engine = %+v, %v; want exit 0 and %q", tc.args, res, err, tc.wantStdout)
		}
	}
	if got, err := s.ReadFile(ctx, "result.txt"); err != nil || string(got) != "passed" {
		t.Errorf("ReadFile(result.txt) = %q, %v; want \"passed\"", got, err)
	}

	// No bind mounts: everything the container mounts is a volume or tmpfs.
	info, err := cli.ContainerInspect(ctx, s.ContainerID())
	if err != nil {
		t.Fatal(err)
	}
	if len(info.HostConfig.Binds) != 0 {
		t.Errorf("container uses binds %q", info.HostConfig.Binds)
	}
	var cacheVol string
	for _, m := range info.Mounts {
		if m.Type == "bind" {
			t.Errorf("container has a bind mount %s -> %s", m.Source, m.Destination)
		}
		if m.Destination == "/opt/gocache" {
			cacheVol = m.Name
		}
	}
	if !strings.HasPrefix(cacheVol, "fixpoint-gocache-") {
		t.Fatalf("no Go build cache volume at /opt/gocache; mounts %+v", info.Mounts)
	}
	if _, err := cli.VolumeInspect(ctx, cacheVol); err != nil {
		t.Errorf("Go build cache volume %s is not on the remote engine: %v", cacheVol, err)
	}
	if _, err := local.VolumeInspect(ctx, cacheVol); err == nil {
		t.Errorf("Go build cache volume %s exists on the main engine too", cacheVol)
	}

	closed = true
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())

	// --engines: sessions spread over the main and the remote engine in turn.
	sp, err := docker.NewSpread(ctx, []string{local.DaemonHost(), e.Host}, &docker.Options{NoReap: true})
	if err != nil {
		t.Fatalf("NewSpread: %v", err)
	}
	for i, want := range []*client.Client{local, cli} {
		ss, err := sp.Start(ctx, sandbox.Spec{Image: testImage})
		if err != nil {
			t.Fatalf("Spread.Start %d: %v", i, err)
		}
		if _, err := want.ContainerInspect(ctx, ss.(*docker.Session).ContainerID()); err != nil {
			t.Errorf("session %d is not on engine %s: %v", i, want.DaemonHost(), err)
		}
		if res, err := ss.Run(ctx, sandbox.Command{Args: []string{"echo", "hi"}}); err != nil || string(res.Stdout) != "hi\n" {
			t.Errorf("session %d on %s: Run = %+v, %v", i, want.DaemonHost(), res, err)
		}
		if err := ss.Close(); err != nil {
			t.Errorf("session %d Close: %v", i, err)
		}
	}
	if got := sp.Started(); got[e.Host] != 1 || got[local.DaemonHost()] != 1 {
		t.Errorf("Started = %v, want one session on each engine", got)
	}
	if err := sp.Close(); err != nil {
		t.Errorf("Spread.Close: %v", err)
	}

	// Reaping on the remote engine: a container whose owner process is
	// gone is removed; the cache volume (not owned by a pid) stays.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	leaked, err := cli.ContainerCreate(ctx, &container.Config{
		Image: derived, Cmd: []string{"true"},
		Labels: map[string]string{
			docker.LabelSession: "fixpoint-leaked-e2e", docker.LabelPID: strconv.Itoa(dead.Process.Pid),
			docker.LabelPIDStart: "1", docker.LabelHost: host,
		},
	}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := docker.Reap(ctx, cli)
	if err != nil || n < 1 {
		t.Errorf("Reap on the remote engine = %d, %v; want the leaked container removed", n, err)
	}
	if _, err := cli.ContainerInspect(ctx, leaked.ID); !cerrdefs.IsNotFound(err) {
		t.Errorf("leaked container %.12s still on the remote engine after Reap (%v)", leaked.ID, err)
	}
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", cacheVol))})
	if err != nil || len(vols.Volumes) != 1 {
		t.Errorf("Go build cache volume after Reap: %d, %v; want kept", len(vols.Volumes), err)
	}
}
