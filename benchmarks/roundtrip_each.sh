#!/bin/bash
# Round trips of one level through the command line, each file in processes of its own (compressor, then
# decompressor, one job and one thread each), then a byte-for-byte comparison: for the levels that take hours
# over the bench (-7 to -9 code ~2 KB/s), across sessions.
#
#   bash benchmarks/roundtrip_each.sh LEVEL [largest] [CORPUS]
#
# Appends one row a file to benchmarks/results/roundtrip-each/level-LEVEL.tsv (file, bytes, compressed bytes,
# bpb, seconds each way, peak MiB each way, result, commit; $ROUNDTRIP_RESULTS names another folder), smallest
# file first ("largest": largest first, so a second run beside the first meets it in the middle). Resumable: a
# file with a row is done, so a run stopped with its session goes on from the committed rows in the next; a file
# another run is coding is claimed in $ROUNDTRIP_WORK/level-LEVEL (default runs/roundtrip-each; a run that is
# stopped removes its claim). Prints the rows' totals; exits non-zero if any row's file did not come back exactly
# ("different", or "failed": lmzip exited non-zero). CORPUS is read from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
level=${1:?level: 1-9}
order=-n
[ "${2:-}" = largest ] && order=-rn && shift
corpus=${2:-../shared/corpora/bench}
[ -d "$corpus" ] || { echo "roundtrip_each.sh: no corpus at $corpus" >&2; exit 2; }
out="${ROUNDTRIP_RESULTS:-benchmarks/results/roundtrip-each}/level-$level.tsv"
work="${ROUNDTRIP_WORK:-runs/roundtrip-each}/level-$level"
mkdir -p "$work" "$(dirname "$out")"
[ -e "$out" ] || printf 'file\tbytes\tcompressed\tbpb\tcompress_s\tdecompress_s\tcompress_MiB\tdecompress_MiB\tresult\tcommit\n' > "$out"
corpus=${corpus%/}
commit=$(git rev-parse --short HEAD)
status=0
# peak FILE: the peak KB /usr/bin/time wrote last (after a failure it writes a line before it), in MiB
peak() { echo $(( $(tail -n 1 "$1") / 1024 )); }
while IFS= read -r f; do
  name=$(printf '%s' "${f#"$corpus"/}" | tr '/' '_')
  cut -f1 "$out" | grep -qxF -- "$name" && continue                 # done: a row says so
  mkdir "$work/$name.claim" 2>/dev/null || continue                 # another run is coding it
  trap 'rm -rf "$work/$name.claim"' EXIT                            # a stopped run leaves no claim behind
  result=exact
  s=$(date +%s.%N)
  /usr/bin/time -f %M -o "$work/$name.mc" .venv/bin/lmzip compress "-$level" -j 1 --threads 1 -q -c "$f" \
    > "$work/$name.lmz" || result=failed
  m=$(date +%s.%N)
  if [ $result = exact ]; then
    /usr/bin/time -f %M -o "$work/$name.md" .venv/bin/lmzip decompress -j 1 --threads 1 -q -c "$work/$name.lmz" \
      > "$work/$name.back" || result=failed
  else
    echo 0 > "$work/$name.md"
  fi
  e=$(date +%s.%N)
  [ $result = exact ] && ! cmp -s "$f" "$work/$name.back" && result=different
  [ $result = exact ] || status=1
  bytes=$(stat -c %s "$f") packed=$(stat -c %s "$work/$name.lmz")
  printf '%s\t%d\t%d\t%.3f\t%.1f\t%.1f\t%d\t%d\t%s\t%s\n' "$name" "$bytes" "$packed" \
    "$(echo "8 * $packed / $bytes" | bc -l)" "$(echo "$m - $s" | bc)" "$(echo "$e - $m" | bc)" \
    "$(peak "$work/$name.mc")" "$(peak "$work/$name.md")" "$result" "$commit" >> "$out"
  rm -rf "$work/$name.back" "$work/$name.claim"                   # the row says it is done now
  trap - EXIT
done < <(find "$corpus" -type f -printf '%s %p\n' | sort $order | cut -d' ' -f2-)
awk -F'\t' 'NR > 1 { n++; b += $2; c += $3; ok += ($9 == "exact") }
  END { printf "level-%s: %d files, %d exact, %.0f of %.0f bytes, %.4f bpb\n", L, n, ok, c, b, b ? 8 * c / b : 0
        exit ok < n }' L="$level" "$out" || status=1
exit $status
