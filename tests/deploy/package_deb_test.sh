#!/usr/bin/env bash
# The Debian packages (cmake/Packaging.cmake): `cpack -G DEB` in this build tree, into a
# temporary folder, then each package checked with dpkg-deb: its name, version and Depends
# (dpkg-shlibdeps: the bookworm libraries), its files (binaries in /usr/bin, units in
# /lib/systemd/system, conffiles) and that the packaged program runs (--version).
# Needs the three programs (and the agent's workflow-standin) built. Usage: package_deb_test.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1
src=$2
version=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
for exe in benchfleet-agent benchfleet-coordinator benchfleet workflow-standin; do
  [[ -x "$build/bin/$exe" ]] || fail "$build/bin/$exe is not built"
done
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Fast: gzip at its lowest level (the test checks contents, not size).
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" \
   -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip >"$tmp/cpack.log" 2>&1) \
  || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB"; }

arch=$(dpkg --print-architecture)
declare -A want_files=(
  [benchfleet-agent]="./usr/bin/benchfleet-agent ./lib/systemd/system/benchfleet-agent.service ./etc/default/benchfleet-agent ./usr/share/doc/benchfleet-agent/agent.example.yaml ./usr/libexec/benchfleet/workflow-standin"
  [benchfleet-coordinator]="./usr/bin/benchfleet-coordinator ./lib/systemd/system/benchfleet-coordinator.service ./etc/default/benchfleet-coordinator ./usr/share/benchfleet/prometheus/rules.yml ./usr/share/benchfleet/grafana/dashboards/fleet-overview.json"
  [benchfleet-cli]="./usr/bin/benchfleet"
)
declare -A program=(
  [benchfleet-agent]=benchfleet-agent [benchfleet-coordinator]=benchfleet-coordinator [benchfleet-cli]=benchfleet
)
found=$(cd "$tmp/out" && ls -1 *.deb | sort | tr '\n' ' ')
[[ "$found" == "benchfleet-agent_${version}-1_${arch}.deb benchfleet-cli_${version}-1_${arch}.deb benchfleet-coordinator_${version}-1_${arch}.deb " ]] \
  || fail "packages: $found"

for pkg in benchfleet-agent benchfleet-coordinator benchfleet-cli; do
  deb=$tmp/out/${pkg}_${version}-1_${arch}.deb
  [[ $(dpkg-deb --field "$deb" Package) == "$pkg" ]] || fail "$pkg: Package field"
  [[ $(dpkg-deb --field "$deb" Version) == "${version}-1" ]] || fail "$pkg: Version field"
  depends=$(dpkg-deb --field "$deb" Depends)
  # Package names only: "libc6 (>= 2.34), libgrpc++1.51 (>= 1.51.1)" -> "libc6 libgrpc++1.51".
  names=" $(sed -E 's/ *\([^)]*\)//g; s/ *, */ /g' <<<"$depends") "
  for lib in libc6 libstdc++6 libgrpc++1.51 libprotobuf32 libabsl20220623; do
    [[ "$names" == *" $lib "* ]] || fail "$pkg: Depends lacks $lib: $depends"
  done
  contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
  for f in ${want_files[$pkg]}; do
    grep -qxF "$f" <<<"$contents" || fail "$pkg: no $f in $(tr '\n' ' ' <<<"$contents")"
  done
  # No file of another package (each binary in exactly one).
  for other in "${!program[@]}"; do
    [[ "$other" == "$pkg" ]] && continue
    ! grep -qxF "./usr/bin/${program[$other]}" <<<"$contents" || fail "$pkg holds ${program[$other]}"
  done
  # The packaged program runs and is stripped.
  dpkg-deb -x "$deb" "$tmp/root-$pkg"
  exe=$tmp/root-$pkg/usr/bin/${program[$pkg]}
  "$exe" --version | grep -qF "$version" || fail "$pkg: ${program[$pkg]} --version does not say $version"
  ! file "$exe" 2>/dev/null | grep -q 'with debug_info' || fail "$pkg: not stripped"
  if [[ "$pkg" != benchfleet-cli ]]; then
    unit=${pkg}.service
    cmp -s "$tmp/root-$pkg/lib/systemd/system/$unit" "$src/deploy/systemd/$unit" || fail "$pkg: $unit differs from deploy/systemd"
    dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -qx './conffiles' || fail "$pkg: no conffiles"
    dpkg-deb -I "$deb" conffiles | grep -qx "/etc/default/$pkg" || fail "$pkg: /etc/default/$pkg is not a conffile"
    for script in postinst prerm; do
      dpkg-deb -I "$deb" "$script" | grep -qF "$unit" || fail "$pkg: $script does not name $unit"
    done
    dpkg-deb -I "$deb" postrm | grep -qF 'systemctl daemon-reload' || fail "$pkg: postrm does not reload systemd"
  fi
  echo "$pkg: $(dpkg-deb --field "$deb" Installed-Size) KiB installed; Depends: $depends"
done
