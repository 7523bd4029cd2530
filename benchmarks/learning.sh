#!/bin/bash
# Every learning mode against PPMd order 8 on book1, tinyshakespeare.txt and enwik6 (issue 5).
# One `lmzip bench` run per group of compressors, so a stopped run keeps what finished.
set -e
cd "$(dirname "$0")/.."
F=calgary/book1,shakespeare/tinyshakespeare.txt,enwik/enwik6
for c in "ppmd-o8,gpt-small+mix,lstm-small+mix" "gpt-small+adapt+mix" "gpt-small+adapt" \
         "lstm-small+adapt,lstm-small+adapt+mix"; do
  .venv/bin/lmzip bench --corpus ../shared/corpora/bench --files $F --compressors "$c" \
    --out "benchmarks/results/learning/$(echo "$c" | tr ',+' '__')" -q
done
