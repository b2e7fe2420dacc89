"""Full-domain search on a frequency table — the out-of-core entry of the lattice search
(Samarati 2001; Kohlmayer et al., Flash, 2012, §5: a node is evaluated on class counts).

The search reads only the distinct QI tuples of a table and the SA counts of each
(:class:`~openbook.data.frequency.FrequencyTable`, built from a file in Arrow batches by
:func:`~openbook.data.frequency.frequency_table`, or by a grouped aggregation on any engine),
so its memory is bounded by the number of distinct tuples, never the rows. A frequency table
of a table holds exactly the classes and counts of the table itself, so
:func:`search_frequency` returns what ``full-domain-search`` returns on the table: the same
node, minimal nodes, metric and nodes checked.
"""

from __future__ import annotations

from typing import Any

from ..data.frequency import FrequencyTable
from ..errors import InfeasibleError
from ..models.base import PrivacyModel
from .lattice import METRICS, Lattice, release_provenance, search_lattice
from .lattice_counts import LatticeData


def frequency_lattice_data(freq: FrequencyTable) -> LatticeData:
    """The lattice's class counts of a frequency table (a QI without a declared hierarchy
    gets the automatic one, as :meth:`EncodedTable.hierarchy` builds it)."""
    hier = [freq.hierarchy(name) for name in freq.qi_names]
    return LatticeData(freq.qi_codes, freq.sa_counts, hier, freq.sa_domain, freq.qi_names)


def search_frequency(freq: FrequencyTable, model: PrivacyModel, max_suppression: float = 0.0, *,
                     metric: str = "loss", all_minimal: bool = False) -> dict[str, Any]:
    """Full-domain search of ``freq`` for ``model`` with at most ``max_suppression`` of the
    rows suppressed. Returns the :class:`~openbook.algorithms.lattice.Lattice`
    (``"lattice"``), the chosen node (``"best"``), the minimal nodes (``"minimal"``) and
    their metric (``"values"``), and ``"provenance"``: the fields ``full-domain-search``
    records (``levels``, ``minimal_nodes``, ``minimal_metric``, ``metric_value``,
    ``n_nodes``, ``n_checked``, ``qi``, ``heights``). Raises what the in-memory search
    raises (:class:`~openbook.errors.InfeasibleError` when no node satisfies)."""
    from .lattice import FullDomainSearch

    algo = FullDomainSearch(model=model, max_suppression=max_suppression, metric=metric, all_minimal=all_minimal)
    algo.check_params()
    ms = float(max_suppression)
    try:
        model.validate(freq.sa_domain)
    except InfeasibleError:
        if ms == 0.0:  # as FullDomainSearch: with a budget, the lattice decides
            raise
    res = search_lattice(Lattice(frequency_lattice_data(freq), model, ms), metric, bool(all_minimal))
    res["provenance"] = release_provenance(algo, res)
    return res


__all__ = ["METRICS", "frequency_lattice_data", "search_frequency"]
