# syntax=docker/dockerfile:1
# The control-plane image: kinfctl (controller, scorer, edge on Node, validate, ...), the
# services only: the lab (control-plane/lab/: simulator, benchmarks, chaos suite, embedded
# stack, kinfctl's bench, sim and up) is left out by .dockerignore, and those commands say
# to run them from a clone.
# Node 24 comes from the official node image: the project's `node` package is a
# devDependency and `npm ci --omit=dev` leaves it out. Pin the base by digest in your
# registry mirror; this file pins the version the repository's lockfile runs (24.21.0).
# Built with: docker build -t ghcr.io/kinference/kinfctl:0.1.0 .
# (Not built in this repository's CI: test/infra/docker/dockerfile.test.ts checks it statically.)

FROM node:24.21.0-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only; zeromq's install script keeps its prebuilt native addon.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24.21.0-bookworm-slim
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
