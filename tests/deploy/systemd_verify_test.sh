#!/usr/bin/env bash
# deploy/systemd: `systemd-analyze verify` passes on both units with no warning. The units name
# /usr/bin/benchfleet-* as packaged; verify needs ExecStart to exist, so it checks a copy whose
# binaries are the ones this build made. Also checks the sandbox settings the README promises.
# Exit 77 (skipped) without systemd-analyze.
# Usage: systemd_verify_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
bin=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in benchfleet-coordinator benchfleet-agent; do
  f=$src/deploy/systemd/$unit.service
  grep -q "^ExecStart=/usr/bin/$unit " "$f" || fail "$unit: ExecStart is not /usr/bin/$unit"
  exe=$bin/$unit
  [[ -x "$exe" ]] || exe=/bin/true  # a build without this program: check the rest of the unit
  sed "s#^ExecStart=/usr/bin/$unit #ExecStart=$exe #" "$f" > "$tmp/$unit.service"
  for setting in 'ProtectSystem=strict' 'NoNewPrivileges=yes' 'Restart=on-failure' 'DynamicUser=yes' \
                 "StateDirectory=$unit" 'CapabilityBoundingSet=' 'EnvironmentFile=-/etc/default/'; do
    grep -q "^$setting" "$f" || fail "$unit: no $setting"
  done
  grep -q '^ProtectHome=' "$f" || fail "$unit: no ProtectHome"
  grep -q '^LoadCredential=' "$f" || fail "$unit: secrets not passed as credentials"
  [[ -f "$src/deploy/systemd/$unit.default" ]] || fail "$unit: no $unit.default"
done
out=$(cd "$tmp" && systemd-analyze verify ./benchfleet-coordinator.service ./benchfleet-agent.service 2>&1) \
  || fail "systemd-analyze verify: $out"
[[ -z "$out" ]] || fail "systemd-analyze verify warned: $out"
echo "deploy/systemd: systemd-analyze verify passes ($(systemd-analyze --version | head -n 1))"
