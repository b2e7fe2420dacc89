"""The adversary who knows MASK (paper 001 §6, Algorithm 1; :mod:`openbook.algorithms.mask`):
a sound upper bound on every person's posterior, whatever the prior.

MASK's classes come from strict Mondrian under k-anonymity on the QIs alone (deterministic:
the adversary, who knows every QI, knows each person's class). Then every class ``E`` that
violates the model (the set ``V``) is *distorted*: a proportion ``p`` is drawn from the
``s``-proportions of the ``u = (ℓ-1)|V|`` ℓ-diverse classes with the highest ones (``L``),
``c_E - t`` of ``E``'s tuples with a value in the sensitive set ``s`` are given a value
outside ``s`` (from ``E``'s own, else the table's), where ``t = min(round(p·|E|), c_E)`` is
lowered until ``E`` satisfies the model. So the file shows, for a distorted class, fewer
``s`` values than its people hold: the class frequency understates their risk (on four
classes of two, an adversary who knows MASK puts a person of a possibly distorted class at
5/8 where the class shows 1/2 — ``tests/contract/test_adversary_brute_force.py``).

What the adversary can rule out (each a necessary condition of ``E ∈ V``, read off the file):

* ``E`` holds ``t < |E|`` values of ``s`` (a distorted class lost at least one);
* some *other* published class ``F`` has ``round(p_F·|E|) ≥ t`` for its published
  proportion ``p_F`` — the drawn ``p`` is the proportion of a class of ``L``, which is
  ℓ-diverse and so published undistorted, and distortion only lowers ``t`` below
  ``round(p·|E|)`` (floating point read on the safe side).

The adversary re-runs MASK's first step on the QIs (``Mask.k_partition``); when a published
class joins several of its classes (their labels coincide in the file) the file hides their
own proportions, and no class is taken as undistorted.

A class that meets neither is published as it was: under any prior in which the people of a
class are exchangeable (every replay here assumes as much) each of them holds ``v`` with the
class frequency — exact. A class that may have been distorted had ``c > t`` values of ``s``
and lost ``k = c - t ≤ |E| - t`` of them to values outside ``s``; so a target ``m`` that meets
``s`` has at most ``min(1, (n_m + |E| - t)/|E|)`` (``n_m``: the class's published count of
``m``), the whole set ``s`` up to 1, and a target outside ``s`` at most its published frequency
(distortion only adds such values). The posterior, a mixture over the true multisets of the
class of their frequencies, is at most this bound — whatever the prior and whatever the coupling
of the classes through ``V`` and ``L``. The result states it as the class frequency plus three
"standard errors" (the certificate reads ``posterior + 3·stderr``), as the lattice replay's
bounds are (:mod:`.replay.lattice`); ``notes["bound"]`` says it is a bound, not a sample.

Per-value targets (``set-mode=each``) of a set some of whose values the file never shows cannot
be bounded by the published columns (a distorted person may hold such a value): the people of a
class that may have been distorted are then unresolved.

``tests/soundness/test_mask_adversary.py`` and the soundness suite check the bound against a
brute force over every SA vector of tiny tables (two priors: the published distribution i.i.d.
and uniform), every outcome of MASK's draws, every byte of the files, and the equality for the
classes ruled out.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import AttackResult


def distortable(counts: np.ndarray, s_mask: np.ndarray, merged: bool = False) -> np.ndarray:
    """Which published classes (rows of ``counts``, their SA counts) MASK may have distorted
    (module docstring: they hold fewer values of ``s`` than people, and another class's
    proportion rounds to at least theirs). ``merged``: some published class joins several of
    MASK's classes (their labels coincide in the file), whose own proportions the file does not
    show — then every class short of all-``s`` may have been distorted."""
    counts = np.asarray(counts, dtype=np.float64)
    size = counts.sum(axis=1)
    t = counts[:, np.asarray(s_mask, dtype=bool)].sum(axis=1)
    n = size.size
    if merged:
        return t < size
    if n < 2:
        return np.zeros(n, dtype=bool)
    prop = np.where(size > 0, t / np.maximum(size, 1.0), 0.0)
    order = np.argsort(-prop, kind="stable")
    best, second = prop[order[0]], prop[order[1]]
    other = np.where(np.arange(n) == order[0], second, best)  # the largest proportion of another class
    # round(p·|E|) = floor(p·|E| + 0.5) >= t  <=>  p·|E| + 0.5 >= t  (t an integer); the margin
    # takes MASK's floating point on the safe side (a class it may have distorted is never missed)
    return (t < size) & (other * size + 0.5 + 1e-9 >= t)


def distortion_bounds(counts: np.ndarray, s_mask: np.ndarray, masks: np.ndarray,
                      meets: Sequence[bool], merged: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per published class: the class frequency of each target ``(n_classes, T)``, the upper
    bound of any person's posterior of it, and whether the class may have been distorted.
    ``meets[j]``: target ``j`` shares a value with the sensitive set (by the declared values,
    published or not)."""
    counts = np.asarray(counts, dtype=np.float64)
    masks = np.asarray(masks, dtype=bool)
    s_mask = np.asarray(s_mask, dtype=bool)
    size = counts.sum(axis=1)
    t = counts[:, s_mask].sum(axis=1)
    per = counts @ masks.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = per / size[:, None]
        # up to |E| - t values of the set turned into others: all of them the target's
        lifted = np.minimum(1.0, (per + (size - t)[:, None]) / size[:, None])
    dist = distortable(counts, s_mask, merged)
    bound = np.where(dist[:, None] & np.asarray(meets, dtype=bool)[None, :], lifted, freq)
    return freq, bound, dist


