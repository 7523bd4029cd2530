#!/usr/bin/env bash
# Render `lmzip explain --html` in headless Chromium and save a screenshot (README figure).
#   apt-get install chromium   # once
#   bash benchmarks/screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/results
part=$(mktemp --suffix=.txt)
head -c 2600 corpora/canterbury/alice29.txt | tail -c 1600 > "$part"
.venv/bin/lmzip explain --max-bytes 0 -m gpt-small --vs lstm-small --html "$out/explain-alice.html" "$part"
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,1000 \
  --screenshot="$out/explain.png" "file://$PWD/$out/explain-alice.html"
rm -rf "$profile" "$part"
