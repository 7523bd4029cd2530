"""Coding speed and peak memory of every preset, shipped model and coding mode on this machine.

Each measurement runs in a fresh process (so its peak memory is its own) with one thread
(--threads): compress, then decompress and verify; shipped models also with two groups at once (the
file's segment groups, which follow from the input size, coded two at a time in threads, as `lmzip
compress` does on two cores; the "processes" column) and in every mode (static, +mix, +adapt,
+adapt+mix). Presets without a shipped model run with random weights (their speed is real, their
bits per byte are not), and once learning from scratch. Every neural row is measured twice: as it is
(the int8 GEMM where lmzip.arith.exact's probe finds it the faster product) and with the int8 GEMM
off (LMZIP_INT8_GEMM=off: what a CPU without AVX-512 VNNI gets; the same file). Writes
benchmarks/results/speed.{json,md}.

    .venv/bin/python benchmarks/speed.py [--file corpora/canterbury/alice29.txt]
    .venv/bin/python benchmarks/speed.py --models gpt-wide,lstm-wide --modes static,mix   # re-measure some

A run limited by --models or --modes replaces those rows and keeps the others already in speed.json,
except rows measured before format 8 (they record no arithmetic), which are dropped. --models may name
presets without a shipped model too (random weights; with the adapt mode, the learning-from-scratch row).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from common import RESULTS, ROOT, cpu_model, write_json, write_md

CHILD = r"""
import json, sys, time, resource
import torch
torch.manual_seed(0)
from lmzip.coding import codec, format as fmt
from lmzip.models import registry
from lmzip.coding.settings import Settings
from lmzip.models.checkpoint import from_predictor
from lmzip.models.model import build_model, config_from_dict
from lmzip.models.tokenizer import ByteTokenizer
kind, name, mode, procs, threads, path = sys.argv[1:7]
procs, threads = int(procs), int(threads)
if kind == "counting":  # lmzip.cm, no model; its compiled loop is loaded once first (a cached numba compile)
    from lmzip.api import counting_level
    lm = None
    codec.encode(b"warm-up " * 64, lm, Settings.make(counting=counting_level(name)))
elif kind == "model":
    lm = registry.load(name)
elif kind == "scratch":
    lm = registry.scratch(name, 0)  # as the +scratch benchmark rows
else:
    p = registry.PRESETS[name]
    tok = ByteTokenizer() if p.tokenizer == "bytes" else registry.load().tokenizer
    lm = from_predictor(build_model(config_from_dict(dict(p.model, vocab_size=tok.vocab_size))), tok, name)
# what `lmzip compress` uses for these options
settings = Settings.make(mix="mix" in mode, adapt=kind == "scratch" or "adapt" in mode,
                         seed=0 if kind == "scratch" else None, threads=threads,
                         counting=counting_level(name) if kind == "counting" else None)
data = open(path, "rb").read()
if "mix" in mode:  # mix's compiled loop (lmzip.cm.mix) is loaded once first, as counting's above
    codec.encode(b"warm-up " * 64, lm, Settings.make(mix=True))
