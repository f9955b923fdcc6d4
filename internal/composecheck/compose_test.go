package composecheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]any    `yaml:"depends_on"`
	Ports       []string          `yaml:"ports"`
}

// repoRoot returns the module root, where the container files are.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readRepoFile(t *testing.T, root, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadCompose(t *testing.T, root string) composeFile {
	t.Helper()
	var c composeFile
	if err := yaml.Unmarshal(readRepoFile(t, root, "docker-compose.yml"), &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("docker-compose.yml: no services")
	}
	return c
}

// composeCommand returns the command that validates a compose file here:
// `docker compose` (the v2 plugin) when it answers, else `docker-compose`
// (Debian's package: it validates without a Docker engine). It returns nil
// when neither is installed.
func composeCommand() []string {
	if _, err := exec.LookPath("docker"); err == nil {
		if exec.Command("docker", "compose", "version").Run() == nil {
			return []string{"docker", "compose"}
		}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	return nil
}

// TestComposeConfig fails when `docker compose config -q` rejects
// docker-compose.yml: a syntax error, an unknown key, a wrong type. The tool
// must be installed (scripts/test.sh installs Debian's docker-compose);
// PG2DYNAMO_SKIP_COMPOSE=1 skips the test instead.
func TestComposeConfig(t *testing.T) {
	root := repoRoot(t)
	tool := composeCommand()
	if tool == nil {
		if os.Getenv("PG2DYNAMO_SKIP_COMPOSE") != "" {
			t.Skip("neither docker compose nor docker-compose is installed (PG2DYNAMO_SKIP_COMPOSE)")
		}
		t.Fatal("neither `docker compose` nor `docker-compose` is installed: install Debian's docker-compose " +
			"(apt-get install --no-install-recommends docker-compose; scripts/test.sh does), " +
			"or set PG2DYNAMO_SKIP_COMPOSE=1 to skip this check")
	}
	for _, env := range [][]string{nil, {"SCALE=10", "POSTGRES_PORT=55432", "DYNAMODB_PORT=58000"}} {
		args := append(slices.Clone(tool[1:]), "-f", "docker-compose.yml", "config", "-q")
		cmd := exec.Command(tool[0], args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s %s (env %v): %v\n%s", tool[0], strings.Join(args, " "), env, err, stderr.String())
		}
	}
}

// pinnedImage matches an image pinned to a version: a tag of at least
// major.minor (16.15, 3.3.0, 1.26.8), optionally with a variant suffix
// (-bookworm, -slim), or a digest.
var pinnedImage = regexp.MustCompile(`^[a-z0-9][a-z0-9./_-]*(:[0-9]+\.[0-9]+(\.[0-9]+)?(-[a-z0-9.]+)*)?(@sha256:[0-9a-f]{64})?$`)

// checkPinned reports why image is not pinned, or "".
func checkPinned(image string) string {
	name, tag, hasTag := strings.Cut(strings.SplitN(image, "@", 2)[0], ":")
	switch {
	case !pinnedImage.MatchString(image):
		return "not pinned to a version (want name:MAJOR.MINOR[.PATCH][-variant] or a digest)"
	case !hasTag && !strings.Contains(image, "@"):
		return "no tag: that is latest"
	case tag == "latest" || name == "":
		return "latest is not a version"
	}
	return ""
}

// fromImages returns the images of the Dockerfile's FROM lines.
func fromImages(dockerfile string) []string {
	var images []string
	for _, line := range strings.Split(dockerfile, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			images = append(images, f[1])
		}
	}
	return images
}

// goVersion returns the version of go.mod's go line.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go ([0-9][0-9.]*)\s*$`).FindSubmatch(readRepoFile(t, root, "go.mod"))
	if m == nil {
		t.Fatal("go.mod: no go line")
	}
	return string(m[1])
}

// TestImagesPinned fails on an image of docker-compose.yml or a FROM of the
// Dockerfile not pinned to a version, and on a golang image whose version
// is not go.mod's: the image is then built by another Go than the tests.
func TestImagesPinned(t *testing.T) {
	root := repoRoot(t)
	for name, svc := range loadCompose(t, root).Services {
		if svc.Image == "" {
			if svc.Build == nil {
				t.Errorf("docker-compose.yml: service %s has neither image nor build", name)
			}
			continue
		}
		if why := checkPinned(svc.Image); why != "" {
			t.Errorf("docker-compose.yml: service %s: image %s: %s", name, svc.Image, why)
		}
	}
	froms := fromImages(string(readRepoFile(t, root, "Dockerfile")))
	if len(froms) == 0 {
		t.Fatal("Dockerfile: no FROM line")
	}
	want := goVersion(t, root)
	sawGo := false
	for _, image := range froms {
		if why := checkPinned(image); why != "" {
			t.Errorf("Dockerfile: FROM %s: %s", image, why)
		}
		if name, tag, _ := strings.Cut(image, ":"); name == "golang" || name == "docker.io/library/golang" {
			sawGo = true
			if version, _, _ := strings.Cut(tag, "-"); version != want {
				t.Errorf("Dockerfile: FROM %s: want golang:%s, go.mod's go version", image, want)
			}
		}
	}
	if !sawGo {
		t.Errorf("Dockerfile: no golang build stage among %v", froms)
	}
}

func TestCheckPinned(t *testing.T) {
	tests := []struct {
		image  string
		pinned bool
	}{
		{"postgres:16.15-bookworm", true},
		{"amazon/dynamodb-local:3.3.0", true},
		{"golang:1.26.8", true},
		{"debian:12.15-slim", true},
		{"postgres@sha256:" + strings.Repeat("ab", 32), true},
		{"postgres", false},
		{"postgres:latest", false},
		{"postgres:16", false},
		{"amazon/dynamodb-local", false},
		{"debian:bookworm-slim", false},
		{"golang:1.26-bookworm", true}, // major.minor is a version; TestImagesPinned wants go.mod's exact one
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			why := checkPinned(tt.image)
			if got := why == ""; got != tt.pinned {
				t.Errorf("checkPinned(%q) = %q, want pinned %v", tt.image, why, tt.pinned)
			}
		})
	}
}
