package composecheck

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// copyLine is one COPY instruction of the Dockerfile.
type copyLine struct {
	from string   // the --from stage, "" for the build context
	srcs []string // as written
	dest string
}

// copyLines returns the Dockerfile's COPY instructions (one line each).
func copyLines(dockerfile string) []copyLine {
	var out []copyLine
	for _, line := range strings.Split(dockerfile, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.EqualFold(f[0], "COPY") {
			continue
		}
		var c copyLine
		args := f[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "--") {
			if v, ok := strings.CutPrefix(args[0], "--from="); ok {
				c.from = v
			}
			args = args[1:]
		}
		if len(args) < 2 {
			continue
		}
		c.srcs, c.dest = args[:len(args)-1], args[len(args)-1]
		out = append(out, c)
	}
	return out
}

// contextSource returns the path in the build context that the Dockerfile
// copies to imagePath, from its COPY lines without --from: a directory
// source copies its contents under the destination, a file source into a
// destination directory (ending in /) under its own name.
func contextSource(copies []copyLine, imagePath string) (string, bool) {
	for _, c := range copies {
		if c.from != "" {
			continue
		}
		for _, src := range c.srcs {
			switch {
			case strings.HasSuffix(src, "/") && strings.HasSuffix(c.dest, "/") && strings.HasPrefix(imagePath, c.dest):
				return src + strings.TrimPrefix(imagePath, c.dest), true
			case strings.HasSuffix(c.dest, "/") && c.dest+path.Base(src) == imagePath:
				return src, true
			case c.dest == imagePath:
				return src, true
			}
		}
	}
	return "", false
}

// builtBinary reports whether a COPY --from a build stage puts a file at
// imagePath (e.g. /usr/local/bin/pg2dynamo).
func builtBinary(copies []copyLine, imagePath string) bool {
	for _, c := range copies {
		if c.from == "" {
			continue
		}
		for _, src := range c.srcs {
			if c.dest == imagePath || (strings.HasSuffix(c.dest, "/") && c.dest+path.Base(src) == imagePath) {
				return true
			}
		}
	}
	return false
}

// demoNeeds returns the files scripts/demo.sh reads relative to the
// repository (its cwd): the helper it sources, each domain's mapping under
// the default DEMO_MAPPINGS, and the Northwind mapping.
func demoNeeds(t *testing.T, demo string) []string {
	t.Helper()
	mappings := regexp.MustCompile(`DEMO_MAPPINGS="\$\{DEMO_MAPPINGS:-([^}]+)\}"`).FindStringSubmatch(demo)
	domains := regexp.MustCompile(`(?m)^DOMAINS=\(([^)]*)\)`).FindStringSubmatch(demo)
	if mappings == nil || domains == nil {
		t.Fatal("scripts/demo.sh: no DEMO_MAPPINGS default or DOMAINS=(...) line")
	}
	needs := []string{"scripts/dynalite.sh", "scripts/postgres.sh", "examples/northwind/mapping.yaml"}
	for _, n := range needs {
		if !strings.Contains(demo, n) {
			t.Errorf("scripts/demo.sh no longer names %s: update demoNeeds", n)
		}
	}
	for _, d := range strings.Fields(domains[1]) {
		needs = append(needs, mappings[1]+"/"+d+".yaml")
	}
	return needs
}

