# pg2dynamo image: the static binary, the sample mappings (fixtures/mappings/),
# the Northwind example mapping (examples/) and the demo scripts, in /app.
#
#   docker build -t pg2dynamo .
#   docker run --rm pg2dynamo migrate --help
#
# docker-compose.yml builds it for its one-shot `migrate` service, which runs
# scripts/demo.sh in it against PostgreSQL and DynamoDB Local.

FROM golang:1.26-bookworm AS build
# go.mod asks for go 1.26.8; the image sets GOTOOLCHAIN=local, so a cached
# older 1.26 image would refuse to build. auto fetches that toolchain then,
# and changes nothing when the image's Go is recent enough.
ENV GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /pg2dynamo .

FROM debian:bookworm-slim
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
COPY --from=build /pg2dynamo /usr/local/bin/pg2dynamo
COPY fixtures/mappings/ /app/fixtures/mappings/
COPY examples/ /app/examples/
COPY scripts/demo.sh scripts/dynalite.sh /app/scripts/
USER pg2dynamo
ENTRYPOINT ["/usr/local/bin/pg2dynamo"]
CMD ["--help"]
