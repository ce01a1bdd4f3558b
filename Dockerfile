# One image for every process; the command chooses the service:
#   gateway (default) | npm run start:qr-worker | npm run start:verify-worker | npm run keys -- ...
# TypeScript runs through tsx (a production dependency): there is no build step to drift.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/config/package.json libs/config/
COPY libs/jobs/package.json libs/jobs/
COPY libs/telemetry/package.json libs/telemetry/
COPY libs/testkit/package.json libs/testkit/
COPY services/gateway/package.json services/gateway/
COPY services/qr-worker/package.json services/qr-worker/
COPY services/verify-worker/package.json services/verify-worker/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/libs ./libs
COPY --from=deps /app/services ./services
COPY package.json package-lock.json tsconfig.json ./
COPY libs ./libs
COPY services ./services
COPY scripts ./scripts
USER node
EXPOSE 3000 9100
# The gateway answers /healthz on PORT, workers on WORKER_METRICS_PORT: try one, then the other.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "const get=(p)=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>r.ok);get(process.env.PORT||3000).catch(()=>get(process.env.WORKER_METRICS_PORT||9100)).then(ok=>process.exit(ok?0:1),()=>process.exit(1))"
CMD ["npm", "run", "start:gateway"]
