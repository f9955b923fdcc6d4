package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// statCPU reads /proc/PID/stat (proc(5)): the command name and the sum of
// the CPU time fields at the given positions (14 utime, 15 stime, 16
// cutime, 17 cstime); false when the process is gone.
func statCPU(pid string, fields ...int) (string, time.Duration, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if err != nil || open < 0 || closing < open {
		return "", 0, false
	}
	f := strings.Fields(string(b[closing+1:])) // from the 3rd field, state
	var sum time.Duration
	for _, i := range fields {
		if len(f) > i-3 {
			n, _ := strconv.ParseInt(f[i-3], 10, 64)
			sum += time.Duration(n) * clockTick
		}
	}
	return string(b[open+1 : closing]), sum, true
}

// cpuOfNamed sums, over the running processes whose command is name, the
// CPU time (user + system) each has used and that of its children it has
// reaped: for PostgreSQL, the postmaster's holds the backends that exited,
// so the server's total counts them.
func cpuOfNamed(name string) time.Duration {
	var sum time.Duration
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if comm, cpu, ok := statCPU(e.Name(), 14, 15, 16, 17); ok && comm == name {
			sum += cpu
		}
	}
	return sum
}
