"""Benchmark: full-domain search beside ARX 3.9.2's Flash on UCI Adult with ARX's hierarchies —
the same rows, hierarchies, models, suppression limits and loss (ARX's "Loss" with the
arithmetic mean, Iyengar's LM, a suppressed row costing 1 per QI) — 15 configurations measured
side by side, interleaved, in one run.

    .venv/bin/python bench/bench_arx.py --build-arx --arx-source DIR   # build ARX once (javac only)
    .venv/bin/python bench/bench_arx.py [--rounds 5] [--repeat 3]      # measure

``--build-arx`` builds ARX from its source without Maven: ``--arx-source`` is a git repository
of ARX (a bare mirror or a clone; tag ``--arx-rev``, default v3.9.2) or its URL, or an ARX
source tree. Its ``src/main`` and the jars of ``lib/`` are copied to ``bench/.peers/arx/``
(git-ignored; no ARX code enters this repository) and ``javac`` compiles a small driver
(``ArxBench.java``, written by this script) against them with ``-sourcepath``: only the classes
the driver reaches are compiled. Two jars some snapshots of ARX's repository lack are taken
from this machine: PDFBox 2 (Debian's ``libpdfbox2-java``; ARX's certificate classes) and
Hadoop's ``Writable`` (pyspark's ``hadoop-client-api`` jar; Mahout's classes) — compile-time
only, neither is loaded by the search.

Configurations (7 QIs = age, workclass, education, marital-status, race, sex, native-country,
SA occupation; 4 QIs = age, education, marital-status, sex; 9 QIs = all nine Adult columns with
a hierarchy, for k-anonymity, which reads no SA): see :data:`CONFIGS`. openbook is timed on
``FullDomainSearch.partition`` of the encoded table (encoding from the DataFrame is not
included; it is the same for every configuration), ARX on ``ARXAnonymizer.anonymize`` of the
loaded ``Data`` (ARX's own encoding included), each in a warm process: ARX's JVM runs every
configuration ``--warmup`` times first. Then ``--rounds`` rounds, each timing every
configuration ``--repeat`` times in openbook then ``--repeat`` times in ARX; the figure is the
best of all. Without a built ARX the ARX columns say "not built".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads spin on a busy machine

HERE = Path(__file__).resolve().parent
PEER = HERE / ".peers" / "arx"
ARX_URL = "https://github.com/arx-deidentifier/arx.git"

Q7 = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
Q4 = ["age", "education", "marital-status", "sex"]
Q9 = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country",
      "salary-class"]
#: (label, QIs, SA, openbook model, ARX criteria, suppression limit)
CONFIGS = [
    ("7 QIs, k=5", Q7, "occupation", "k=5", "k=5", 0.0),
    ("7 QIs, k=5", Q7, "occupation", "k=5", "k=5", 0.05),
    ("7 QIs, distinct ℓ=6", Q7, "occupation", "l=6", "distinct-l=6", 0.0),
    ("7 QIs, distinct ℓ=6", Q7, "occupation", "l=6", "distinct-l=6", 0.05),
    ("7 QIs, entropy ℓ=3", Q7, "occupation", "entropy-l=3", "entropy-l=3", 0.0),
    ("7 QIs, entropy ℓ=3", Q7, "occupation", "entropy-l=3", "entropy-l=3", 0.05),
    ("7 QIs, recursive (c=3, ℓ=3)", Q7, "occupation", "recursive-l=3,c=3", "recursive-cl=3,3", 0.0),
    ("7 QIs, recursive (c=3, ℓ=3)", Q7, "occupation", "recursive-l=3,c=3", "recursive-cl=3,3", 0.05),
    ("7 QIs, k=5 and distinct ℓ=3", Q7, "occupation", "k=5,l=3", "k=5&distinct-l=3", 0.05),
    ("7 QIs, t-closeness t=0.2 (equal distance)", Q7, "occupation", "t=0.2", "t-equal=0.2", 0.05),
    ("4 QIs, k=5", Q4, "occupation", "k=5", "k=5", 0.0),
    ("4 QIs, k=5", Q4, "occupation", "k=5", "k=5", 0.05),
    ("4 QIs, entropy ℓ=3", Q4, "occupation", "entropy-l=3", "entropy-l=3", 0.05),
    ("9 QIs, k=5", Q9, "relationship", "k=5", "k=5", 0.0),
    ("9 QIs, k=5", Q9, "relationship", "k=5", "k=5", 0.05),
]

#: the driver: one configuration per line on stdin, ``label|qi,...|sa or -|criteria|limit|runs``;
#: one JSON line per configuration on stdout (the best of ``runs`` timed anonymizations)
DRIVER = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.deidentifier.arx.*;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.criteria.*;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class ArxBench {
    public static void main(String[] args) throws Exception {
        String csv = args[0], hdir = args[1];
        Map<String, Data> loaded = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.split("\\|");
            String[] qis = f[1].split(",");
            String sa = f[2];
            double limit = Double.parseDouble(f[4]);
            int runs = Integer.parseInt(f[5]);
            String key = f[1] + "|" + sa;
            Data data = loaded.get(key);
            if (data == null) {
                data = Data.create(csv, StandardCharsets.UTF_8, ';');
                DataDefinition def = data.getDefinition();
                Set<String> used = new HashSet<>(Arrays.asList(qis));
                for (int c = 0; c < data.getHandle().getNumColumns(); c++) {
                    String col = data.getHandle().getAttributeName(c);
                    if (!used.contains(col) && !col.equals(sa)) def.setAttributeType(col, AttributeType.INSENSITIVE_ATTRIBUTE);
                }
                for (String q : qis)
                    def.setAttributeType(q, Hierarchy.create(hdir + "/adult_hierarchy_" + q + ".csv", StandardCharsets.UTF_8, ';'));
                if (!sa.equals("-")) def.setAttributeType(sa, AttributeType.SENSITIVE_ATTRIBUTE);
                loaded.put(key, data);
            }
            long best = Long.MAX_VALUE;
            ARXResult result = null;
            for (int r = 0; r < runs; r++) {
                ARXConfiguration config = ARXConfiguration.create();
                for (String m : f[3].split("&")) config.addPrivacyModel(model(m.trim(), sa));
                config.setSuppressionLimit(limit);
                config.setQualityModel(Metric.createLossMetric(AggregateFunction.ARITHMETIC_MEAN));
                data.getHandle().release();
                long t0 = System.nanoTime();
                result = new ARXAnonymizer().anonymize(data, config);
                best = Math.min(best, System.nanoTime() - t0);
            }
            ARXNode opt = result.getGlobalOptimum();
            StringBuilder levels = new StringBuilder();
            for (int j = 0; j < qis.length; j++)
                levels.append(j > 0 ? "," : "").append(opt == null ? -1 : opt.getGeneralization(qis[j]));
            int suppressed = -1;
            if (opt != null) {
                DataHandle out = result.getOutput(opt, false);
                suppressed = 0;
                for (int i = 0; i < out.getNumRows(); i++) if (out.isOutlier(i)) suppressed++;
            }
            System.out.println("{\"label\": \"" + f[0] + "\", \"levels\": [" + levels + "], \"loss\": "
                + (opt == null ? "null" : opt.getHighestScore().toString()) + ", \"checked\": "
                + result.getProcessStatistics().getTransformationsChecked() + ", \"suppressed\": " + suppressed
                + ", \"ms\": " + best / 1e6 + "}");
            System.out.flush();
        }
    }

    static PrivacyCriterion model(String m, String sa) {
        String[] kv = m.split("=", 2);
        String[] p = kv.length > 1 ? kv[1].split(",") : new String[0];
        switch (kv[0]) {
            case "k": return new KAnonymity(Integer.parseInt(p[0]));
            case "distinct-l": return new DistinctLDiversity(sa, Integer.parseInt(p[0]));
            case "entropy-l": return new EntropyLDiversity(sa, Double.parseDouble(p[0]));
            case "recursive-cl": return new RecursiveCLDiversity(sa, Double.parseDouble(p[0]), Integer.parseInt(p[1]));
            case "t-equal": return new EqualDistanceTCloseness(sa, Double.parseDouble(p[0]));
            default: throw new IllegalArgumentException("unknown criterion " + m);
        }
    }
}
"""


