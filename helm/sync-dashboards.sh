#!/usr/bin/env bash
# Copies deploy/grafana/dashboards/*.json into the chart (helm/benchfleet/dashboards/): Helm
# packages only files inside the chart and does not follow links out of it. Run it after editing
# a dashboard; tests/deploy (helm_chart_test) fails while the two folders differ.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/deploy/grafana/dashboards
dst=$root/helm/benchfleet/dashboards
rm -f "$dst"/*.json
install -m 0644 "$src"/*.json "$dst"/
