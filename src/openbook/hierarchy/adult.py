"""Generalization hierarchies of the UCI Adult data set, the data every paper in
``../shared/papers`` uses.

Variant ``"paper001"`` reproduces the heights of paper 001 (Wong et al., VLDB 2007) Table 12
exactly - Age: 5-, 10-, 20-year ranges, height 4; Work Class 3; Marital Status 3; Occupation 2;
Race 2; Sex: suppression, 1; Native Country 3; Salary Class: suppression, 1; Education 4 - with
taxonomies designed here (the paper does not print them). The Education taxonomy keeps the
sensitive value set of paper 001 §7 / paper 003 §6, "education levels before secondary"
{Preschool, 1st-4th, 5th-6th, 7th-8th}, as the leaf set of one node (``Elementary``), and
mirrors paper 001 Fig. 1 (college: academic, vocational; university: undergrad, postgrad).
It is built in code (no CSV), from ARX-style level rows; ``write_arx_csv`` exports it.

Age leaves are every integer of ``age_domain`` (default 0..99), not only the 74 ages 17..90
present in Adult, so that any age encodes; ranges outside the data simply have no rows. Note
that the base (paper 001 Def. 5) is then 100, not 74: pass ``age_domain=(17, 90)`` for the
74-leaf hierarchy of Table 12 (its edge ranges, e.g. ``[15-19]``, then cover 3 ages).

Variant ``"arx"`` loads the nine ARX Adult hierarchies shipped as package data
(``openbook/data/hierarchies/arx/``, copied from ARX; ages 1..100, heights age 4, education 3,
marital-status 2, native-country 2, occupation 2, workclass 2, race/sex/salary-class 1).

Values use the exact Adult spellings (``Married-civ-spouse``, ``Outlying-US(Guam-USVI-etc)``,
``Holand-Netherlands``, ...). ``adult.test`` writes the salary class with a trailing dot
(``>50K.``); the loader must strip it. ``Never-worked`` (only in rows with ``?`` occupation)
is a leaf too, so every non-missing value of ``adult.data`` + ``adult.test`` encodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from openbook.errors import ParameterError
from openbook.hierarchy.arx import read_arx_csv
from openbook.hierarchy.builders import flat, from_levels, interval_ladder
from openbook.hierarchy.tree import Hierarchy

__all__ = ["ADULT_COLUMNS", "PAPER001_HEIGHTS", "EDUCATION_BEFORE_SECONDARY", "adult_hierarchies"]

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
    "salary-class",
)

#: Heights of paper 001 Table 12.
PAPER001_HEIGHTS: dict[str, int] = {
    "age": 4,
    "workclass": 3,
    "marital-status": 3,
    "occupation": 2,
    "race": 2,
    "sex": 1,
    "native-country": 3,
    "salary-class": 1,
    "education": 4,
}

# Each taxonomy: leaf -> labels of levels 1..height-1 (the root "*" is appended).
_WORKCLASS = {
    "Private": ("Private", "Employed"),
    "Self-emp-not-inc": ("Self-employed", "Employed"),
    "Self-emp-inc": ("Self-employed", "Employed"),
    "Federal-gov": ("Government", "Employed"),
    "Local-gov": ("Government", "Employed"),
    "State-gov": ("Government", "Employed"),
    "Without-pay": ("Unemployed", "Not-employed"),
    "Never-worked": ("Unemployed", "Not-employed"),
}

_EDUCATION = {  # in educational order, so codes are ordinal
    "Preschool": ("Primary", "Elementary", "School"),
    "1st-4th": ("Primary", "Elementary", "School"),
    "5th-6th": ("Middle", "Elementary", "School"),
    "7th-8th": ("Middle", "Elementary", "School"),
    "9th": ("Junior-secondary", "Secondary", "School"),
    "10th": ("Junior-secondary", "Secondary", "School"),
    "11th": ("Senior-secondary", "Secondary", "School"),
    "12th": ("Senior-secondary", "Secondary", "School"),
    "HS-grad": ("Senior-secondary", "Secondary", "School"),
    "Some-college": ("Academic", "College", "Post-secondary"),
    "Assoc-acdm": ("Academic", "College", "Post-secondary"),
    "Assoc-voc": ("Vocational", "College", "Post-secondary"),
    "Bachelors": ("Undergrad", "University", "Post-secondary"),
    "Masters": ("Postgrad", "University", "Post-secondary"),
    "Prof-school": ("Postgrad", "University", "Post-secondary"),
    "Doctorate": ("Postgrad", "University", "Post-secondary"),
}

#: The sensitive value set of paper 001 §7: education levels before "secondary".
EDUCATION_BEFORE_SECONDARY: tuple[str, ...] = ("Preschool", "1st-4th", "5th-6th", "7th-8th")

_MARITAL = {
    "Married-civ-spouse": ("Spouse-present", "Married"),
    "Married-AF-spouse": ("Spouse-present", "Married"),
    "Married-spouse-absent": ("Spouse-absent", "Married"),
    "Separated": ("Spouse-absent", "Married"),
    "Divorced": ("Formerly-married", "Not-married"),
    "Widowed": ("Formerly-married", "Not-married"),
    "Never-married": ("Never-married", "Not-married"),
}

_OCCUPATION = {
    "Exec-managerial": ("White-collar",),
    "Prof-specialty": ("White-collar",),
    "Tech-support": ("White-collar",),
    "Adm-clerical": ("White-collar",),
    "Sales": ("White-collar",),
    "Craft-repair": ("Blue-collar",),
    "Machine-op-inspct": ("Blue-collar",),
    "Handlers-cleaners": ("Blue-collar",),
    "Transport-moving": ("Blue-collar",),
    "Farming-fishing": ("Blue-collar",),
    "Other-service": ("Service",),
    "Protective-serv": ("Service",),
    "Priv-house-serv": ("Service",),
    "Armed-Forces": ("Service",),
}

_RACE = {
    "White": ("White",),
    "Black": ("Non-white",),
    "Asian-Pac-Islander": ("Non-white",),
    "Amer-Indian-Eskimo": ("Non-white",),
    "Other": ("Non-white",),
}

_REGIONS = {  # continent -> region -> countries; "South" (Adult's spelling) is read as South Korea
    "America": {
        "Northern-America": ("United-States", "Canada", "Outlying-US(Guam-USVI-etc)"),
        "Central-America": ("Mexico", "Guatemala", "Honduras", "El-Salvador", "Nicaragua"),
        "Caribbean": ("Puerto-Rico", "Cuba", "Jamaica", "Haiti", "Dominican-Republic", "Trinadad&Tobago"),
        "South-America": ("Columbia", "Ecuador", "Peru"),
    },
    "Europe": {
        "Western-Europe": ("England", "Scotland", "Ireland", "France", "Germany", "Holand-Netherlands"),
        "Southern-Europe": ("Italy", "Portugal", "Greece", "Yugoslavia"),
        "Eastern-Europe": ("Poland", "Hungary"),
    },
    "Asia": {
        "East-Asia": ("China", "Hong", "Taiwan", "Japan", "South"),
        "Southeast-Asia": ("Philippines", "Vietnam", "Laos", "Cambodia", "Thailand"),
        "South-and-West-Asia": ("India", "Iran"),
    },
}
_NATIVE_COUNTRY = {
    country: (region, continent)
    for continent, regions in _REGIONS.items()
    for region, countries in regions.items()
    for country in countries
}


def _taxonomy(levels: Mapping[str, tuple[str, ...]], column: str) -> Hierarchy:
    return from_levels([[leaf, *labels, "*"] for leaf, labels in levels.items()], column)


def _paper001(age_domain: tuple[int, int]) -> dict[str, Hierarchy]:
    lo, hi = age_domain
    if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
        raise ParameterError(
            f"age_domain must be two integers 0 <= lo <= hi, got {age_domain!r}",
            parameter="age_domain",
            value=age_domain,
        )
    return {
        "age": interval_ladder(range(lo, hi + 1), (5, 10, 20), column="age"),
        "workclass": _taxonomy(_WORKCLASS, "workclass"),
        "education": _taxonomy(_EDUCATION, "education"),
        "marital-status": _taxonomy(_MARITAL, "marital-status"),
        "occupation": _taxonomy(_OCCUPATION, "occupation"),
        "race": _taxonomy(_RACE, "race"),
        "sex": flat(["Male", "Female"], "sex"),
        "native-country": _taxonomy(_NATIVE_COUNTRY, "native-country"),
        "salary-class": flat(["<=50K", ">50K"], "salary-class"),
    }


def _arx() -> dict[str, Hierarchy]:
    folder = resources.files("openbook").joinpath("data", "hierarchies", "arx")
    return {
        col: read_arx_csv(
            folder.joinpath(f"adult_hierarchy_{col}.csv"), column=col, leaf_type=int if col == "age" else None
        )
        for col in ADULT_COLUMNS
    }


def adult_hierarchies(variant: str = "paper001", *, age_domain: tuple[int, int] = (0, 99)) -> dict[str, Hierarchy]:
    """Hierarchies of the nine Adult columns, ``{column: Hierarchy}`` in :data:`ADULT_COLUMNS`
    order.

    ``variant="paper001"``: paper 001 Table 12 heights, taxonomies built in code, age leaves
    ``age_domain`` (inclusive, default 0..99). ``variant="arx"``: the ARX Adult hierarchies
    shipped as package data (``age_domain`` is ignored; ARX ages are 1..100).
    """
    if variant == "paper001":
        return _paper001(age_domain)
    if variant == "arx":
        return _arx()
    raise ParameterError(
        f"variant must be 'paper001' or 'arx', got {variant!r}", parameter="variant", value=variant
    )
