# agent-judge: one image for every role (`worker --role workflow|judge|executor|archive`, `discord`, the CLI).
#   docker build -t agent-judge .
#   docker run --rm -e TEMPORAL_ADDRESS=temporal:7233 agent-judge worker --role judge
# Two stages: the build needs the dev dependencies (esbuild, tsc, the workflow bundler); the image keeps only the
# production ones and the compiled package (dist/, with the workflow bundle made at build time).

# --- build: dev dependencies, then dist/ ---
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts off: the build runs explicitly below (`prepare` would run it before the sources are copied).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ scripts/
COPY src/ src/
RUN node scripts/build.mjs

# --- runtime: production dependencies and the compiled package ---
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Optional dependencies are left out: node-llama-cpp (the in-process `local` judge) is large; a cluster's judge
# talks to a model endpoint (OLLAMA_HOST or spec.judge.openai.baseUrl).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist/ dist/
COPY bin/ bin/
COPY policies/ policies/
# Non-root (the image's `node` user); named volumes mounted on .agent-judge/* start with this ownership.
# /app is where the policy's relative paths (workspace, memory, archive dir) resolve.
RUN mkdir -p .agent-judge/archive .agent-judge/workspace .agent-judge/memory && chown -R node:node .agent-judge
USER node
# Prometheus /metrics when started with --metrics 0.0.0.0:9464 (docs/metrics.md).
EXPOSE 9464
ENTRYPOINT ["node", "bin/agent-judge.mjs"]
CMD ["worker"]
