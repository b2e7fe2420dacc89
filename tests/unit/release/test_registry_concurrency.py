"""Two processes adding 20 releases each to the same registry, for every store: all 40
entries land, numbered in turn, and every one of them loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from openbook.release.registry import ReleaseRegistry

WRITER = textwrap.dedent('''
    import sys
    import numpy as np, pandas as pd
    from openbook.data.table import EncodedTable
    from openbook.release import Partition, build_release
    from openbook.release.registry import ReleaseRegistry

    path, tag = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(abs(hash(tag)) % 2**32)
    reg = ReleaseRegistry(path)
    for i in range(20):
        n = 8
        t = EncodedTable.from_codes(qi_codes=rng.integers(0, 3, size=(n, 2)).astype(np.int32),
                                    sa_codes=rng.integers(0, 4, size=n).astype(np.int32),
                                    qi_names=["a", "b"], sa_name="s")
        rel = build_release(t, Partition.from_labels(np.arange(n) // 4), model=None, kind="bucketized")
        reg.add(rel, name=f"{tag}-{i:02d}")
''')


@pytest.mark.parametrize("store", ["folder", "reg.sqlite", "reg.duckdb"])
def test_two_processes_add_twenty_each(tmp_path, store):
    path = tmp_path / store
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag], stderr=subprocess.PIPE, text=True)
             for tag in ("p", "q")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    reg = ReleaseRegistry(path, create=False)
    names = reg.names()
    assert len(names) == 40 and len(set(names)) == 40
    assert sorted(names) == sorted([f"p-{i:02d}" for i in range(20)] + [f"q-{i:02d}" for i in range(20)])
    for name, rel in reg.releases():
        assert rel.n_published == 8 and int(rel.sa_table["count"].sum()) == 8, name
