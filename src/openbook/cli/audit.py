"""``openbook audit``: one adversary against a saved release, per person — the baseline,
minimality (paper 001), replay (paper 000), background (paper 003), eligibility (paper 004),
linkage with a registry of earlier releases (paper 002) — through the adversary registry.

A person is *vulnerable* when the adversary's posterior exceeds the target (``--max-risk R``,
default the model's 1/ℓ; for the linkage adversary ``--linkage-l L`` says the same as
``--max-risk 1/L``: the least post-linkage diversity); unresolved people count as failing in
every share."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    AT_LEAST_1,
    POSITIVE_INT,
    SEED,
    add_engine_options,
    adversary_option,
    against_registry_option,
    earlier_releases,
    emit,
    engine_from_args,
    linkage_l_option,
    max_risk_option,
    original_from_args,
    original_options,
    output_options,
    print_table,
    removed_l_option,
    status,
    worlds_option,
)


def adversary_params(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The keyword parameters of adversary ``name`` given on the command line."""
    flags = {"baseline": {"sensitive_set": args.set},
             "replay": {"worlds": args.worlds, "world_seed": args.seed, "sensitive_set": args.set},
             "minimality": {"sensitive_set": args.set, "exact": args.exact or None},
             "background": {"r": args.r, "min_support": args.min_support, "max_attrs": args.max_attrs,
                            "sensitive_set": args.set},
             "linkage": {"l": args.linkage_l}}.get(name, {})
    return {k: v for k, v in flags.items() if v is not None}


def cmd_audit(args: argparse.Namespace) -> int:
    from ..attacks.registry import make_adversary
    from ..errors import ParameterError
    from ..release import load_release

    if args.posteriors_out:
        from ..release.io import check_plain_output

        check_plain_output(args.posteriors_out, force=args.force, inputs=[args.release, args.original],
                           what="--posteriors-out", ours="posteriors")
    if args.linkage_l is not None and args.adversary != "linkage":
        raise ParameterError(f"--linkage-l is the linkage adversary's (this audit runs the {args.adversary} "
                             "adversary): give --max-risk R for its posterior target", parameter="linkage-l")
    spark = getattr(args, "engine", "local") == "spark"
    if spark and args.adversary != "linkage":  # before reading anything
        raise ParameterError(f"--engine spark runs the linkage adversary (audit --adversary linkage), not the "
                             f"{args.adversary} adversary: use --engine local", parameter="engine", value="spark")
    engine = engine_from_args(args)
    release = load_release(args.release, public_key=args.public_key)
    adv = make_adversary(args.adversary, **adversary_params(args, args.adversary))
    original = original_from_args(args)
    earlier = earlier_releases(args.against_registry)
    _applies(adv, release)
    with status(f"the {adv.name} adversary", quiet=args.quiet) as st:
        result = engine.audit(adv, release, original, earlier, progress=st.update)
    from ..attacks.baseline import release_model
    from ..models.promise import attribute_target, identity_target

    model = release_model(release)
    if adv.disclosure == "identity":  # the identity line's target: --max-reid-risk, 1/k, or 0.2
        l = 1.0 / identity_target(model, getattr(args, "max_reid_risk", None))[0]
    else:
        tgt = attribute_target(model, args.max_risk)
        l = 1.0 / tgt.posterior if tgt.posterior is not None else (result.l or 1.0)
    summary = result.summary(l=l, m=args.m)
    if args.posteriors_out:
        from ..release.io import write_plain

        frame = result.frame()
        write_plain(args.posteriors_out, lambda t: frame.to_csv(t, index=False))
    payload = summary.to_dict(groups=20)
    payload.update(adversary=adv.name, paper=adv.paper, posteriors_out=args.posteriors_out)
    emit(args, payload, lambda d: print_table(f"audit ({adv.name}, {adv.paper})", _rows(d)))
    return 0


def _applies(adv: Any, release: Any) -> None:
    from ..errors import ParameterError

    applies = adv.applies_to(release)
    if not applies:
        raise ParameterError(f"the {adv.name} adversary does not apply to this release: {applies.reason}",
                             parameter="adversary", value=adv.name)


