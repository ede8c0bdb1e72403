#!/bin/sh
# The compose file's one-shot `enroll` service: asks the coordinator (with the operator token)
# for an enrollment token for the agent service, once. The agent enrolls with it on its first
# start and keeps its certificate in its state volume; later runs find the token and stop.
set -eu
umask 077
out=/secrets/agent-enroll/token
[ -s "$out" ] && exit 0
tries=0
until benchfleet --coordinator coordinator:7443 --ca-cert /run/benchfleet/tls/ca.pem \
    --token-file /run/benchfleet/operator-token agents enroll --uses 1 --expires 1h > "$out.tmp"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 30 ]; then
    echo "enroll: the coordinator did not answer in 60 s" >&2
    exit 1
  fi
  sleep 2
done
# The command prints the token (bfe_...) on its own line.
grep -o 'bfe_[A-Za-z0-9_-]\{43\}' "$out.tmp" | head -n 1 > "$out"
rm -f "$out.tmp"
test -s "$out"
