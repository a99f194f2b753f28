// Command supervisor is the entrypoint of every fixpoint Docker sandbox.
//
// It speaks the framed protocol of package wire on stdin/stdout (the
// container's attached streams), so running a command costs one fork-exec
// instead of a `docker exec` round trip through the engine's API. Each
// command runs in its own process group under rlimits set by a re-exec of
// this binary ("supervisor -exec LIMITS -- ARGV..."), with a wall-clock
// timeout, capped output, and a sweep that kills everything the command
// left behind (the supervisor is a child subreaper).
//
// It is built static (CGO_ENABLED=0) from the standard library only; see
// ../gen.go.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-exec" {
		execCommand(os.Args[2:])
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "-relay" {
		runRelay(os.Args[2]) // relay.go: the kubernetes setup pod's way out
		return
	}
	root := flag.String("workspace", "/workspace", "workspace root")
	noPtrace := flag.Bool("noptrace", false, "always set limits through the re-exec wrapper")
	sweep := flag.Bool("sweep", false, "after each command kill every process but this one and pid 1 (only inside a container's pid namespace)")
	flag.Parse()

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "supervisor: %v\n", err)
		os.Exit(1)
	}
	// Orphans of a command re-parent to us, so the sweep can reap them.
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)

	// Not dumpable: commands run as our uid, and must not open our
	// /proc/PID/fd (the protocol stream) or ptrace us.
	const prSetDumpable = 4
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	prewarmThreads(16)
	s := newServer(*root, self, *sweep, os.Stdout)
	s.noPtrace = *noPtrace
	if err := s.serve(bufio.NewReaderSize(os.Stdin, 64<<10)); err != nil {
		fmt.Fprintf(os.Stderr, "supervisor: %v\n", err)
		os.Exit(1)
	}
}

// execCommand runs in the re-exec'd child: it applies the limits to itself
// and replaces itself with the command. args is LIMITS "--" ARGV...
func execCommand(args []string) {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "fixpoint: bad -exec invocation")
		os.Exit(126)
	}
	for _, kv := range strings.Split(args[0], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil || n == 0 {
			continue
		}
		var res int
		lim := syscall.Rlimit{Cur: n, Max: n}
		switch k {
		case "cpu":
			res = syscall.RLIMIT_CPU
			lim.Max = n + 1 // SIGXCPU first, SIGKILL a second later
		case "fsize":
			res = syscall.RLIMIT_FSIZE
		case "nofile":
			res = syscall.RLIMIT_NOFILE
		default:
			continue
		}
		if err := syscall.Setrlimit(res, &lim); err != nil {
			fmt.Fprintf(os.Stderr, "fixpoint: setrlimit %s: %v\n", k, err)
			os.Exit(126)
		}
	}
	// Under memory pressure the kernel must pick the command, not us.
	os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	argv := args[2:]
	path, err := lookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixpoint: %s: %v\n", argv[0], err)
		os.Exit(127)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "fixpoint: exec %s: %v\n", argv[0], err)
	os.Exit(126)
}

// lookPath is exec.LookPath without its refusal of relative PATH entries'
// results, and it treats a name with a slash as a path.
func lookPath(name string) (string, error) { return lookPathIn(name, os.Getenv("PATH")) }

// lookPathIn finds name in the directories of path ("" = defaultPath).
func lookPathIn(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	if path == "" {
		path = defaultPath
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command not found")
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// prewarmThreads makes the Go runtime create n OS threads now and keep
// them idle. A fork bomb can exhaust the container's pids limit, and a Go
// program that then needs a new thread dies ("failed to create new OS
// thread"); with idle threads cached, the supervisor survives to kill it.
func prewarmThreads(n int) {
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread() // forces a thread of its own
			ready.Done()
			release.Wait()
			runtime.UnlockOSThread() // the thread returns to the idle pool
		}()
	}
	ready.Wait()
	release.Done()
}
