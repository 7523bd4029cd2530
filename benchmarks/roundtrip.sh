#!/bin/bash
# Round trips through the command line, compressor and decompressor in separate processes: every
# file of a corpus (its first LIMIT bytes) in one coding mode, then a byte-for-byte comparison.
#
#   bash benchmarks/roundtrip.sh MODE [MODEL] [LIMIT] [CORPUS]
#   MODE: static | mix | adapt | adapt+mix | scratch (lstm-nano from seeded random weights)
#   LIMIT: bytes per file (default 65536), or "full" for whole files
#
# Writes benchmarks/results/roundtrip/MODEL_MODE_LIMIT.tsv (file, bytes, compressed bytes, bpb,
# result) and exits non-zero if any file does not come back exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?mode: static, mix, adapt, adapt+mix or scratch}
model=${2:-gpt-wide}
limit=${3:-65536}
corpus=${4:-../shared/corpora/bench}
case $mode in
  static) flags=(-m "$model") ;;
  mix) flags=(-m "$model" --mix) ;;
  adapt) flags=(-m "$model" --adapt) ;;
  adapt+mix) flags=(-m "$model" --adapt --mix) ;;
  scratch) model=lstm-nano; flags=(-m lstm-nano --adapt --seed 0) ;;
  *) echo "roundtrip.sh: unknown mode $mode" >&2; exit 1 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in" "$work/orig"
(cd "$corpus" && find . -type f | sort) | while read -r f; do
  name=$(echo "${f#./}" | tr '/' '_')
  if [ "$limit" = full ]; then cp "$corpus/$f" "$work/in/$name"; else head -c "$limit" "$corpus/$f" > "$work/in/$name"; fi
done
cp "$work/in/"* "$work/orig/"
start=$(date +%s)
.venv/bin/lmzip compress -q "${flags[@]}" "$work/in/"*                # one process writes every .lmz
mid=$(date +%s)
find "$work/in" -type f ! -name '*.lmz' -delete
.venv/bin/lmzip decompress -q "$work/in/"*.lmz                         # another reads them back
end=$(date +%s)
out=benchmarks/results/roundtrip
mkdir -p $out
tsv="$out/${model}_${mode}_${limit}.tsv"
fails=0
{
  echo -e "file\tbytes\tcompressed\tbpb\tresult"
  for o in "$work/orig/"*; do
    n=$(basename "$o")
    size=$(stat -c %s "$o")
    c=$(stat -c %s "$work/in/$n.lmz" 2>/dev/null || echo 0)
    if cmp -s "$o" "$work/in/$n"; then r=exact; else r=DIFFERENT; fails=$((fails + 1)); fi
    echo -e "$n\t$size\t$c\t$(python3 -c "print(round(8 * $c / max(1, $size), 3))")\t$r"
  done
} > "$tsv"
echo "$mode ($model, $limit): $(($(wc -l < "$tsv") - 1)) files, $fails different; compress $((mid - start)) s," \
     "decompress $((end - mid)) s; git $(git rev-parse --short HEAD), $(date -u +%F)" | tee -a "$tsv.log"
[ "$fails" -eq 0 ]
