"""Does every certificate decide? Every catalog algorithm (``src/openbook/catalog.py``)
under four models on Adult, and on the 300-row table of issue 25, each anonymized and
certified (every adversary that applies) in a process of its own with a time limit:

* Adult (45,222 rows; QIs age, workclass, education, marital-status, race, sex,
  native-country with Adult's hierarchies; SA occupation) × {distinct 3-diversity, simple
  6-diversity of Tech-support, t = 0.2, k = 5}: the verdict on both lines (identity,
  attribute), the attribute line's worst figure, unresolved people, anonymize and certify
  seconds, and their ratio;
* the 300-row table (age 20-70, a 4-value zip, 4 SA values; seed 0), ``l=2``,
  ``max_risk=1.0``, with age categorical and with age numeric: verdict, unresolved, certify
  seconds (target: under 5 s, nobody unresolved);
* tables of the same shape and seed with 50, 1,000, 3,000 and 10,000 rows: unresolved people
  and certify seconds per algorithm (targets: nobody unresolved, no adversary above 5 s).

An algorithm that does not accept the model (or the table) says why in one cell.

    .venv/bin/python bench/bench_certificate_table.py                 # prints the Markdown
    .venv/bin/python bench/bench_certificate_table.py --write-docs    # also rewrites the table in docs/certificate.md
    .venv/bin/python bench/bench_certificate_table.py --only small    # just the 300-row table
    .venv/bin/python bench/bench_certificate_table.py --only sizes    # random tables, 50 to 10^4 rows
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs" / "certificate.md"
START, END = "<!-- certificate-table:start -->", "<!-- certificate-table:end -->"

MODELS = [("distinct 3-diversity", "l=3"), ("simple 6-diversity of Tech-support", "simple-l=6,set=tech-support"),
          ("t = 0.2", "t=0.2"), ("k = 5", "k=5")]

#: algorithm -> parameters (the catalog's defaults otherwise); full-domain takes fixed levels
PARAMS: dict[str, dict] = {
    "rgg": {"p": 0.65}, "rgg-ana": {"p": 0.65}, "full-domain": {"levels": [2, 1, 1, 1, 0, 0, 1]},
    "full-domain-search": {"max_suppression": 0.02}, "mondrian": {"strict": True},
    "anatomize": {"base": "mondrian"}, "mask": {"k": 5},
}
EXTRA_ROWS = [("mondrian (relaxed)", "mondrian", {"strict": False})]

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np, pandas as pd
from openbook.algorithms.registry import make_algorithm
from openbook.certificate import certify
from openbook.models import make_model
spec = json.loads(sys.argv[1])
if spec["table"] == "adult":
    from openbook.data.datasets import load_dataset
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    ds = load_dataset("adult")
    qi = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
    schema = Schema.build(qi=["age:numeric", *qi[1:]], sa="occupation",
                          sensitive_sets={"tech-support": ["Tech-support"]})
    table = encode(ds.frame, schema, {c: ds.hierarchies[c] for c in qi if c in ds.hierarchies})
else:
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    rng = np.random.default_rng(0)
    n = spec.get("n", 300)
    df = pd.DataFrame({"age": rng.integers(20, 71, n), "zip": rng.choice(["z1", "z2", "z3", "z4"], n),
                       "disease": rng.choice(["flu", "cold", "hiv", "cancer"], n)})
    table = encode(df, Schema.build(qi=[spec["age"], "zip"], sa="disease"))
model = make_model(spec["model"])
out = {}
try:
    algo = make_algorithm(spec["algorithm"], model=model, seed=1, **spec["params"])
    t0 = time.perf_counter()
    rel = algo.anonymize(table)
    out["anonymize_s"] = time.perf_counter() - t0
except Exception as e:
    out["refused"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out)); sys.exit(0)
t0 = time.perf_counter()
cert = certify(rel, original=table, max_risk=spec.get("max_risk"))
out["certify_s"] = time.perf_counter() - t0
out["verdict"] = cert.verdict
out["lines"] = {ln.name: ln.passes for ln in cert.lines}
ran = [f for f in cert.findings if f.ran and f.disclosure == "attribute"]
out["max_posterior"] = max((f.max_posterior for f in ran if f.max_posterior is not None), default=None)
out["unresolved"] = sum(int(f.n_unresolved or 0) for f in cert.findings if f.ran)
out["unaware"] = cert.unaware() or ""
print(json.dumps(out))
"""


def run(spec: dict, timeout: float) -> dict:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": tail[:200]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    return out


def _algorithms() -> list[tuple[str, str, dict]]:
    sys.path.insert(0, str(ROOT / "src"))
    from openbook.catalog import CATALOG

    rows = [(name, name, PARAMS.get(name, {})) for name in CATALOG]
    return rows + EXTRA_ROWS


def _cell(r: dict) -> list[str]:
    if "timeout" in r:
        return [f"did not finish in {r['timeout']:.0f} s"] + [""] * 5
    if "error" in r:
        return [f"error: {r['error']}"] + [""] * 5
    if "refused" in r:
        why = re.sub(r"\s+", " ", r["refused"])[:110]
        return [f"not accepted: {why}"] + [""] * 5
    lines = r["lines"]
    verdict = f"{r['verdict']} (identity {'✓' if lines.get('identity') else '✗'}, " \
              f"attribute {'✓' if lines.get('attribute') else '✗'})"
    if r.get("unaware"):  # the attribute line cannot pass: nobody re-ran the algorithm
        verdict += " — " + re.sub(r"\s+", " ", r["unaware"])[:90]
    mp = "–" if r["max_posterior"] is None else f"{r['max_posterior']:.3g}"
    ratio = r["certify_s"] / r["anonymize_s"] if r["anonymize_s"] > 0 else float("inf")
    return [verdict, mp, f"{r['unresolved']:,}", f"{r['anonymize_s']:.2f}", f"{r['certify_s']:.2f}", f"{ratio:.1f}×"]