t0 = time.perf_counter(); blob, head, bits = codec.encode(data, lm, settings, workers=procs)
t1 = time.perf_counter()
out = codec.decode(*fmt.unpack(blob), lm, workers=procs, threads=threads); t2 = time.perf_counter()
from lmzip.arith import exact
print(json.dumps({"name": name, "kind": kind, "mode": mode, "processes": procs, "threads": threads,
  "int8_gemm": exact.int8_gemm(1024), "kernel": exact.KERNEL, "cpu": torch.backends.cpu.get_cpu_capability(),
  "groups": head.groups,
  "arithmetic": head.arith,
  "bytes": len(data), "compressed": len(blob), "stored": head.stored,
  "segments": head.n_segments, "ideal_bits": bits, "compress_kbps": len(data) / 1e3 / (t1 - t0),
  "decompress_kbps": len(data) / 1e3 / (t2 - t1), "verified": out == data,
  "params": lm.predictor.num_params() if lm else 0,
  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(ROOT / "corpora" / "canterbury" / "alice29.txt"))
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--models", help="only these shipped models or presets (comma-separated)")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per process")
    ap.add_argument("--modes", default="static,mix,adapt,adapt+mix", help="coding modes of the shipped models")
    args = ap.parse_args()
    from lmzip.api import counting_level
    from lmzip.models import registry

    have = list(registry.available())
    names = args.models.split(",") if args.models else ["cm"] + have + [n for n in registry.PRESETS if n not in have]
    counting = [n for n in names if counting_level(n) is not None]
    models, modes = [n for n in names if n in have], args.modes.split(",")
    presets = [n for n in names if n not in have and n not in counting]
    if unknown := [n for n in presets if n not in registry.PRESETS]:
        ap.error(f"unknown model {unknown[0]!r}")
    jobs = [("counting", n, "static", 1) for n in counting if "static" in modes]
    jobs += [("model", n, "static", p) for p in (1, 2) for n in models if "static" in modes]
    jobs += [("model", n, m, 1) for m in ("mix", "adapt", "adapt+mix") if m in modes for n in models]
    jobs += [("preset", n, "static", 1) for n in presets if "static" in modes]
    jobs += [("scratch", n, "adapt", 1) for n in presets
             if "adapt" in modes and registry.PRESETS[n].tokenizer == "bytes"]
    out = Path(args.out)
    old = json.loads((out / "speed.json").read_text())["rows"] if (out / "speed.json").exists() else []
    key = lambda x: (x["kind"], x["name"], x["mode"], x["processes"])  # noqa: E731
    redo = {(k, n, m, p) for k, n, m, p in jobs}
    rows = [x for x in old if key(x) not in redo and "arithmetic" in x] \
        if args.models or args.modes != ap.get_default("modes") else []
    for kind, name, mode, procs in jobs:
        x = _child(kind, name, mode, procs, args)
        if kind != "counting":  # again without the int8 GEMM: what a CPU without VNNI gets, the same file
            off = _child(kind, name, mode, procs, args, {"LMZIP_INT8_GEMM": "off"})
            assert off["compressed"] == x["compressed"], f"{name} {mode}: the products wrote different files"
            x.update(compress_kbps_int8_off=off["compress_kbps"], decompress_kbps_int8_off=off["decompress_kbps"])
        rows.append(x)
        slow = (f"  (int8 GEMM off: {x['compress_kbps_int8_off']:6.1f} / {x['decompress_kbps_int8_off']:6.1f})"
                if kind != "counting" else "")
        print(f"{name:12s} {kind:7s} {mode:9s} {procs} proc  bpb {8 * x['compressed'] / x['bytes']:.3f}"
              f"  compress {x['compress_kbps']:6.1f} KB/s  decompress {x['decompress_kbps']:6.1f} KB/s{slow}"
              f"  peak {x['peak_mib']:.0f} MiB  {'ok' if x['verified'] else 'FAILED'}", flush=True)
    order = {n: i for i, n in enumerate(registry.available())}
    rows.sort(key=lambda x: (x["kind"] not in ("counting", "model"), x["processes"] if x["mode"] == "static" else 3,
                             ("static", "mix", "adapt", "adapt+mix").index(x["mode"]), order.get(x["name"], 99)))
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "speed.json", {"file": Path(args.file).name, "rows": rows})
    lines = [f"Coding speed on {Path(args.file).name} (benchmarks/speed.py). Arithmetic 3: exact integer "
             "prediction with int8 operands; 4: the same, learning in deterministic float64 with int8-limb "
             "products (1 and 2: their lmzip 0.3.0-0.4.0 forms). All decode on any machine.", "",
             f"CPU: {_cpu_line(rows)}. The int8 GEMM columns: as it is (lmzip.arith.exact's probe chooses the "
             "int8 GEMM where it is the faster product); the int8-off columns: LMZIP_INT8_GEMM=off, what a CPU "
             "without AVX-512 VNNI gets (the same files).", "",
             "| model | weights | mode | processes | threads each | groups | arithmetic | params | bpb | "
             "compress KB/s | decompress KB/s | int8 off: compress | int8 off: decompress | peak MiB (main process) |",
             "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    weights = {"model": "shipped", "preset": "random (speed only)", "scratch": "random, learns from scratch",
               "counting": "none: counting (lmzip.cm)"}
    for x in rows:
        bpb = f"{8 * x['compressed'] / x['bytes']:.3f}" if x["kind"] != "preset" else "–"
        lines.append(f"| {x['name']} | {weights[x['kind']]} | {x['mode']} | {x['processes']} | {x.get('threads', 1)} | "
                     f"{x.get('groups', '')} | {x['arithmetic']} | "
                     f"{x['params'] / 1e6:.2f} M | {bpb} | {x['compress_kbps']:.1f} | {x['decompress_kbps']:.1f} | "
                     f"{_kbps(x, 'compress_kbps_int8_off')} | {_kbps(x, 'decompress_kbps_int8_off')} | "
                     f"{x['peak_mib']:.0f} |")
    write_md(out / "speed.md", lines)
    if out.resolve() != Path(ap.get_default("out")).resolve():
        return  # another CPU's table (--out): `lmzip models` keeps the default folder's figures
    # `lmzip models` shows the measured speed of the shipped models from this sidecar
    shipped = {x["name"]: {"compress_kbps": round(x["compress_kbps"], 2),
                           "decompress_kbps": round(x["decompress_kbps"], 2), "file": Path(args.file).name}
               for x in rows if x["kind"] == "model" and x["mode"] == "static" and x["processes"] == 1}
    write_json(registry.SHIPPED / "speed.json", shipped)


def _child(kind: str, name: str, mode: str, procs: int, args, env: dict | None = None) -> dict:
    """One measurement in a fresh process (one thread each, as OMP_NUM_THREADS says)."""
    r = subprocess.run([sys.executable, "-c", CHILD, kind, name, mode, str(procs), str(args.threads), args.file],
                       capture_output=True, text=True,
                       env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", **(env or {})}, cwd=ROOT)
    if r.returncode:
        sys.exit(f"{name}: {r.stderr.strip().splitlines()[-1]}")
    return json.loads(r.stdout)


def _kbps(x: dict, key: str) -> str:
    return f"{x[key]:.1f}" if key in x else "–"


def _cpu_line(rows: list[dict]) -> str:
    """The CPU the rows were measured on: its model name, torch's capability, the kernel the probe took."""
    name = cpu_model()
    caps = sorted({x.get("cpu", "?") for x in rows if "cpu" in x})
    kernel = sorted({str(x.get("kernel", x["int8_gemm"])) for x in rows if "int8_gemm" in x})
    return f"{name}, torch capability {'/'.join(caps) or '?'}, product kernel chosen: {'/'.join(kernel) or '?'}"


if __name__ == "__main__":
    main()