# -- building ARX -----------------------------------------------------------------------------
def _git(git_dir: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, **kw)


def _export(git_dir: Path, rev: str, dest: Path) -> list[str]:
    """Copy ``src/main`` and ``lib`` of ``rev`` out of a git repository (blobs a partial
    snapshot lacks are skipped and listed)."""
    tree = _git(git_dir, "ls-tree", "-r", "-z", rev, "--", "src/main", "lib").stdout.split(b"\0")
    entries = [e.split(b"\t", 1) for e in tree if e]
    missing: list[str] = []
    batch = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    for meta, path in entries:
        sha = meta.split()[2]
        batch.stdin.write(sha + b"\n")
        batch.stdin.flush()
        head = batch.stdout.readline().split()
        if head[-1] == b"missing":
            missing.append(path.decode())
            continue
        body = batch.stdout.read(int(head[2]))
        batch.stdout.read(1)
        out = dest / path.decode()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(body)
    batch.stdin.close()
    batch.wait()
    return missing


def _extra_jars() -> list[Path]:
    """Compile-time jars a partial snapshot of ARX's ``lib`` may lack (module docstring)."""
    jars = []
    for name in ("pdfbox2.jar", "fontbox2.jar"):
        p = Path("/usr/share/java") / name
        if not p.exists():
            raise SystemExit(f"bench_arx: {p} is missing: apt-get install -y libpdfbox2-java")
        jars.append(p)
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    hadoop = sorted((Path(spec.origin).parent / "jars").glob("hadoop-client-api-*.jar")) if spec else []
    if not hadoop:
        raise SystemExit("bench_arx: no hadoop-client-api jar (pyspark's) for Hadoop's Writable")
    return jars + hadoop[:1]


