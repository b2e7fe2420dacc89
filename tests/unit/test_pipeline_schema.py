"""The schema the CLI options declare over a built-in dataset's own: what the options leave
out is the dataset's declaration itself (kinds, ordinal orders, missing-value tokens), never
a string round trip that loses them."""

from __future__ import annotations

from openbook.data.schema import Column, Schema
from openbook.pipeline import _schema_from

FALLBACK = Schema.build(qi=[Column("age", "numeric"), Column("edu", "ordinal", ("a", "b", "c"))],
                        sa=Column("income", "numeric"), sensitive_sets={"s": ["x"]},
                        missing_tokens=("?", "NA"))


def test_nothing_given_keeps_the_dataset_schema_exactly():
    s = _schema_from({}, fallback=FALLBACK)
    assert s.qi == FALLBACK.qi  # the ordinal order survives
    assert s.sa == FALLBACK.sa  # a numeric SA stays numeric
    assert s.missing_tokens == FALLBACK.missing_tokens
    assert dict(s.sensitive_sets) == dict(FALLBACK.sensitive_sets)


def test_bare_names_keep_their_declaration_and_new_names_default():
    s = _schema_from({"qi": ["edu", "zip", "age:categorical"]}, fallback=FALLBACK)
    assert s.qi == (FALLBACK.qi[1], Column("zip"), Column("age", "categorical"))
    assert s.sa == FALLBACK.sa


def test_another_sa_does_not_inherit_the_sets():
    s = _schema_from({"sa": "zip"}, fallback=FALLBACK)
    assert s.sa == Column("zip") and dict(s.sensitive_sets) == {}