def adult_table(timeout: float) -> str:
    head = ("| algorithm | model | verdict | worst posterior | unresolved | anonymize s | certify s | "
            "certify / anonymize |\n|---|---|---|---|---|---|---|---|\n")
    body = []
    for label, name, params in _algorithms():
        for mlabel, spec in MODELS:
            r = run({"table": "adult", "algorithm": name, "params": params, "model": spec}, timeout)
            body.append(f"| {label} | {mlabel} | " + " | ".join(_cell(r)) + " |")
            print(body[-1], file=sys.stderr, flush=True)
    return head + "\n".join(body) + "\n"


def small_table(timeout: float) -> str:
    head = ("| algorithm | age | verdict | worst posterior | unresolved | anonymize s | certify s | "
            "certify / anonymize |\n|---|---|---|---|---|---|---|---|\n")
    body = []
    for label, name, params in _algorithms():
        if name == "full-domain":
            params = {"levels": [1, 0]}
        if name == "full-domain-search":
            params = {}  # the call: the algorithm's defaults (no suppression budget)
        for age in ("age", "age:numeric"):
            r = run({"table": "small", "algorithm": name, "params": params, "model": "l=2", "age": age,
                     "max_risk": 1.0}, timeout)
            body.append(f"| {label} | {'categorical' if age == 'age' else 'numeric'} | " + " | ".join(_cell(r)) + " |")
            print(body[-1], file=sys.stderr, flush=True)
    return head + "\n".join(body) + "\n"


#: random tables of the issue's shape (age 20-70, a 4-value zip, 4 SA values), l = 2
SIZES = (50, 1000, 3000, 10_000)


def sizes_table(timeout: float) -> str:
    """Per algorithm that accepts ``l=2`` and size: unresolved people and certify seconds,
    age categorical / numeric (issue 25: nobody unresolved from 50 to 10^4 rows, no adversary
    above 5 s)."""
    cols = [(n, age) for n in SIZES for age in ("age", "age:numeric")]
    head = ("| algorithm | " + " | ".join(f"{n:,} {'cat.' if a == 'age' else 'num.'}" for n, a in cols) + " |\n"
            + "|---" * (len(cols) + 1) + "|\n")
    body = []
    for label, name, params in _algorithms():
        if name == "full-domain":
            continue  # fixed levels: one table's choice, not a size's
        if name == "full-domain-search":
            params = {}
        cells = []
        for n, age in cols:
            r = run({"table": "small", "n": n, "algorithm": name, "params": params, "model": "l=2", "age": age,
                     "max_risk": 1.0}, timeout)
            if "timeout" in r:
                cells.append(f"> {timeout:.0f} s")
            elif "refused" in r or "error" in r:
                cells.append("–")
            else:
                cells.append(f"{r['unresolved']:,} · {r['certify_s']:.1f} s")
        if all(c == "–" for c in cells):
            continue
        body.append(f"| {label} | " + " | ".join(cells) + " |")
        print(body[-1], file=sys.stderr, flush=True)
    return head + "\n".join(body) + "\n"


def _commit() -> str:
    """The checkout's commit (``+`` when its tree differs from it), for the docs block."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"], capture_output=True,
                           text=True).stdout.strip()
    return head + ("+" if dirty else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["adult", "small", "sizes"], help="one of the three tables")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per row (default 600)")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the table in docs/certificate.md")
    args = ap.parse_args()
    parts = ["## Does every certificate decide? (issue 25)\n",
             "Command: `.venv/bin/python bench/bench_certificate_table.py --write-docs`. Each row is one process: "
             "anonymize, then certify against every adversary that applies (the original table given). "
             "\"unresolved\" sums, over the adversaries that ran, the people each could not evaluate (they count "
             "as failing; a person two adversaries left unresolved counts twice).\n",
             f"Measured at commit {_commit()} on {time.strftime('%Y-%m-%d', time.gmtime())} "
             f"({os.cpu_count()} cores; warm numba cache unless the checkout is fresh).\n"]
    if args.only in (None, "small"):
        parts += ["### The 300-row table (l = 2, max_risk = 1.0; target: certify under 5 s, nobody unresolved)\n",
                  small_table(min(args.timeout, 120.0))]
    if args.only in (None, "adult"):
        parts += ["### Adult, every catalog algorithm under four models\n", adult_table(args.timeout)]
    if args.only in (None, "sizes"):
        parts += ["### Random tables from 50 to 10,000 rows (the 300-row table's shape and seed, l = 2, "
                  "max_risk = 1.0): unresolved people · certify seconds, age categorical and numeric; "
                  "60 s per cell at most; – the algorithm does not accept the table\n",
                  sizes_table(min(args.timeout, 60.0))]
    text = "\n".join(parts)
    print(text)
    if args.write_docs:
        doc = DOCS.read_text(encoding="utf-8")
        block = f"{START}\n{text}\n{END}"
        if START in doc:
            doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        else:
            doc = doc.rstrip("\n") + "\n\n" + block + "\n"
        DOCS.write_text(doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
