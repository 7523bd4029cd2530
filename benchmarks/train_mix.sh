#!/usr/bin/env bash
# Train the matched pair for every kind of text on the mix (corpora/mixes/all-kinds.toml).
#
#   bash benchmarks/train_mix.sh cuda 3000    # a GPU: the pair at context 1024, ~8 minutes each on an H200
#   bash benchmarks/train_mix.sh cpu 2000     # this CPU: the same commands, smaller batch (hours)
#
# Both models share one tokenizer (ubpe8192: pieces along UTF-8 characters, learned on the mix by
# weight; benchmarks/results/vocab.md) and one token budget: the same steps, batch and context. Runs
# are resumable (run the same command again) and write runs/mix-*/model with the training record:
# command, mix, steps, hardware and validation bits per byte per kind.
set -euo pipefail
DEVICE=${1:-cpu}
STEPS=${2:-2000}
LMZIP=${LMZIP:-lmzip}
MIX=corpora/mixes/all-kinds.toml
TOK=runs/tokenizers/ubpe8192.json
if [ "$DEVICE" = cpu ]; then BATCH=16 CONTEXT=256 THREADS=1; else BATCH=64 CONTEXT=1024 THREADS=4; fi
mkdir -p runs/tokenizers
[ -f "$TOK" ] || python benchmarks/vocab.py --specs ubpe8192
for arch in gpt lstm; do
  $LMZIP train --data "$MIX" --preset "$arch-wide" --tokenizer "$TOK" --context "$CONTEXT" \
    --device "$DEVICE" --threads "$THREADS" --batch "$BATCH" --steps "$STEPS" --eval-every 250 \
    --out "runs/mix-$arch-wide-$DEVICE" --name "$arch-mix"
done