// TestMigrateServiceMirrorsDemo checks that the compose migrate service is
// the mirror of `make demo`: it runs scripts/demo.sh as the image holds it,
// every setting it passes is one demo.sh reads, the binaries it names are
// built into the image, the files demo.sh needs are copied in (and not left
// out of the build context), and its endpoints name the compose services.
func TestMigrateServiceMirrorsDemo(t *testing.T) {
	root := repoRoot(t)
	compose := loadCompose(t, root)
	migrate, ok := compose.Services["migrate"]
	if !ok || migrate.Build == nil {
		t.Fatal("docker-compose.yml: no migrate service built from the Dockerfile")
	}
	copies := copyLines(string(readRepoFile(t, root, "Dockerfile")))
	demo := string(readRepoFile(t, root, "scripts/demo.sh"))
	ignore := loadDockerignore(t, root)

	// contextFile checks that the image gets repo-relative file rel from the
	// build context: it exists and .dockerignore lets it through.
	contextFile := func(what, rel string) {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if ignore.excluded(rel) {
			t.Errorf("%s: .dockerignore leaves %s out of the build context", what, rel)
		}
	}
	run := append(slices.Clone(migrate.Entrypoint), migrate.Command...)
	if want := []string{"bash", "/app/scripts/demo.sh"}; !slices.Equal(run, want) {
		t.Errorf("migrate runs %q, want %q (scripts/demo.sh, as `make demo` does)", run, want)
	}
	if src, ok := contextSource(copies, "/app/scripts/demo.sh"); !ok || src != "scripts/demo.sh" {
		t.Errorf("Dockerfile: /app/scripts/demo.sh is not copied from scripts/demo.sh (got %q)", src)
	}
	for _, rel := range demoNeeds(t, demo) {
		if _, ok := contextSource(copies, "/app/"+rel); !ok {
			t.Errorf("Dockerfile: scripts/demo.sh needs %s, which is not copied to /app/%s", rel, rel)
		}
		contextFile("scripts/demo.sh needs "+rel, rel)
	}
	for key, value := range migrate.Environment {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(key) + `\b`).MatchString(demo) {
			t.Errorf("migrate sets %s, which scripts/demo.sh does not read (or document)", key)
		}
		switch {
		case strings.HasPrefix(value, "/usr/local/bin/"):
			if !builtBinary(copies, value) {
				t.Errorf("migrate: %s=%s is not a binary the Dockerfile builds", key, value)
			}
		case strings.HasPrefix(value, "/app/"):
			src, ok := contextSource(copies, value)
			if !ok {
				t.Errorf("migrate: %s=%s is not copied into the image", key, value)
				continue
			}
			contextFile("migrate: "+key, src)
		}
	}
	checkEndpoints(t, compose, migrate)
}

// checkEndpoints checks that the migrate service reaches PostgreSQL and
// DynamoDB as compose services it depends on, at their container ports.
func checkEndpoints(t *testing.T, compose composeFile, migrate composeService) {
	t.Helper()
	env := migrate.Environment
	u, err := url.Parse(env["DYNAMODB_ENDPOINT"])
	if err != nil || u.Hostname() == "" {
		t.Fatalf("migrate: DYNAMODB_ENDPOINT %q is not a URL", env["DYNAMODB_ENDPOINT"])
	}
	targets := map[string]string{"DYNAMODB_ENDPOINT": u.Hostname(), "PGHOST": env["PGHOST"]}
	ports := map[string]string{"DYNAMODB_ENDPOINT": u.Port(), "PGHOST": env["PGPORT"]}
	for key, host := range targets {
		svc, ok := compose.Services[host]
		if !ok {
			t.Errorf("migrate: %s names %q, not a compose service", key, host)
			continue
		}
		if _, ok := migrate.DependsOn[host]; !ok {
			t.Errorf("migrate does not depend on %s (%s)", host, key)
		}
		if !publishes(svc, ports[key]) {
			t.Errorf("migrate: %s port %q is not a container port service %s publishes", key, ports[key], host)
		}
	}
}

// publishes reports whether one of svc's ports (short syntax,
// [IP:]HOST:CONTAINER[/PROTOCOL]) maps containerPort.
func publishes(svc composeService, containerPort string) bool {
	return containerPort != "" && slices.ContainsFunc(svc.Ports, func(p string) bool {
		p, _, _ = strings.Cut(p, "/")
		return strings.HasSuffix(p, ":"+containerPort)
	})
}
