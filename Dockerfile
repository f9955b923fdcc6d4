# pg2dynamo image: the static binary, the sample mappings (fixtures/mappings/),
# the Northwind example (examples/northwind/) and the demo: scripts/demo.sh
# with its DynamoDB helper (tools/demo-ddb, as /usr/local/bin/demo-ddb), in
# /app.
#
#   docker build -t pg2dynamo .
#   docker run --rm pg2dynamo migrate --help
#
# docker-compose.yml builds it for its one-shot `migrate` service, which runs
# scripts/demo.sh in it against PostgreSQL and DynamoDB Local. .dockerignore
# keeps the build context to what is copied here.
#
# Every base image is pinned to a version (internal/composecheck checks it):
# golang is go.mod's go version exactly, so GOTOOLCHAIN=local builds with it
# and fetches nothing.

FROM golang:1.26.8 AS build
ENV GOTOOLCHAIN=local
WORKDIR /src
COPY go.mod go.sum ./
COPY tools/go.mod tools/go.sum ./tools/
RUN go mod download && go -C tools mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/pg2dynamo . \
	&& CGO_ENABLED=0 go -C tools build -trimpath -ldflags='-s -w' -o /out/demo-ddb ./demo-ddb

FROM debian:12.15-slim
# postgresql-client: psql, createdb, dropdb and pg_isready for scripts/demo.sh
# (Northwind is loaded with psql). ca-certificates: for AWS's HTTPS endpoints.
RUN apt-get update \
	&& apt-get install -y --no-install-recommends postgresql-client ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
# An unprivileged user; /app is writable for the rejects files.
RUN useradd --system --uid 10001 --user-group --create-home pg2dynamo \
	&& mkdir /app \
	&& chown pg2dynamo:pg2dynamo /app
WORKDIR /app
COPY --from=build /out/pg2dynamo /out/demo-ddb /usr/local/bin/
COPY fixtures/mappings/ /app/fixtures/mappings/
COPY examples/northwind/ /app/examples/northwind/
COPY scripts/demo.sh scripts/dynalite.sh scripts/postgres.sh /app/scripts/
USER pg2dynamo
ENTRYPOINT ["/usr/local/bin/pg2dynamo"]
CMD ["--help"]
