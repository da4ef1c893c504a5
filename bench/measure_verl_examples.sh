#!/usr/bin/env bash
# How many override keys in verl's own main_ppo example scripts are invalid for v0.9.0, before and
# after `verl-migrate --to v0.9.0`. Usage: bench/measure_verl_examples.sh VERL_CLONE [REV...]
# (VERL_CLONE may be bare; nothing from it is written into this repository.)
set -euo pipefail
verl=${1:?usage: $0 VERL_CLONE [REV...]}
shift
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(v0.6.1 v0.7.1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() {  # count VM003 and VM007 findings and the files they are in, from lint's JSON on stdin
  python3 -c 'import json,sys; f=[x for x in json.load(sys.stdin) if x["code"] in ("VM003","VM007")]; print(len(f), "keys in", len({x["path"] for x in f}), "files")'
}
for rev in "${revs[@]}"; do
  tree="$work/$rev"
  mkdir -p "$tree"
  git -C "$verl" archive "$rev" examples recipe 2>/dev/null | tar -x -C "$tree" \
    || git -C "$verl" archive "$rev" examples | tar -x -C "$tree"
  scripts=$(grep -rl --include='*.sh' 'main_ppo' "$tree" | wc -l)
  before=$( { verl-migrate lint --to v0.9.0 --select VM003,VM007 --output-format json "$tree" || true; } | count)
  bad_before=$(find "$tree" -name '*.sh' -exec sh -c 'bash -n "$1" 2>/dev/null || echo x' _ {} \; | wc -l)
  verl-migrate --to v0.9.0 -q "$tree" > "$work/$rev.findings" 2>&1 || true
  after=$( { verl-migrate lint --to v0.9.0 --select VM003,VM007 --output-format json "$tree" || true; } | count)
  bad_after=$(find "$tree" -name '*.sh' -exec sh -c 'bash -n "$1" 2>/dev/null || echo x' _ {} \; | wc -l)
  again=0; verl-migrate --to v0.9.0 --check -q "$tree" > /dev/null 2>&1 || again=$?
  echo "$rev: $scripts main_ppo scripts; invalid for v0.9.0 before: $before; after: $after;" \
       "bash -n failures $bad_before -> $bad_after; second run --check exit $again"
  verl-migrate lint --to v0.9.0 --select VM003,VM007 "$tree" | sed "s|$tree/|  |" || true
done
