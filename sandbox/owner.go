package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// ProcessStart is the start time of pid in clock ticks since boot (field 22
// of /proc/PID/stat), or "" when there is no such process. A backend
// labels what it creates with its owner's pid and this start time, so that
// a reaper can tell a dead owner from a live process that reused the pid.
func ProcessStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and ')'
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// OwnerGone reports whether the owner a resource was labelled with (pid and
// ProcessStart, as decimal strings) is certainly dead on this host: no such
// process, or one that started at another time. An unreadable pid is never
// judged gone. Whether the resource belongs to this host at all is the
// caller's check.
func OwnerGone(pid, start string) bool {
	p, err := strconv.Atoi(pid)
	if err != nil || p <= 0 {
		return false
	}
	now := ProcessStart(p)
	if now == "" {
		return true // no such process
	}
	return start != "" && now != start
}