def build_arx(source: str, rev: str) -> None:
    """Export ARX's sources into ``bench/.peers/arx/src`` and compile the driver with javac."""
    if shutil.which("javac") is None:
        raise SystemExit("bench_arx: javac not found (apt-get install -y openjdk-17-jdk-headless)")
    if PEER.exists():
        shutil.rmtree(PEER)
    PEER.mkdir(parents=True)
    src = PEER / "src"
    missing: list[str] = []
    path = Path(source)
    if path.is_dir() and (path / "src" / "main").is_dir():  # a source tree
        shutil.copytree(path / "src" / "main", src / "src" / "main")
        shutil.copytree(path / "lib", src / "lib")
    else:
        if not path.exists():  # a URL: clone it
            subprocess.run(["git", "clone", "--bare", "--filter=blob:none", source, str(PEER / "git")], check=True)
            path = PEER / "git"
        git_dir = path / ".git" if (path / ".git").is_dir() else path
        missing = _export(git_dir, rev, src)
    jars = [p for p in sorted((src / "lib").rglob("*.jar"))
            if not any(x in p.name for x in ("swt", "eclipse", "jhc", "nattable", "nebula"))]
    cp = [str(p) for p in jars + _extra_jars()]
    (PEER / "ArxBench.java").write_text(DRIVER, encoding="utf-8")
    classes = PEER / "classes"
    classes.mkdir()
    t0 = time.perf_counter()
    proc = subprocess.run(["javac", "-nowarn", "-proc:none", "-encoding", "UTF-8", "-d", str(classes), "-cp",
                           os.pathsep.join(cp), "-sourcepath", str(src / "src" / "main"), str(PEER / "ArxBench.java")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench_arx: javac failed:\n{proc.stderr[-3000:]}")
    n_classes = sum(1 for _ in classes.rglob("*.class"))
    javac = subprocess.run(["javac", "-version"], capture_output=True, text=True)
    info = {"source": source if not Path(source).exists() else "a local git repository or tree", "rev": rev,
            "javac": (javac.stdout or javac.stderr).strip(), "classes": n_classes, "classpath": cp,
            "missing_in_snapshot": missing, "seconds": round(time.perf_counter() - t0, 1)}
    (PEER / "BUILD.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    print(f"built ARX {rev}: {n_classes} classes compiled in {info['seconds']} s "
          f"({len(missing)} files absent from the snapshot: {', '.join(missing) or 'none'})", file=sys.stderr)


def arx_built() -> dict | None:
    info = PEER / "BUILD.json"
    return json.loads(info.read_text(encoding="utf-8")) if info.exists() and (PEER / "classes").is_dir() else None


class Arx:
    """ARX's driver in one JVM (warm across calls)."""

    def __init__(self, info: dict, csv: Path, hier: Path) -> None:
        cp = os.pathsep.join([str(PEER / "classes"), *info["classpath"]])
        self.proc = subprocess.Popen(["java", "-Xmx4g", "-cp", cp, "ArxBench", str(csv), str(hier)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, encoding="utf-8")

    def run(self, cfg, runs: int) -> dict:
        label, qi, sa, _, crit, limit = cfg
        sa_arx = "-" if crit.startswith("k=") and "&" not in crit else sa
        self.proc.stdin.write(f"{label}|{','.join(qi)}|{sa_arx}|{crit}|{limit}|{runs}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("ARX's driver stopped")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


# -- openbook ---------------------------------------------------------------------------------
def tables() -> tuple[dict, "object"]:
    from openbook.data.adult import load_adult
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.hierarchy import adult_hierarchies

    h = adult_hierarchies("arx")
    frame = load_adult("full")
    out = {}
    for _, qi, sa, _, _, _ in CONFIGS:
        if (tuple(qi), sa) not in out:
            schema = Schema.build(qi=["age:numeric", *qi[1:]], sa=sa)
            out[(tuple(qi), sa)] = encode(frame, schema, {c: h[c] for c in qi})
    return out, frame


def openbook_run(table, cfg, runs: int) -> dict:
    from openbook.algorithms import make_algorithm
    from openbook.models import make_model

    _, _, _, spec, _, limit = cfg
    best, p = float("inf"), None
    for _ in range(runs):
        algo = make_algorithm("full-domain-search", model=make_model(spec), max_suppression=limit)
        t0 = time.perf_counter()
        p = algo.partition(table)
        best = min(best, time.perf_counter() - t0)
    return {"levels": p.provenance["levels"], "loss": p.provenance["metric_value"],
            "checked": p.provenance["n_checked"], "nodes": p.provenance["n_nodes"],
            "suppressed": p.n_suppressed, "ms": best * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-arx", action="store_true", help="build ARX from --arx-source first")
    ap.add_argument("--arx-source", default=ARX_URL, help="ARX git repository (path or URL) or source tree")
    ap.add_argument("--arx-rev", default="v3.9.2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=10, help="ARX runs per configuration before timing")
    ap.add_argument("--only", help="comma-separated configuration numbers (1-based)")
    ap.add_argument("--no-arx", action="store_true", help="openbook's figures only (ARX columns: not built)")
    a = ap.parse_args()
    if a.build_arx:
        build_arx(a.arx_source, a.arx_rev)
    configs = list(enumerate(CONFIGS, 1))
    if a.only:
        keep = {int(x) for x in a.only.split(",")}
        configs = [c for c in configs if c[0] in keep]
    info = None if a.no_arx else arx_built()
    tabs, frame = tables()
    arx = None
    if info is not None:
        from importlib import resources

        PEER.mkdir(parents=True, exist_ok=True)
        csv = PEER / "adult.csv"
        cols = list(dict.fromkeys(Q9 + ["relationship"]))
        frame[cols].to_csv(csv, sep=";", index=False)  # the rows openbook reads, as ARX reads them
        hier = resources.files("openbook").joinpath("data", "hierarchies", "arx")
        arx = Arx(info, csv, Path(str(hier)))
        for _, cfg in configs:
            arx.run(cfg, a.warmup)
    ob: dict[int, dict] = {}
    ax: dict[int, dict] = {}
    for _, cfg in configs:  # openbook's warm-up: one run each (numba's code loaded, caches warm)
        openbook_run(tabs[(tuple(cfg[1]), cfg[2])], cfg, 1)
    for _ in range(a.rounds):
        for i, cfg in configs:
            r = openbook_run(tabs[(tuple(cfg[1]), cfg[2])], cfg, a.repeat)
            ob[i] = r if i not in ob or r["ms"] < ob[i]["ms"] else ob[i]
            if arx is not None:
                r = arx.run(cfg, a.repeat)
                ax[i] = r if i not in ax or r["ms"] < ax[i]["ms"] else ax[i]
    if arx is not None:
        arx.close()
    report(configs, ob, ax, info, a)


def report(configs, ob, ax, info, a) -> None:
    from _peers import machine

    print("## Full-domain search beside ARX 3.9.2 (15 configurations, interleaved)\n")
    where = (f"ARX {info['rev']} built from source with {info['javac']} ({info['classes']} classes, javac only)"
             if info else "ARX **not built** here (`--build-arx --arx-source DIR`): its columns say so")
    print(f"UCI Adult, 45,222 rows, ARX's hierarchies; metric: loss (mean over rows and QIs, a suppressed row "
          f"costing 1 per QI — ARX's Loss with the arithmetic mean). {where}. Warm times: best of "
          f"{a.rounds} interleaved rounds × {a.repeat} runs (ARX after {a.warmup} warm-up runs per "
          f"configuration in its JVM); openbook times `partition` of the encoded table, ARX `anonymize` of the "
          f"loaded data. {machine()}; load average {os.getloadavg()[0]:.1f} at the end.\n")
    print("| # | configuration | suppression | node (openbook) | node (ARX) | loss (openbook) | loss (ARX) "
          "| nodes checked (openbook) | (ARX) | warm ms (openbook) | (ARX) | ARX / openbook |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    same = []
    for i, cfg in configs:
        o, x = ob[i], ax.get(i)
        cells = [str(i), cfg[0], f"{cfg[5]:.0%}", str(o["levels"])]
        if x is None:
            cells += ["not built", f"{o['loss']:.6f}", "not built", f"{o['checked']} of {o['nodes']}", "not built",
                      f"{o['ms']:.1f}", "not built", "—"]
        else:
            same.append(x["levels"] == o["levels"] and abs(x["loss"] - o["loss"]) < 1e-6)
            cells += [str(x["levels"]), f"{o['loss']:.6f}", f"{x['loss']:.6f}", f"{o['checked']} of {o['nodes']}",
                      str(x["checked"]), f"{o['ms']:.1f}", f"{x['ms']:.1f}", f"{x['ms'] / o['ms']:.2f}×"]
        print("| " + " | ".join(cells) + " |")
    if same:
        print(f"\nEvery node equals ARX's, with the same loss (to 1e-6): **{'yes' if all(same) else 'no'}**"
              f"{'' if all(same) else ' — rows ' + ', '.join(str(i) for (i, _), s in zip(configs, same) if not s)}.")
        ratios = [ax[i]["ms"] / ob[i]["ms"] for i, _ in configs]
        print(f"ARX / openbook: least {min(ratios):.2f}×, median {sorted(ratios)[len(ratios) // 2]:.2f}×.")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
