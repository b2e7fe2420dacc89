"""Benchmark: `openbook check` levels on the full Adult (45,222 rows; 7 QIs: age,
workclass, education, marital-status, race, sex, native-country; SA occupation) versus
pyCANON 1.3.6 on the same table, in one run.

    .venv/bin/python bench/bench_check.py [--with-peer-t]

Target (issue 2): k, distinct/entropy ℓ and equal-distance t in under 1 s in-process, and
ℓ-diversity at least 10x faster than pyCANON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peers import machine, run_peer  # noqa: E402

from openbook.data.adult import load_adult  # noqa: E402
from openbook.data.grouping import group_ids  # noqa: E402
from openbook.data.schema import Schema  # noqa: E402
from openbook.data.table import encode  # noqa: E402
from openbook.models import make_model  # noqa: E402
from openbook.models.levels import compute_levels  # noqa: E402

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SA = "occupation"
REPEAT = 5

PEER = r"""
import json, sys, time
import pandas as pd
from pycanon import anonymity
df = pd.read_csv(sys.argv[1], dtype=str)
qi = sys.argv[2].split(","); sa = [sys.argv[3]]
out = {}
t = time.perf_counter(); out["k"] = int(anonymity.k_anonymity(df, qi)); out["k_s"] = time.perf_counter() - t
t = time.perf_counter(); out["l"] = int(anonymity.l_diversity(df, qi, sa)); out["l_s"] = time.perf_counter() - t
t = time.perf_counter(); out["entropy_l"] = float(anonymity.entropy_l_diversity(df, qi, sa)); out["entropy_l_s"] = time.perf_counter() - t
if sys.argv[4] == "1":  # pyCANON's t-closeness takes minutes on Adult: only on request
    t = time.perf_counter(); out["t"] = float(anonymity.t_closeness(df, qi, sa)); out["t_s"] = time.perf_counter() - t
# pyCANON 1.3.6 and a non-default index: shuffle the frame's index and ask again
df2 = df.sample(frac=1.0, random_state=0)
out["l_shuffled_index"] = int(anonymity.l_diversity(df2, qi, sa))
print(json.dumps(out))
"""


def best(f, repeat=REPEAT):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = f()
        times.append(time.perf_counter() - t)
    return min(times), r


def main() -> None:
    df = load_adult("full")
    schema = Schema.build(qi=["age:numeric", *QI[1:]], sa=SA)
    t_enc, table = best(lambda: encode(df, schema), 3)

    def encode_and_levels():
        t = encode(df, schema)
        cls, n = group_ids(t.qi_codes)
        return compute_levels(t.group_sa_counts(cls, n), t.sa_domain)

    t_all, _ = best(encode_and_levels, 3)

    def levels():
        cls, n = group_ids(table.qi_codes)
        counts = table.group_sa_counts(cls, n)
        return compute_levels(counts, table.sa_domain)

    def l_only():
        cls, n = group_ids(table.qi_codes)
        counts = table.group_sa_counts(cls, n)
        return make_model("l=2").table_level(counts, table.sa_domain)

    t_levels, lv = best(levels)
    t_l, l_val = best(l_only)
    tmp = Path(__file__).resolve().parent / ".peers" / "adult_check.csv"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    df[QI + [SA]].to_csv(tmp, index=False)
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--with-peer-t", action="store_true", help="also time pyCANON's t-closeness (minutes on Adult)")
    with_t = ap.parse_args().with_peer_t
    peer = run_peer("pycanon", PEER, str(tmp), ",".join(QI), SA, "1" if with_t else "0")
    rows = [
        ("encode (once per table)", t_enc, None),
        ("encode + all levels", t_all, None),
        ("all levels (k, distinct/entropy/recursive ℓ, α, t equal/ordered)", t_levels, None),
        ("distinct ℓ alone", t_l, peer["l_s"]),
        ("k alone (pyCANON)", None, peer["k_s"]),
        ("entropy ℓ (pyCANON)", None, peer["entropy_l_s"]),
        ("t equal distance (pyCANON, --with-peer-t)", None, peer.get("t_s")),
    ]
    print(f"machine: {machine()}")
    print(f"openbook: k={lv['k']} distinct_l={lv['distinct_l']} entropy_l={lv['entropy_l']:.4f} "
          f"t_equal={lv['t_equal']:.4f} groups={lv['n_groups']}")
    print(f"pyCANON:  k={peer['k']} l={peer['l']} entropy_l={peer['entropy_l']:.4f} t={peer.get('t', float('nan')):.4f} "
          f"l with shuffled index={peer['l_shuffled_index']}")
    print("| step | openbook (s) | pyCANON (s) | speed-up |")
    print("| --- | --- | --- | --- |")
    for name, ours, theirs in rows:
        sp = f"{theirs / ours:.0f}x" if ours and theirs else ""
        print(f"| {name} | {'' if ours is None else f'{ours:.4f}'} | {'' if theirs is None else f'{theirs:.3f}'} | {sp} |")
    print(json.dumps({"openbook_levels": lv, "pycanon": peer}, default=float))


if __name__ == "__main__":
    main()
