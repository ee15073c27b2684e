# syntax=docker/dockerfile:1
# The control-plane image: kinfctl (controller, scorer, edge on Node, validate, ...), the
# services only: the lab (control-plane/lab/: simulator, benchmarks, chaos suite, embedded
# stack, kinfctl's bench, sim and up) is left out by .dockerignore, and those commands say
# to run them from a clone.
# Node 24 comes from the official node image: the project's `node` package is a
# devDependency and `npm ci --omit=dev` leaves it out. Both stages use the version the
# repository's lockfile runs (24.21.0), pinned by the digest of the tag's multi-arch index
# (linux/amd64 and linux/arm64) on Docker Hub as of 2026-09-14, so a rebuilt tag cannot
# change a release's base. Where that digest was read, and how to move it, is in
# docs/release.md ("The base image"); .ci/release checks it is an index of both platforms.
# Built with: docker build -t ghcr.io/kinference/kinfctl:0.1.0 .
# Released (multi-arch, labelled, with its SBOM) by .ci/release from the tag workflow
# .github/workflows/release.yml (docs/release.md). The tests do not build it:
# test/infra/docker/dockerfile.test.ts checks it statically.

FROM node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553 AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only; zeromq's install script keeps its prebuilt native addon.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553
ENV NODE_ENV=production
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
# kinfctl is TypeScript run by Node's type stripping: the sources are the program.
COPY shared ./shared
# Without control-plane/lab (.dockerignore).
COPY control-plane ./control-plane
# kinfctl edge serves the Worker's app on Node.
COPY workers ./workers
# The built-in tokenizers' chat templates, each with its model's licence.
COPY data/chat-templates ./data/chat-templates
# The image's unprivileged user (uid 1000); nothing under /app is writable, so the root
# filesystem can be mounted read-only (the chart mounts an emptyDir on /tmp).
USER node
ENTRYPOINT ["node", "/app/control-plane/kinfctl/kinfctl.js"]
CMD ["--help"]