def distortion_attack(release: Any, names: list[str], masks: np.ndarray, target_values: Sequence[set[str]],
                      s_values: set[str], *, group: np.ndarray, step_one: np.ndarray | None,
                      l: float | None = None, sensitive: np.ndarray | None = None,
                      adversary: str = "replay") -> AttackResult:
    """The bound of the module docstring for every person (``group``: each one's published
    class, ``Release.classes`` numbering; ``-1`` absent). ``target_values[j]``: the SA values
    target ``j`` stands for (a set's declared values); ``s_values``: MASK's sensitive set;
    ``step_one``: each person's class of MASK's first step (strict Mondrian under k-anonymity
    on the QIs, which the adversary re-runs), ``None`` when it cannot be re-run — then, as when
    a published class joins several of them, no class is taken as undistorted."""
    counts, domain = release.sa_counts()
    published = [str(v) for v in domain.values]
    s_mask = np.array([v in s_values for v in published], dtype=bool)
    meets = [bool(vals & s_values) for vals in target_values]
    group = np.asarray(group, dtype=np.int64)
    merged = step_one is None or _joins_several(group, np.asarray(step_one, dtype=np.int64))
    freq, bound, dist = distortion_bounds(counts, s_mask, masks, meets, merged)
    se = (bound - freq) / 3.0
    unresolved = np.zeros(group.size, dtype=bool)
    reasons = []
    hidden = sorted(s_values - set(published))
    if hidden and not any(s_values <= vals for vals in target_values):
        # no target stands for the whole set, and a distorted person may hold a value of it the
        # file never shows: no published column bounds that
        unresolved = (group >= 0) & dist[np.maximum(group, 0)]
        reasons.append({"reason": f"a class MASK may have distorted could hide sensitive value {hidden[0]!r}, "
                                  "which the release never shows, and no target covers it",
                        "people": int(unresolved.sum())})
    return AttackResult(
        adversary=adversary, posterior=freq, rows=group, targets=list(names), group=group, l=l,
        stderr=se, sensitive=sensitive, unresolved=unresolved if unresolved.any() else None,
        notes={"knowledge": "every QI, MASK and its parameters (paper 001 §6): which classes it may have "
                            "distorted",
               "bound": "an upper bound under any prior exchangeable within each class: a class MASK may have "
                        "distorted may have held more values of the sensitive set than it shows",
               "classes": int(counts.shape[0]), "distortable_classes": int(dist.sum()),
               "merged_classes": bool(merged),
               "unresolved": reasons},
    )


def _joins_several(group: np.ndarray, step_one: np.ndarray) -> bool:
    """Does some published class hold people of several of MASK's first-step classes — or is
    the re-run not the file's (a class of it spread over several published classes: another
    table), so that nothing can be told?"""
    kept = group >= 0
    if not kept.any():
        return False
    pairs = np.unique(np.stack([group[kept], step_one[kept]], axis=1), axis=0)
    return bool(np.unique(pairs[:, 0]).size < pairs.shape[0] or np.unique(pairs[:, 1]).size < pairs.shape[0])
