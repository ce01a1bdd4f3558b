# One image for every production process; the command chooses it (node is PID 1, so the
# orchestrator's SIGTERM reaches the process that drains):
#   gateway (default)      node services/gateway/dist/main.js
#   qr-worker              node services/qr-worker/dist/main.js
#   verify-worker          node services/verify-worker/dist/main.js
#   key administration     node services/gateway/dist/keys-cli.js <command>

# ---- build: every package compiled to JavaScript (tsc project references, source maps) ----------
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY libs ./libs
COPY services ./services
COPY scripts ./scripts
COPY clients ./clients
RUN npm ci --no-audit --no-fund && npm run build

# ---- runtime: production dependencies of the three services and their built files only -------
# Every workspace package the services depend on is listed twice below (its package.json, then its
# dist/, which holds the Lua scripts its Redis stores read at load: `npm run build` copies them).
FROM node:22-bookworm-slim
ENV NODE_ENV=production
# `production` selects each workspace package's dist/ entry points (their exports default to the
# TypeScript sources, for development).
ENV NODE_OPTIONS="--conditions=production --enable-source-maps"
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/shared/contracts/package.json libs/shared/contracts/
COPY libs/shared/config/package.json libs/shared/config/
COPY libs/shared/backend/package.json libs/shared/backend/
COPY libs/shared/feedback/package.json libs/shared/feedback/
COPY libs/shared/jobs/package.json libs/shared/jobs/
COPY libs/shared/lists/package.json libs/shared/lists/
COPY libs/shared/metering/package.json libs/shared/metering/
COPY libs/shared/telemetry/package.json libs/shared/telemetry/
COPY libs/testkit/package.json libs/testkit/
COPY libs/shared/webhooks/package.json libs/shared/webhooks/
COPY services/gateway/package.json services/gateway/
COPY services/qr-worker/package.json services/qr-worker/
COPY services/verify-worker/package.json services/verify-worker/
COPY clients/verify-list/package.json clients/verify-list/
COPY clients/console/package.json clients/console/
RUN npm ci --omit=dev --no-audit --no-fund -w services/gateway -w services/qr-worker -w services/verify-worker \
  && npm cache clean --force
COPY --from=build /app/libs/shared/contracts/dist libs/shared/contracts/dist
COPY --from=build /app/libs/shared/config/dist libs/shared/config/dist
COPY --from=build /app/libs/shared/backend/dist libs/shared/backend/dist
COPY --from=build /app/libs/shared/feedback/dist libs/shared/feedback/dist
COPY --from=build /app/libs/shared/jobs/dist libs/shared/jobs/dist
COPY --from=build /app/libs/shared/lists/dist libs/shared/lists/dist
COPY --from=build /app/libs/shared/metering/dist libs/shared/metering/dist
COPY --from=build /app/libs/shared/telemetry/dist libs/shared/telemetry/dist
COPY --from=build /app/libs/shared/webhooks/dist libs/shared/webhooks/dist
COPY --from=build /app/services/gateway/dist services/gateway/dist
COPY --from=build /app/services/qr-worker/dist services/qr-worker/dist
COPY --from=build /app/services/verify-worker/dist services/verify-worker/dist
# The web console's static files, served by the gateway at /app.
COPY --from=build /app/clients/console/dist clients/console/dist
USER node
EXPOSE 3000 9100
# The gateway answers /healthz on PORT, workers on WORKER_METRICS_PORT: try one, then the other.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "const get=(p)=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>r.ok);get(process.env.PORT||3000).catch(()=>get(process.env.WORKER_METRICS_PORT||9100)).then(ok=>process.exit(ok?0:1),()=>process.exit(1))"
CMD ["node", "services/gateway/dist/main.js"]
