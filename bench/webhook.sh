#!/usr/bin/env bash
# The conversion webhook under attack (BENCHMARKS.md, "Conversion webhook under load"): the release aks-reconciler
# binary with --leader-elect against the fake-apiserver binary, then CLIENTS concurrent clients posting maximal
# ConversionReviews (as large as --webhook-max-body-bytes allows, ManagedClusters v1beta1 -> v2alpha1) over HTTP/1.1
# for SECONDS seconds, then four concurrent 50 MB reviews (the attack of the issue). Samples the reconciler's RSS
# (/proc/PID/status) every 200 ms, /healthz latency and the Lease's renewTime every 500 ms. Prints Markdown.
#
# Environment: CLIENTS (default 16), SECONDS_UNDER_LOAD (30), MAX_BODY (webhook limit, default 3Mi, i.e. the
# binary's default), SLOTS (--webhook-max-concurrent-reviews, default 2, the binary's default), BIN_DIR (default target/release; set
# SKIP_BUILD=1 to use binaries already built there).
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS="${CLIENTS:-16}"
SECONDS_UNDER_LOAD="${SECONDS_UNDER_LOAD:-30}"
MAX_BODY="${MAX_BODY:-3Mi}"
SLOTS="${SLOTS:-2}"
BIN_DIR="${BIN_DIR:-target/release}"
if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build -q --release --locked -p aks-reconciler -p fake-apiserver --bins
fi
for tool in curl openssl python3; do
  command -v "$tool" >/dev/null || { echo "bench/webhook.sh needs $tool" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
bytes_of() { # 3Mi -> 3145728
  python3 -c 'import sys; s=sys.argv[1]; u={"Ki":10,"Mi":20,"Gi":30}; print(int(s[:-2])<<u[s[-2:]] if s[-2:] in u else int(s))' "$1"
}
max_body=$(bytes_of "$MAX_BODY")

# The API server's side: the fake API server, with a kubeconfig for the reconciler.
"$BIN_DIR/fake-apiserver" --listen 127.0.0.1:0 --kubeconfig "$work/kubeconfig" >"$work/api.url" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/api.url" ] && break; sleep 0.1; done
api=$(head -1 "$work/api.url")

# The webhook's certificate, self-signed for localhost.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null

webhook_port=$(free_port)
metrics_port=$(free_port)
KUBECONFIG="$work/kubeconfig" "$BIN_DIR/aks-reconciler" \
  --arm-endpoint http://127.0.0.1:9 --anonymous 00000000-0000-0000-0000-000000000000 --namespace bench \
  --webhook-listen "127.0.0.1:$webhook_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert-file "$work/tls.crt" --tls-key-file "$work/tls.key" \
  --webhook-max-body-bytes "$MAX_BODY" --webhook-max-concurrent-reviews "$SLOTS" \
  --leader-elect --leader-election-namespace bench --log warn >"$work/reconciler.log" 2>&1 &
reconciler=$!
pids+=($reconciler)
lease="$api/apis/coordination.k8s.io/v1/namespaces/bench/leases/aks-reconciler"
for _ in $(seq 200); do
  curl -sf "$lease" 2>/dev/null | grep -q holderIdentity && break
  sleep 0.1
done
curl -sf "$lease" | grep -q holderIdentity || { cat "$work/reconciler.log" >&2; echo "no leader" >&2; exit 1; }

# A maximal review and the 50 MB one.
python3 - "$max_body" "$work/max.json" "$work/huge.json" <<'PY'
import json, sys
limit, small_path, huge_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
G = "containerservice.armgen.dev"
def obj(i):
    return {"apiVersion": f"{G}/v1beta1", "kind": "ManagedCluster",
            "metadata": {"name": f"cluster-{i:06}", "namespace": "team-a", "uid": f"6f1d2a3b-0000-4000-8000-{i:012}",
                         "resourceVersion": "48211", "generation": 3, "creationTimestamp": "2026-11-02T09:14:00Z"},
            "spec": {"location": "westeurope", "owner": {"name": "rg-prod"}, "dnsPrefix": f"prod-{i:06}",
                     "enablePodSecurityPolicy": False, "kubernetesVersion": "1.33.2",
                     "agentPoolProfiles": [{"name": "system", "count": 3, "mode": "System", "vmSize": "Standard_D4s_v5"}],
                     "tags": {"team": "a", "env": "prod"}}}
def review(limit):
    one = len(json.dumps(obj(0))) + 2
    n = (limit - 400) // one
    body = {"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "bench", "desiredAPIVersion": f"{G}/v2alpha1", "objects": [obj(i) for i in range(n)]}}
    data = json.dumps(body).encode()
    while len(data) > limit:
        body["request"]["objects"].pop()
        data = json.dumps(body).encode()
    return data, len(body["request"]["objects"])
data, n = review(limit)
open(small_path, "wb").write(data)
open(huge_path, "wb").write(review(50_000_000)[0])
print(n, len(data), file=open(small_path + ".meta", "w"))
PY
read -r objects body_bytes <"$work/max.json.meta"

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$reconciler/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$reconciler/status"; }
mib() { python3 -c "print(f'{$1/1024:.1f}')"; }
post() { # body file, output file for status codes
  local code
  code=$(curl -sk --http1.1 -o /dev/null -w '%{http_code}' --resolve "localhost:$webhook_port:127.0.0.1" \
    -H 'Content-Type: application/json' --data-binary "@$1" "https://localhost:$webhook_port/convert") || true
  # 000: the connection closed before curl read an answer — a 429 sent before the upload ended, which closes an
  # HTTP/1.1 connection (Go's client, the API server's, reads the 429 anyway).
  echo "${code:-000}" >>"$2"
}
sample() { # seconds: RSS peak, /healthz latencies, renewTimes
  local until=$((SECONDS + $1)) peak=0 rss
  : >"$work/healthz"; : >"$work/renewals"
  while [ "$SECONDS" -lt "$until" ]; do
    rss=$(rss_kib); [ "$rss" -gt "$peak" ] && peak=$rss
    curl -s -o /dev/null -w '%{time_total}\n' --max-time 30 "http://127.0.0.1:$metrics_port/healthz" >>"$work/healthz" \
      || echo 30 >>"$work/healthz"
    curl -sf "$lease" | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["renewTime"])' \
      >>"$work/renewals" 2>/dev/null || true
    sleep 0.2
    rss=$(rss_kib); [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 0.3
  done
  echo "$peak"
}
summary() { # label, seconds, peak KiB, codes file
  local codes healthz_max renewals
  codes=$(sort "$4" | uniq -c | awk '{printf "%s%s× %s", sep, $1, $2; sep=", "}')
  healthz_max=$(sort -g "$work/healthz" | tail -1)
  renewals=$(sort -u "$work/renewals" | wc -l)
  echo "| $1 | $2 | $(mib "$3") | ${codes:-—} | ${healthz_max}s | $renewals |"
}

idle=$(rss_kib)
echo "## aks-reconciler webhook under load ($(date -u +%F), $(nproc) cores)"
echo
echo "Limits: --webhook-max-body-bytes $MAX_BODY ($max_body bytes), --webhook-max-concurrent-reviews $SLOTS." \
  "Maximal review: $objects ManagedClusters, $body_bytes bytes. Clients: $CLIENTS over HTTP/1.1 (curl; over HTTP/2 curl 7.88 reports an answer sent before the upload ended as a failed transfer)."
echo
echo "| phase | seconds | peak RSS MiB | answers | slowest /healthz | distinct renewTimes |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| idle (leader) | — | $(mib "$idle") | — | — | — |"

# Phase 1: CLIENTS clients posting maximal reviews back to back.
: >"$work/codes"
stop="$work/stop"
clients=()
for _ in $(seq "$CLIENTS"); do
  ( while [ ! -e "$stop" ]; do post "$work/max.json" "$work/codes"; done ) &
  clients+=($!)
done
pids+=("${clients[@]}")
peak=$(sample "$SECONDS_UNDER_LOAD")
touch "$stop"
wait "${clients[@]}"
summary "$CLIENTS clients × maximal reviews" "$SECONDS_UNDER_LOAD" "$peak" "$work/codes"

# Phase 2: the attack of the issue, four concurrent 50 MB reviews, repeated.
: >"$work/huge-codes"
rm -f "$stop"
clients=()
for _ in 1 2 3 4; do
  ( while [ ! -e "$stop" ]; do post "$work/huge.json" "$work/huge-codes"; done ) &
  clients+=($!)
done
pids+=("${clients[@]}")
peak=$(sample 10)
touch "$stop"
wait "${clients[@]}"
summary "4 clients × 50 MB reviews" 10 "$peak" "$work/huge-codes"

sleep 5
echo "| after (5 s idle) | — | $(mib "$(rss_kib)") (VmHWM $(mib "$(hwm_kib)")) | — | — | — |"
echo
if kill -0 "$reconciler" 2>/dev/null && grep -q holderIdentity <(curl -sf "$lease"); then
  echo "The reconciler is alive and still holds the Lease: $(curl -sf "$lease" | python3 -c 'import json,sys; s=json.load(sys.stdin)["spec"]; print(s["holderIdentity"], "transitions", s.get("leaseTransitions"))')."
else
  echo "The reconciler exited or lost the Lease:" >&2
  tail -20 "$work/reconciler.log" >&2
  exit 1
fi
