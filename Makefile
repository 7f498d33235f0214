# slackbot — the two commands a newcomer needs: `make run` and `make test`.
# Everything the tests need (the pinned npm peers) is installed from here.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
NPM_DIR  := testdata/npm
NPM_DONE := $(NPM_DIR)/node_modules/.package-lock.json
STATICCHECK_VERSION := v0.8.2

.PHONY: all build static run test bench fuzz lint style peers node chromium redis

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/slackbot ./cmd/slackbot

# The binary the Docker image ships (its build stage runs this target): no
# cgo — modernc.org/sqlite is pure Go — so it is static and runs on any
# Linux, no paths of this machine in it, no symbol tables. The checks after
# the build fail the target when the binary asks for a dynamic loader.
STATIC_OUT ?= bin/slackbot-static
static:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(STATIC_OUT) ./cmd/slackbot
	@$(GO) version -m $(STATIC_OUT) | grep -q 'CGO_ENABLED=0' || { echo "$(STATIC_OUT) was built with cgo"; exit 1; }
	@if command -v readelf >/dev/null 2>&1 && readelf -lW $(STATIC_OUT) | grep -q INTERP; then \
	  echo "$(STATIC_OUT) needs a dynamic loader: it is not static"; exit 1; fi
	@echo "$(STATIC_OUT): static, $$(du -h $(STATIC_OUT) | cut -f1)"

# The bot reads ./slackbot.yaml; the first run starts from the annotated example.
slackbot.yaml:
	cp slackbot.example.yaml slackbot.yaml
	@echo "created slackbot.yaml from slackbot.example.yaml; set OPENAI_API_KEY or ANTHROPIC_API_KEY (or edit it)"

# With Slack tokens in the environment the bot answers in Slack; without
# them it runs in the playground: a local Slack-like page at LISTEN.
LISTEN ?= 127.0.0.1:3000
run: build slackbot.yaml
	@if [ -n "$$SLACK_BOT_TOKEN" ] && [ -n "$$SLACK_APP_TOKEN" ]; then \
	  ./bin/slackbot run --config slackbot.yaml; \
	else \
	  echo "SLACK_BOT_TOKEN and SLACK_APP_TOKEN are not both set: starting the playground at http://$(LISTEN)/ (see README: Playground)"; \
	  ./bin/slackbot dev --config slackbot.yaml --listen $(LISTEN); \
	fi

# What the tests need from Debian, when the machine lacks it: installed as
# root directly, otherwise through sudo when it is there; without either,
# make stops and prints the command to run. $(1) is a command to look for,
# $(2) the packages, $(3) what they are for.
define apt_install
	@if command -v $(1) >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	else echo "The Debian packages $(2) are needed for $(3). Run as root:"; \
	  echo "  apt-get update && apt-get install -y $(2)"; \
	  echo "then run make again."; exit 1; fi; \
	echo "installing $(2) from Debian$${SUDO:+ with sudo}"; \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(2)
endef

# Node.js and npm for the test peers (slackify-markdown, the MCP servers).
node:
	$(call apt_install,npm,nodejs npm,the test peers)

# Chromium for the playground's browser tests.
chromium:
	$(call apt_install,chromium,chromium,the playground's browser tests)

# redis-server for the state tests; they start their own on a free loopback
# port.
redis:
	$(call apt_install,redis-server,redis-server,the state tests of several replicas)

# Test peers pinned in testdata/npm/package-lock.json (slackify-markdown, MCP servers).
peers: node $(NPM_DONE)
$(NPM_DONE): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error
	@touch $(NPM_DONE)

test: peers chromium redis style
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# What `make lint` checks holds on main: `make test` fails on a file gofmt
# would change and on any staticcheck finding. staticcheck is installed at
# its pinned version from the Go module proxy; not getting it fails the
# gate rather than skipping it.
style:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin"; command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

bench: peers redis
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	bash bench/blockkit-vs-slackify.sh
	bash bench/slack-load.sh

# Every fuzz target of every package, FUZZTIME each: targets are found with
# go test -list, so a new one is fuzzed without editing this file.
FUZZTIME ?= 60s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$target ($$pkg, $(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) || echo "staticcheck did not install; skipped"
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin"; if command -v staticcheck >/dev/null 2>&1; then staticcheck ./...; fi
