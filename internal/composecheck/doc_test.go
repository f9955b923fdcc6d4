// Package composecheck holds tests of the container files at the module
// root; it has no code of its own (issue 17).
//
//   - TestComposeConfig runs `docker compose config -q` (or Debian's
//     docker-compose, which validates the file without a Docker engine;
//     scripts/test.sh installs it) on docker-compose.yml, and fails when
//     neither tool is there unless PG2DYNAMO_SKIP_COMPOSE is set.
//   - TestImagesPinned fails on an image of docker-compose.yml or a FROM of
//     the Dockerfile that is not pinned to a version (latest, no tag, a bare
//     major version), and on a golang image that is not go.mod's go version.
//   - TestMigrateServiceMirrorsDemo checks that the compose migrate service
//     runs scripts/demo.sh as the image holds it, with settings demo.sh
//     reads, the binaries the image builds and the services compose starts.
//   - TestBuildContext checks .dockerignore: the files the image is built
//     from are sent, and the context stays under MaxContextBytes.
package composecheck

// MaxContextBytes is the most the Docker build context, the files that
// .dockerignore lets through, may add up to. It was 78.9 MB after `make
// demo` before .dockerignore (the 41 MB binary, node_modules, .git) and is
// 1.5 MB with it (146 files).
const MaxContextBytes = 8 << 20
