# syntax=docker/dockerfile:1
#
# slackbot: a static Go binary on a Node.js runtime (MCP servers are often
# started with npx). Build from the repository root:
#
#   docker build -t slackbot --build-arg VERSION=$(git describe --tags --always) .
#   docker run --env-file deploy/slackbot.env -v slackbot-state:/var/lib/slackbot slackbot
#
# The configuration is /etc/slackbot/slackbot.yaml (deploy/slackbot.yaml,
# with the agents of agents/ beside it); mount your own read-only over it.
# Tokens come from the environment, never from the image.

# Build stage: the same command as `make static` on a workstation, so the
# binary tested there is the binary shipped. modernc.org/sqlite is pure Go:
# CGO_ENABLED=0 gives a static binary with no libc to match.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make static VERSION="$VERSION" STATIC_OUT=/out/slackbot

# Runtime stage: Node.js and npx for MCP servers, CA certificates for
# Slack and the model APIs, and tini as PID 1. tini reaps the orphans an
# npx tree leaves and passes SIGTERM to the bot alone, which then finishes
# its sessions and stops its MCP servers' process groups itself.
FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system slackbot \
 && useradd --system --gid slackbot --home-dir /home/slackbot --create-home --shell /usr/sbin/nologin slackbot \
 && install -d -o slackbot -g slackbot -m 0700 /var/lib/slackbot
COPY --from=build /out/slackbot /usr/local/bin/slackbot
COPY deploy/slackbot.yaml /etc/slackbot/slackbot.yaml
COPY agents/ /etc/slackbot/agents/

USER slackbot
WORKDIR /var/lib/slackbot
# The SQLite state (state.path in deploy/slackbot.yaml): dedup, the bot's
# threads and session records outlive the container.
VOLUME ["/var/lib/slackbot"]

# Liveness from /healthz on metrics.listen (127.0.0.1:9090 in the shipped
# configuration), probed with node since the image has no curl. /readyz is
# for an orchestrator that routes nothing to the bot but wants to know it is
# connected; Docker has no use for it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9090/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/slackbot"]
CMD ["run", "--config", "/etc/slackbot/slackbot.yaml"]
