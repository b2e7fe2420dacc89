"""Every command, every flag, fed bad input: each invocation exits with code 2, prints one
line on stderr (``openbook: error: ...``) naming what is wrong, shows no traceback, and
leaves every file under the test's folder as it was (the ``refused`` fixture). Together with
``test_cli_bad_input.py`` and ``test_release_files.py`` this is the CLI's bad-input suite."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest

from openbook.release.sidecar import self_digest

from cli_harness import run_cli

BASE = ["--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name", "--quiet"]


@pytest.fixture()
def ws(tmp_path, small_frame, capsys):
    """A workspace: people.csv, a release rel.csv (Mondrian, k=3), an ART-free bucketized
    release b.csv, hierarchy and config files; returns a dict of paths."""
    p = tmp_path / "people.csv"
    small_frame.to_csv(p, index=False)
    rel = tmp_path / "rel.csv"
    assert run_cli(capsys, ["anonymize", p, *BASE, "-m", "k=3", "--algorithm", "mondrian", "-o", rel])[0] == 0
    b = tmp_path / "b.csv"
    assert run_cli(capsys, ["anonymize", p, *BASE, "-m", "l=2", "--algorithm", "anatomy", "--seed", "1",
                            "--max-reid-risk", "1", "-o", b])[0] == 0
    (tmp_path / "junk.csv").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "junk.parquet").write_bytes(b"PAR1" + bytes(range(200)) + b"PAR1")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("age,zip,sex,disease,name\n")
    (tmp_path / "latin1.csv").write_bytes("age,zip,sex,disease,name\n30,130,M,grün,p\n".encode("latin-1"))
    (tmp_path / "dup.csv").write_text("age,age,sex,disease,name\n1,2,M,flu,p\n")
    (tmp_path / "table.xyz").write_text("a,b\n1,2\n")
    (tmp_path / "zip.csv").write_text("130;13*;*\n131;13*;*\n")
    (tmp_path / "bad.toml").write_text("[input\npath=")
    (tmp_path / "misspelled.toml").write_text(f'[input]\npath = "{p}"\n[schema]\nqis = ["age"]\nsa = "disease"\n'
                                               '[model]\nspec = "k=2"\n[output]\npath = "o.csv"\n')
    (tmp_path / "types.toml").write_text(f'[input]\npath = "{p}"\n[schema]\nqi = 5\nsa = "disease"\n'
                                          '[model]\nspec = "k=2"\n[output]\npath = "o.csv"\n')
    (tmp_path / "section.toml").write_text('[inputs]\npath = "x"\n')
    (tmp_path / "algo.toml").write_text(f'[input]\npath = "{p}"\n[schema]\nqi = ["age:numeric"]\nsa = "disease"\n'
                                         '[model]\nspec = "k=2"\n[algorithm]\nname = "mondrian"\nstrickt = true\n'
                                         '[output]\npath = "o.csv"\n')
    (tmp_path / "ref.csv").write_text("v,n\nflu,x\n")
    (tmp_path / "sd.csv.json").mkdir()
    (tmp_path / "sd.csv.json" / "keep.txt").write_text("mine")
    (tmp_path / "sb.sa.csv").mkdir()
    (tmp_path / "sb.sa.csv" / "keep.txt").write_text("mine")
    (tmp_path / "users.csv").write_text("a user's own file\n")
    (tmp_path / "deep.toml").write_text("[input]\na = " + "[" * 3000 + "]" * 3000 + "\n")
    os.mkfifo(tmp_path / "pipe.csv")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table([pa.array([1, 2, 3]), pa.array([4, 5, 6]), pa.array(["a", "b", "c"])],
                            names=["age", "age", "d"]), tmp_path / "dup.parquet")
    pq.write_table(pa.table([pa.array([[1], [2], [3]]), pa.array(["a", "b", "c"])], names=["lst", "d"]),
                   tmp_path / "list.parquet")
    (tmp_path / "inf.csv").write_text("age,zip,disease\n20,a,flu\ninf,a,hiv\n30,b,flu\n40,b,cold\n")
    con = sqlite3.connect(tmp_path / "other.sqlite")
    con.execute("CREATE TABLE people (age INTEGER, disease TEXT)")
    con.commit()
    con.close()
    shutil.copy(tmp_path / "other.sqlite", tmp_path / "src.sqlite")
    import duckdb

    dcon = duckdb.connect(str(tmp_path / "src.duckdb"))
    dcon.execute("CREATE TABLE people AS SELECT 30 AS age, 'flu' AS disease")
    dcon.close()
    (tmp_path / "nokind").mkdir()
    (tmp_path / "nokind" / "registry.json").write_text('{"releases": [{"name": "a", "file": "a.csv"}]}')
    (tmp_path / "gid.csv").write_text("gid,zip,disease,count\n1,a,flu,x\n2,a,hiv,y\n3,b,flu,x\n4,b,cold,y\n"
                                      "5,a,cold,x\n6,b,hiv,y\n")
    head = f'[input]\npath = "{p}"\n[schema]\nqi = ["age:numeric", "zip"]\nsa = "disease"\n'
    (tmp_path / "misplaced.toml").write_text(head + '[model]\nspec = "l=2"\nmax_risk = 0.5\n[output]\npath = "o.csv"\n')
    (tmp_path / "spec-and-key.toml").write_text(head + '[model]\nspec = "l=2"\nc = 2\n[output]\npath = "o.csv"\n')
    (tmp_path / "hier-number.toml").write_text(head + '[hierarchies]\nzip = 5\n[model]\nspec = "l=2"\n'
                                               '[output]\npath = "o.csv"\n')
    wide = pd.DataFrame({f"q{i}": np.arange(12) % 2 for i in range(50)})
    wide["disease"] = small_frame["disease"].to_numpy()
    wide.to_csv(tmp_path / "wide.csv", index=False)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    (tmp_path / "garbage.sqlite").write_bytes(b"not a database at all" * 20)
    (tmp_path / "garbage.duckdb").write_bytes(b"not a database at all" * 20)
    (tmp_path / "reglist").mkdir()
    (tmp_path / "reglist" / "registry.json").write_text("[1, 2, 3]")
    (tmp_path / "regkeys").mkdir()
    (tmp_path / "regkeys" / "registry.json").write_text('{"releases": [{"nam": "x"}]}')
    # a release database, and a copy with one published value edited in place
    rdb = tmp_path / "rdb.sqlite"
    assert run_cli(capsys, ["anonymize", p, *BASE, "-m", "k=3", "--algorithm", "mondrian", "-o", rdb])[0] == 0
    shutil.copy(rdb, tmp_path / "tampered.sqlite")
    con = sqlite3.connect(tmp_path / "tampered.sqlite")
    con.execute("UPDATE release_data SET disease = 'tampered' WHERE disease = 'flu'")
    con.commit()
    con.close()
    # copies of rel.csv whose sidecar was edited and its digest recomputed (only the content refuses them)
    meta = json.loads((tmp_path / "rel.csv.json").read_text())
    for name, edit in SIDECAR_EDITS.items():
        shutil.copy(rel, tmp_path / f"{name}.csv")
        m = edit({**meta, "files": {**meta["files"], "data": f"{name}.csv"}})
        m["digest"] = self_digest(m)
        (tmp_path / f"{name}.csv.json").write_text(json.dumps(m))
    capsys.readouterr()
    return {"data": p, "rel": rel, "b": b, "tmp": tmp_path, "wide": tmp_path / "wide.csv", "rdb": rdb}


#: sidecars edited with their digest recomputed: each key is validated on read
SIDECAR_EDITS = {
    "edit-model": lambda m: {**m, "model": "x"},
    "edit-algorithm": lambda m: {**m, "algorithm": {**m["algorithm"], "algorithm": "nope"}},
    "edit-algorithm-garbage": lambda m: {**m, "algorithm": 5},
    "edit-certificate": lambda m: {**m, "certificate": {"verdict": "pass", "adversaries": "all good"}},
    "edit-check": lambda m: {**m, "check": {**m["check"], "holds": False}},
    "edit-levels": lambda m: {**m, "levels": ["a", "b", "c"]},
    "edit-n-groups": lambda m: {**m, "n_groups": -3},
    "edit-qi-empty": lambda m: {**m, "schema": {**m["schema"], "qi": []}},
}


def A(*extra):  # anonymize people.csv with the base schema
    return ["anonymize", "{data}", *BASE, *extra, "-o", "{tmp}/out.csv"]


CASES: dict[str, tuple[list[str], str]] = {
    # -- anonymize: levels, seeds, models ----------------------------------------------------------
    "levels not numbers": (A("-m", "k=2", "--levels", "a,b,c"), "levels"),
    "levels negative": (A("-m", "k=2", "--levels", "-1,0,0"), ("--levels", "-1,0,0")),
    "levels one negative": (A("-m", "k=2", "--levels", "-1"), ("--levels", "'-1'")),
    "levels negative fraction": (A("-m", "k=2", "--levels", "-0.5,1,1"), ("--levels", "-0.5,1,1")),
    "levels too few": (A("-m", "k=2", "--levels", "1,1"), "levels"),
    "levels too high": (A("-m", "k=2", "--levels", "9,9,9"), "level"),
    "levels empty": (A("-m", "k=2", "--levels", ""), "levels"),
    "seed negative": (A("-m", "l=2", "--algorithm", "anatomy", "--seed", "-5"), "seed"),
    "seed not a number": (A("-m", "k=2", "--seed", "abc"), "seed"),
    "model empty": (A("-m", ""), "model"),
    "model unknown": (A("-m", "z=3"), "z"),
    "l zero": (A("-m", "l=0"), "l"),
    "l negative": (A("-m", "l=-1"), "l"),
    "l fractional": (A("-m", "l=2.5"), "l"),
    "k zero": (A("-m", "k=0"), "k"),
    "k huge": (A("-m", "k=1000000000"), "k"),
    "k nan": (A("-m", "k=nan"), "k"),
    "alpha above one": (A("-m", "alpha=2"), "alpha"),
    "alpha zero": (A("-m", "alpha=0"), "alpha"),
    "t negative": (A("-m", "t=-1"), "t"),
    "t nan": (A("-m", "t=nan"), "t"),
    "recursive c zero": (A("-m", "recursive-l=2,c=0"), "c"),
    "entropy inf": (A("-m", "entropy-l=inf"), "l"),
    "unknown sensitive set": (A("-m", "simple-l=2,set=nope"), "nope"),
    "e negative": (A("-m", "k=2,e=-1"), "e"),
    "model key typo": (A("-m", "k=2,lll=3"), "lll"),
    # -- anonymize: algorithm parameters ---------------------------------------------------------
    "suppression negative": (A("-m", "k=2", "--levels", "1,1,1", "--max-suppression", "-0.1"), "suppression"),
    "suppression above one": (A("-m", "k=2", "--levels", "1,1,1", "--max-suppression", "1.5"), "suppression"),
    "suppression nan": (A("-m", "k=2", "--levels", "1,1,1", "--max-suppression", "nan"), "suppression"),
    "suppression inf": (A("-m", "k=2", "--levels", "1,1,1", "--max-suppression", "inf"), "suppression"),
    "p above one": (A("-m", "l=2", "--algorithm", "rgg", "--p", "1.5"), "p"),
    "p nan": (A("-m", "l=2", "--algorithm", "rgg", "--p", "nan"), "p"),
    "p negative": (A("-m", "l=2", "--algorithm", "rgg", "--p", "-1"), "p"),
    "order unknown": (A("-m", "l=2", "--algorithm", "gg", "--order", "nope"), "order"),
    "order on mondrian": (A("-m", "k=2", "--algorithm", "mondrian", "--order", "lex"), "order"),
    "algorithm unknown": (A("-m", "k=2", "--algorithm", "nope"), "nope"),
    "anatomy without l": (A("-m", "k=2", "--algorithm", "anatomy"), "anatomy"),
    "kind weird": (A("-m", "k=2", "--kind", "weird"), "kind"),
    "skew weird": (A("-m", "l=2", "--skew", "weird"), "skew"),
    "skew with k": (A("-m", "k=2", "--skew", "r-suppression"), "skew"),
    "max-risk zero": (A("-m", "k=2", "--max-risk", "0"), "max"),
    "max-risk above one": (A("-m", "k=2", "--max-risk", "2"), "max"),
    "max-risk nan": (A("-m", "k=2", "--max-risk", "nan"), "max"),
    "worlds zero": (A("-m", "l=2", "--algorithm", "gg", "--worlds", "0"), "worlds"),
    "worlds negative": (A("-m", "l=2", "--algorithm", "gg", "--worlds", "-5"), "worlds"),
    "t-reference unknown": (A("-m", "t=0.5", "--t-reference", "nope"), "t-reference"),
    "t-reference bad counts": (A("-m", "t=0.5", "--t-reference", "{tmp}/ref.csv"), "t-reference"),
    "lattice of 50 QIs": (["anonymize", "{wide}", "--qi", ",".join(f"q{i}" for i in range(50)), "--sa", "disease",
                           "-m", "k=2", "--algorithm", "full-domain-search", "--quiet", "-o", "{tmp}/w.csv"],
                          "lattice"),
    # -- anonymize: schema ----------------------------------------------------------------------
    "qi empty": (["anonymize", "{data}", "--qi", "", "--sa", "disease", "-m", "k=2", "-o", "{tmp}/o.csv"], "qi"),
    "qi kind weird": (["anonymize", "{data}", "--qi", "age:weird", "--sa", "disease", "-m", "k=2",
                       "-o", "{tmp}/o.csv"], "weird"),
    "sa kind weird": (["anonymize", "{data}", "--qi", "zip", "--sa", "disease:weird", "-m", "k=2",
                       "-o", "{tmp}/o.csv"], "weird"),
    "(k,e) on an SA left categorical": (["anonymize", "{data}", "--qi", "zip,sex", "--sa", "age", "-m", "k=2,e=5",
                                         "--algorithm", "mondrian", "-o", "{tmp}/o.csv"], ("--sa", ":numeric")),
    "(k,e) on words declared numeric": (["anonymize", "{data}", "--qi", "zip,sex", "--sa", "disease:numeric", "-m",
                                         "k=2,e=5", "-o", "{tmp}/o.csv"], "disease"),
    "qi twice": (["anonymize", "{data}", "--qi", "age,age", "--sa", "disease", "-m", "k=2", "-o", "{tmp}/o.csv"],
                 "age"),
    "qi unknown column": (["anonymize", "{data}", "--qi", "nope", "--sa", "disease", "-m", "k=2",
                           "-o", "{tmp}/o.csv"], "nope"),
    "sa unknown column": (["anonymize", "{data}", "--qi", "age", "--sa", "nope", "-m", "k=2", "-o", "{tmp}/o.csv"],
                          "nope"),
    "no sa": (["anonymize", "{data}", "--qi", "age", "-m", "k=2", "-o", "{tmp}/o.csv"], "sensitive"),
    "no qi": (["anonymize", "{data}", "--sa", "disease", "-m", "k=2", "-o", "{tmp}/o.csv"], "quasi"),
    "no model": (["anonymize", "{data}", *BASE, "-o", "{tmp}/o.csv"], "model"),
    "no output": (["anonymize", "{data}", *BASE, "-m", "k=2"], "output"),
    "sensitive without values": (A("-m", "k=2", "--sensitive", "x="), "sensitive"),
    "sensitive values absent": (A("-m", "simple-l=2,set=s", "--sensitive", "s=zzz|yyy"), "zzz"),
    "identifier unknown": (["anonymize", "{data}", "--qi", "age", "--sa", "disease", "--identifiers", "nope",
                            "-m", "k=2", "-o", "{tmp}/o.csv"], "nope"),
    "keep unknown": (A("-m", "k=2", "--keep", "nope"), "nope"),
    "keep the sa": (A("-m", "k=2", "--keep", "disease"), "disease"),
    "hierarchy without path": (A("-m", "k=2", "--hierarchy", "zip"), "hierarchy"),
    "hierarchy missing file": (A("-m", "k=2", "--hierarchy", "zip={tmp}/none.csv"), "none.csv"),
    "hierarchy junk": (A("-m", "k=2", "--hierarchy", "zip={tmp}/junk.csv"), "zip"),
    "hierarchy incomplete": (A("-m", "k=2", "--hierarchy", "zip={tmp}/zip.csv"), "zip"),
    "missing policy weird": (A("-m", "k=2", "--missing", "weird"), "missing"),
    "format weird": (A("-m", "k=2", "--format", "weird"), "format"),
    # -- anonymize: inputs and configs ----------------------------------------------------------
    "input missing": (["anonymize", "{tmp}/none.csv", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "none.csv"),
    "input a directory": (["anonymize", "{tmp}/full", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "directory"),
    "input binary junk": (["anonymize", "{tmp}/junk.csv", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "junk.csv"),
    "input junk parquet": (["anonymize", "{tmp}/junk.parquet", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"],
                           "junk.parquet"),
    "input empty file": (["anonymize", "{tmp}/empty.csv", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "empty.csv"),
    "input header only": (["anonymize", "{tmp}/header.csv", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "empty"),
    "input not utf-8": (["anonymize", "{tmp}/latin1.csv", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "latin1.csv"),
    "input duplicate header": (["anonymize", "{tmp}/dup.csv", "--qi", "age", "--sa", "disease", "-m", "k=2",
                                "-o", "{tmp}/o.csv"], "age"),
    "input unknown suffix": (["anonymize", "{tmp}/table.xyz", *BASE, "-m", "k=2", "-o", "{tmp}/o.csv"], "xyz"),
    "dataset unknown": (["anonymize", "--dataset", "nope", "-m", "k=2", "-o", "{tmp}/o.csv"], "nope"),
    "dataset and file": (["anonymize", "{data}", "--dataset", "synthetic", "-m", "k=2", "-o", "{tmp}/o.csv"],
                         "dataset"),
    "config missing": (["anonymize", "--config", "{tmp}/none.toml"], "none.toml"),
    "config not toml": (["anonymize", "--config", "{tmp}/bad.toml"], "TOML"),
    "config misspelled key": (["anonymize", "--config", "{tmp}/misspelled.toml"], "qis"),
    "config wrong type": (["anonymize", "--config", "{tmp}/types.toml"], "qi"),
    "config unknown section": (["anonymize", "--config", "{tmp}/section.toml"], "inputs"),
    "config unknown algorithm key": (["anonymize", "--config", "{tmp}/algo.toml"], "strickt"),
    "unknown flag": (A("-m", "k=2", "--nope"), "--nope"),
    "config a directory": (["anonymize", "--config", "{tmp}/full"], "directory"),
    "config the current folder": (["anonymize", "--config", "."], "directory"),
    "output the current folder": (["anonymize", "{data}", *BASE, "-m", "k=2", "-o", "."], "directory"),
    "output a sidecar's name": (["anonymize", "{data}", *BASE, "-m", "k=2", "-o", "{rel}.json"], "format"),
    "output over a release database": (["anonymize", "{data}", *BASE, "-m", "k=2", "-o", "{rdb}"], "--force"),
    # -- every command given a folder, or a release whose files were edited -------------------------
    "check the current folder": (["check", "."], "directory"),
    "check ./": (["check", "./"], "directory"),
    "check ..": (["check", ".."], "directory"),
    "check a folder": (["check", "{tmp}/full"], "directory"),
    "audit the current folder": (["audit", "."], "directory"),
    "audit a folder": (["audit", "{tmp}/full"], "directory"),
    "certify the current folder": (["certify", "."], "directory"),
    "report the current folder": (["report", ".", "-o", "{tmp}/r.html"], "directory"),
    "registry add the current folder": (["registry", "add", "{tmp}/reg", "."], "directory"),
    "audit a table that is no release": (["audit", "{data}"], "sidecar"),
    "check a tampered release database": (["check", "{tmp}/tampered.sqlite"], "altered"),
    "audit a tampered release database": (["audit", "{tmp}/tampered.sqlite"], "altered"),
    "certify a tampered release database": (["certify", "{tmp}/tampered.sqlite"], "altered"),
    "report a tampered release database": (["report", "{tmp}/tampered.sqlite", "-o", "{tmp}/r.html"], "altered"),
    "registry add a tampered release database": (["registry", "add", "{tmp}/reg", "{tmp}/tampered.sqlite"],
                                                 "altered"),
    "report over a release database": (["report", "{rel}", "-o", "{rdb}", "--force"], "release"),
    "report into a folder": (["report", "{rel}", "-o", "{tmp}/full"], "directory"),
    "posteriors into a folder": (["audit", "{rel}", "--posteriors-out", "{tmp}/full"], "directory"),
    "check a garbage model": (["check", "{tmp}/edit-model.csv"], "model"),
    "check an unknown algorithm": (["check", "{tmp}/edit-algorithm.csv"], "algorithm"),
    "certify an unknown algorithm": (["certify", "{tmp}/edit-algorithm.csv", "--original", "{data}"], "algorithm"),
    "audit an unknown algorithm": (["audit", "{tmp}/edit-algorithm.csv", "--adversary", "replay",
                                    "--original", "{data}"], "algorithm"),
    "check a garbage algorithm": (["check", "{tmp}/edit-algorithm-garbage.csv"], "algorithm"),
    "check a garbage certificate": (["check", "{tmp}/edit-certificate.csv"], "certificate"),
    "report a garbage certificate": (["report", "{tmp}/edit-certificate.csv", "-o", "{tmp}/r.html"],
                                     "certificate"),
    "check a check the data contradicts": (["check", "{tmp}/edit-check.csv"], "check"),
    "check garbage levels": (["check", "{tmp}/edit-levels.csv"], "levels"),
    "check a negative n_groups": (["check", "{tmp}/edit-n-groups.csv"], "n_groups"),
    "check an empty qi list": (["check", "{tmp}/edit-qi-empty.csv"], "schema.qi"),
    "certify an empty qi list": (["certify", "{tmp}/edit-qi-empty.csv"], "schema.qi"),
    "registry add an edited sidecar": (["registry", "add", "{tmp}/reg", "{tmp}/edit-check.csv"], "check"),
    # -- check ------------------------------------------------------------------------------------
    "check missing file": (["check", "{tmp}/none.csv", *BASE], "none.csv"),
    "check no input": (["check", "--qi", "age", "--sa", "disease"], "input"),
    "check c zero": (["check", "{data}", *BASE[:-1], "--c", "0"], "c"),
    "check c nan": (["check", "{data}", *BASE[:-1], "--c", "nan"], "c"),
    "check junk": (["check", "{tmp}/junk.csv", *BASE[:-1]], "junk.csv"),
    # -- audit ------------------------------------------------------------------------------------
    "audit unknown adversary": (["audit", "{rel}", "--adversary", "nope"], "nope"),
    "audit m negative": (["audit", "{rel}", "--max-risk", "0.5", "--m", "-1"], "m"),
    "audit max-risk zero": (["audit", "{rel}", "--max-risk", "0"], "max-risk"),
    "audit max-risk nan": (["audit", "{rel}", "--max-risk", "nan"], "max-risk"),
    "audit the removed --l": (["audit", "{rel}", "--l", "2"], "--l"),
    "audit linkage-l zero": (["audit", "{rel}", "--adversary", "linkage", "--linkage-l", "0"], "linkage-l"),
    "audit replay without original": (["audit", "{rel}", "--adversary", "replay"], "--original"),
    "audit original missing": (["audit", "{rel}", "--adversary", "replay", "--original", "{tmp}/none.csv"],
                               "none.csv"),
    "audit worlds zero": (["audit", "{rel}", "--adversary", "replay", "--original", "{data}", "--worlds", "0"],
                          "worlds"),
    "audit seed negative": (["audit", "{rel}", "--adversary", "replay", "--original", "{data}", "--seed", "-1"],
                            "seed"),
    "audit background does not apply": (["audit", "{rel}", "--adversary", "background", "--original", "{data}"],
                                        "does not apply"),
    "audit r zero": (["audit", "{b}", "--adversary", "background", "--original", "{data}", "--r", "0"], "r"),
    "audit unknown set": (["audit", "{rel}", "--set", "nope", "--max-risk", "0.5"], "nope"),
    "audit linkage without registry": (["audit", "{rel}", "--adversary", "linkage", "--linkage-l", "2"], "registry"),
    "audit registry missing": (["audit", "{rel}", "--adversary", "linkage", "--against-registry", "{tmp}/none"],
                               "none"),
    "audit release missing": (["audit", "{tmp}/none.csv"], "none.csv"),
    # -- certify ----------------------------------------------------------------------------------
    "certify max-risk above one": (["certify", "{rel}", "--max-risk", "2"], "max"),
    "certify original missing": (["certify", "{rel}", "--original", "{tmp}/none.csv"], "none.csv"),
    "certify unknown adversary": (["certify", "{rel}", "--adversary", "nope"], "nope"),
    "certify worlds negative": (["certify", "{rel}", "--original", "{data}", "--worlds", "-1"], "worlds"),
    "certify registry missing": (["certify", "{rel}", "--against-registry", "{tmp}/none"], "none"),
    "certify original not the source": (["certify", "{rel}", "--original", "{wide}"], "age"),
    # -- report -----------------------------------------------------------------------------------
    "report queries negative": (["report", "{rel}", "--original", "{data}", "--queries", "-1",
                                 "-o", "{tmp}/r.html"], "queries"),
    "report unknown adversary": (["report", "{rel}", "--adversary", "nope", "-o", "{tmp}/r.html"], "nope"),
    "report original missing": (["report", "{rel}", "--original", "{tmp}/none.csv", "-o", "{tmp}/r.html"],
                                "none.csv"),
    "report release missing": (["report", "{tmp}/none.csv", "-o", "{tmp}/r.html"], "none.csv"),
    # -- registry ---------------------------------------------------------------------------------
    "registry add without release": (["registry", "add", "{tmp}/reg"], "release"),
    "registry add missing release": (["registry", "add", "{tmp}/reg", "{tmp}/none.csv"], "none.csv"),
    "registry list garbage sqlite": (["registry", "list", "{tmp}/garbage.sqlite"], "garbage.sqlite"),
    "registry list garbage duckdb": (["registry", "list", "{tmp}/garbage.duckdb"], "garbage.duckdb"),
    "registry add garbage sqlite": (["registry", "add", "{tmp}/garbage.sqlite", "{rel}"], "garbage.sqlite"),
    "registry index a list": (["registry", "list", "{tmp}/reglist"], "registry.json"),
    "registry index missing keys": (["registry", "list", "{tmp}/regkeys"], "registry.json"),
    "registry bad name": (["registry", "add", "{tmp}/reg", "{rel}", "--name", "bad name!"], "name"),
    "registry list a file": (["registry", "list", "{data}"], "people.csv"),
    "registry action unknown": (["registry", "drop", "{tmp}/reg"], "drop"),
    "registry linkage-l zero": (["registry", "add", "{tmp}/reg", "{rel}", "--linkage-l", "0"], "linkage-l"),
    # -- experiment, datasets, demo -----------------------------------------------------------------
    "experiment unknown": (["experiment", "nope", "--out", "{tmp}/x"], "nope"),
    "experiment seed negative": (["experiment", "skew-fig5", "--quick", "--seed", "-1", "--out", "{tmp}/x"],
                                 "seed"),
    "datasets fetch unknown": (["datasets", "fetch", "nope"], "nope"),
    "datasets action unknown": (["datasets", "drop"], "drop"),
    "demo into a non-empty folder": (["demo", "--out", "{tmp}/full"], "empty"),
    "demo into a file": (["demo", "--out", "{data}"], "people.csv"),
    "no command": ([], "command"),
    "unknown command": (["nope"], "nope"),
    # -- issue 26: each refused in one line, exit 2, nothing written -------------------------------
    "model with non-ASCII digits": (A("-m", "k=\u0663"), "k"),
    "population smaller than the data": (A("-m", "l=2", "--population-size", "10"), "population-size"),
    "a QI named gid in a bucketized release": (["anonymize", "{tmp}/gid.csv", "--qi", "gid:numeric,zip", "--sa",
                                                "disease", "-m", "l=2", "--algorithm", "anatomy",
                                                "--max-reid-risk", "1", "-o", "{tmp}/o.csv"], "gid"),
    "an SA named count in a bucketized release": (["anonymize", "{tmp}/gid.csv", "--qi", "zip", "--sa", "count",
                                                   "-m", "l=2", "-o", "{tmp}/o.csv"], "count"),
    "every row suppressed": (A("-m", "k=5", "--algorithm", "full-domain", "--levels", "0,0,0",
                               "--max-suppression", "1.0", "--no-certify"), "suppressed"),
    "check a table with neither sidecar nor QIs": (["check", "{data}"], "sidecar"),
    "config: a certificate key under [model]": (["anonymize", "--config", "{tmp}/misplaced.toml"], "[certify]"),
    "config: spec and a model key together": (["anonymize", "--config", "{tmp}/spec-and-key.toml"], "spec"),
    "config: a hierarchy that is no path": (["anonymize", "--config", "{tmp}/hier-number.toml"], "hierarchies"),
    "config nested thousands deep": (["anonymize", "--config", "{tmp}/deep.toml"], "nested"),
    "input a named pipe": (["check", "{tmp}/pipe.csv", "--qi", "age", "--sa", "disease"], "regular file"),
    "input a device": (["check", "/dev/zero", "--qi", "age", "--sa", "disease", "--format", "csv"], "regular file"),
    "parquet naming a column twice": (["check", "{tmp}/dup.parquet", "--qi", "age", "--sa", "d"], "twice"),
    "parquet list column as a QI": (["check", "{tmp}/list.parquet", "--qi", "lst", "--sa", "d"], "lst"),
    "infinite number in a numeric QI": (["anonymize", "{tmp}/inf.csv", "--qi", "age:numeric,zip", "--sa", "disease",
                                         "-m", "k=2", "--no-certify", "-o", "{tmp}/o.csv"], "infinite"),
    "output under a file": (["anonymize", "{data}", *BASE, "-m", "k=2", "-o", "{data}/r.csv"], "not a folder"),
    "output name too long": (["anonymize", "{data}", *BASE, "-m", "k=2", "-o", "{tmp}/" + "a" * 300 + ".csv"],
                             "too long"),
    "registry name '.'": (["registry", "add", "{tmp}/reg", "{rel}", "--name", "."], "name"),
    "registry into a database of other tables": (["registry", "add", "{tmp}/other.sqlite", "{rel}", "--no-audit"],
                                                 "other tables"),
    "registry entry without kind": (["registry", "list", "{tmp}/nokind"], "registry"),
    "query that copies to a file": (["check", "duckdb:///{tmp}/src.duckdb", "--qi", "age", "--sa", "disease",
                                     "--query", "COPY (SELECT 1) TO 'copied.csv'"], "query"),
    "query that attaches a database": (["check", "{tmp}/src.sqlite", "--qi", "age", "--sa", "disease", "--query",
                                        "ATTACH DATABASE 'attached.db' AS e"], "query"),
    "--force over a folder named like a sidecar": (["anonymize", "{data}", *BASE, "-m", "k=2", "--force", "-o",
                                                    "{tmp}/sd.csv"], "folder"),
    "--force over a folder named like an SA-table": (["anonymize", "{data}", *BASE, "-m", "l=2", "--algorithm",
                                                      "anatomy", "--force", "-o", "{tmp}/sb.csv"], "folder"),
    "--force over a file openbook did not write": (["anonymize", "{data}", *BASE, "-m", "k=2", "--force", "-o",
                                                    "{tmp}/users.csv"], "not part of a release"),
    "query of two statements": (["check", "{tmp}/src.sqlite", "--qi", "age", "--sa", "disease", "--query",
                                 "SELECT * FROM people; DROP TABLE people"], "query"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_refused(refused, ws, case, monkeypatch):
    argv, needles = CASES[case]
    subst = {k: str(v) for k, v in ws.items()}
    argv = [a.format(**subst) for a in argv]
    monkeypatch.chdir(ws["tmp"])  # "." is the watched folder
    line = refused(ws["tmp"], argv)
    for needle in (needles,) if isinstance(needles, str) else needles:
        assert needle.lower() in line.lower(), f"{case}: {line!r} does not name {needle!r}"


def test_the_suite_is_large():
    """At least 150 malformed invocations, counted as the tests run them: one per case here,
    one per (sidecar case, command) in ``test_release_files``, one per case in
    ``test_cli_bad_input`` (other tests' further refusals are not counted)."""
    import test_cli_bad_input
    import test_release_files

    assert all(len(v) == 2 and isinstance(v[0], list) for v in CASES.values())
    n = len(CASES) + len(test_release_files.CASES) * len(test_release_files.COMMANDS) + len(test_cli_bad_input.CASES)
    assert n >= 150, n
