#!/bin/bash
# Round trips through the command line, compressor and decompressor in separate processes: every
# file of a corpus (its first LIMIT bytes) in one coding mode, then a byte-for-byte comparison.
#
#   bash benchmarks/roundtrip.sh MODE [MODEL] [LIMIT] [CORPUS]
#   MODE: static | mix | adapt | adapt+mix | scratch (lstm-nano from seeded random weights)
#   LIMIT: bytes per file (default 65536), or "full" for whole files
#
# Writes benchmarks/results/roundtrip/MODEL_MODE_LIMIT.tsv (file, bytes, compressed bytes, bpb,
# result; $ROUNDTRIP_RESULTS names another folder) and exits non-zero if any file does not come
# back exactly.
#
# Resumable: the run works in $ROUNDTRIP_WORK/MODEL_MODE_LIMIT (default runs/roundtrip/…), and a
# run that was stopped (a session ending under an hours-long adaptive run) goes on where it stopped
# when started again with the same arguments: lmzip writes each output whole or not at all, so a
# .lmz (or a decompressed file) that exists is finished, and only the missing ones are coded. The
# seconds of every attempt add up, and the log names each commit that took part.
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
run="${model}_${mode}_${limit}"
work="${ROUNDTRIP_WORK:-runs/roundtrip}/$run"
if [ ! -d "$work/orig" ]; then
  rm -rf "$work" && mkdir -p "$work/in" "$work/new"
  (cd "$corpus" && find . -type f | sort) | while read -r f; do
    name=$(echo "${f#./}" | tr '/' '_')
    if [ "$limit" = full ]; then cp "$corpus/$f" "$work/new/$name"; else head -c "$limit" "$corpus/$f" > "$work/new/$name"; fi
  done
  mv "$work/new" "$work/orig"                       # the copy is complete only once it is named orig
  echo 0 > "$work/compress.s" && echo 0 > "$work/decompress.s"
else
  echo "roundtrip.sh: resuming $work" >&2
fi
git rev-parse --short HEAD >> "$work/attempts"                   # one line per attempt: the commit it ran
find "$work/in" -name '.*.tmp' -delete                 # what a stopped lmzip was writing
# add DIRECTION SECONDS: the seconds coding took, summed over attempts.
add() { echo $(( $(cat "$work/$1.s") + ($2 > 0 ? $2 : 0) )) > "$work/$1.s"; }
# settle DIRECTION: an attempt that was stopped left its start time behind; it counts up to its
# last finished output (the file it was coding is coded again, and that time is not counted).
settle() {
  [ -e "$work/$1.start" ] || return 0
  local last; last=$(find "$work/in" -type f -printf '%T@\n' | sort -n | tail -1 | cut -d. -f1)
  add "$1" $(( ${last:-0} - $(cat "$work/$1.start") )) && rm "$work/$1.start"
}
settle compress && settle decompress
# timed DIRECTION COMMAND...: run lmzip and count its seconds.
timed() {
  local name=$1; shift
  date +%s > "$work/$name.start"
  "$@"
  add "$name" $(( $(date +%s) - $(cat "$work/$name.start") )) && rm "$work/$name.start"
}
todo=()
if [ ! -e "$work/compressed" ]; then
  for o in "$work/orig/"*; do
    n=$(basename "$o")
    [ -e "$work/in/$n.lmz" ] && continue
    [ -e "$work/in/$n" ] || cp "$o" "$work/in/$n"
    todo+=("$work/in/$n")
  done
  [ ${#todo[@]} -eq 0 ] || timed compress .venv/bin/lmzip compress -q "${flags[@]}" "${todo[@]}"  # one process writes every .lmz
  find "$work/in" -type f ! -name '*.lmz' -delete
  touch "$work/compressed"
fi
todo=()
for o in "$work/orig/"*; do
  n=$(basename "$o")
  [ -e "$work/in/$n" ] || todo+=("$work/in/$n.lmz")
done
[ ${#todo[@]} -eq 0 ] || timed decompress .venv/bin/lmzip decompress -q "${todo[@]}"  # another reads them back
out=${ROUNDTRIP_RESULTS:-benchmarks/results/roundtrip}
mkdir -p "$out"
tsv="$out/$run.tsv"
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
echo "$mode ($model, $limit): $(($(wc -l < "$tsv") - 1)) files, $fails different; compress $(cat "$work/compress.s") s," \
     "decompress $(cat "$work/decompress.s") s; git $(awk '!seen[$0]++' "$work/attempts" | paste -sd+), $(date -u +%F)$(
       a=$(wc -l < "$work/attempts"); [ "$a" -eq 1 ] || echo ", $a attempts")" | tee -a "$tsv.log"
rm -rf "$work"
[ "$fails" -eq 0 ]