def _rows(d: dict[str, Any]) -> list[tuple[str, Any]]:
    """The audit in words for the terminal (the JSON keeps every key of the summary): what the
    adversary found — a re-identification risk for the identity adversary, a posterior for the
    others — and never a figure of one beside the other's target."""
    identity = d.get("adversary") == "reidentification"
    figure = "re-identification risk" if identity else "posterior"
    who = "records" if identity else "people"
    target = 1.0 / d["l"] if d.get("l") else None
    rows: list[tuple[str, Any]] = [
        (f"{who} considered", f"{d['n_tuples']:,} ({d['n_published']:,} published"
                              + (f", {d['n_absent_evaluated']:,} absent" if d.get("n_absent_evaluated") else "") + ")"),
        ("target", "none" if target is None else f"{figure} at most {target:.4g}"),
        (f"highest {figure}", f"{d['max_posterior']:.4g}" + (f" ({d['max_risk_multiple']:.3g}x the target)"
                                                             if target and not identity else "")),
        (f"{who} above the target", f"{d['n_vulnerable']:,}"),
        (f"{who} unresolved (they count as failing)", f"{d['n_unresolved']:,}"),
        ("share above the target or unresolved", f"{d['vulnerable_fraction']:.2%}"),
    ]
    if not identity:
        if d.get("avg_credibility_problematic") is not None:
            rows.append(("average posterior of those above the target", f"{d['avg_credibility_problematic']:.4g}"))
        if d.get("n_sensitive") is not None and d["n_sensitive"] < d["n_tuples"]:
            rows.append(("people whose true value is in the sensitive set", f"{d['n_sensitive']:,}"))
        rows.append((f"m-confidential at m = {d['m']:g} (paper 001)", "yes" if d["m_confidential"] else "no"))
        if d.get("max_stderr"):
            rows.append(("largest Monte-Carlo standard error", f"{d['max_stderr']:.3g}"))
    rows.append(("classes with someone above the target", f"{d.get('n_vulnerable_groups', 0):,} of "
                                                           f"{d.get('n_groups', 0):,}"))
    if d.get("posteriors_out"):
        rows.append(("per-person figures written to", d["posteriors_out"]))
    return rows


def add_parser(sub: Any) -> None:
    u = sub.add_parser("audit", help="one adversary against a saved release, per person")
    u.add_argument("release", help="the release (its data file, sidecar or database file)")
    from ._common import max_reid_risk_option, public_key_option

    public_key_option(u)
    adversary_option(u, several=False)
    original_options(u, required_for="; replay, minimality and background need it")
    against_registry_option(u)
    g = u.add_argument_group("the target")
    max_risk_option(g, what="people above it are vulnerable")
    max_reid_risk_option(g, what="records above it are vulnerable (reidentification)")
    linkage_l_option(g)
    g.add_argument("--m", type=AT_LEAST_1, help="m of m-confidentiality (default: 1 / the target)")
    removed_l_option(u)
    u.add_argument("--posteriors-out", metavar="CSV", help="write every person's posteriors here")
    u.add_argument("--force", action="store_true", help="replace an existing --posteriors-out file")
    u.add_argument("--set", help="sensitive value set (default: the release model's)")
    u.add_argument("--exact", action="store_true", help="minimality: exact integer counting (small tables)")
    worlds_option(u)
    u.add_argument("--seed", type=SEED, help="replay: seed of the world sampling (default 0)")
    u.add_argument("--r", type=AT_LEAST_1, help="background: r of r-robustness (default: the algorithm's r, else 1/l)")
    u.add_argument("--min-support", type=POSITIVE_INT, help="background: least support of a signature's distribution "
                   "(default 100)")
    u.add_argument("--max-attrs", type=POSITIVE_INT, help="background: largest QI attribute set (default all, <= 6 QIs)")
    add_engine_options(u)
    output_options(u)
    u.set_defaults(func=cmd_audit)
