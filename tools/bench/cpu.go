package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuOfNamed sums, over the running processes whose command is name, the
// CPU time (user + system) each has used and that of its children it has
// reaped (proc(5)): for PostgreSQL, the postmaster's holds the backends
// that exited, so the server's total counts them.
func cpuOfNamed(name string) time.Duration {
	var sum time.Duration
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if err != nil || open < 0 || closing < open || string(b[open+1:closing]) != name {
			continue
		}
		f := strings.Fields(string(b[closing+1:])) // from the 3rd field, state
		for _, i := range []int{14, 15, 16, 17} {  // utime, stime, cutime, cstime
			if len(f) > i-3 {
				n, _ := strconv.ParseInt(f[i-3], 10, 64)
				sum += time.Duration(n) * clockTick
			}
		}
	}
	return sum
}
