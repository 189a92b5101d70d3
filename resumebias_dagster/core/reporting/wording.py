"""Readable names for findings: a finding's identifiers (probe axis, level, name group,
outcome, study) turned into the words of ``catalog/report/readable_names.yaml``, for the report,
the terminal summary and the UI metadata. One table, so the three say the same thing.

``strict`` (the tests) refuses an identifier the table lacks, naming it; otherwise (a user's
catalog adding an axis or a group) it falls back to the identifier spaced out, so a report
still renders."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from resumebias_dagster.catalog import CatalogError, catalog_path, load_yaml

NAMES_FILE = "report/readable_names.yaml"
SECTIONS = (
    "race_ethnicity",
    "sex",
    "studies",
    "units",
    "axes",
    "groups",
    "styles",
    "name_contrasts",
    "inconsistency",
    "selections",
    "dimensions",
    "families",
    "validity",
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class MissingReadableName(CatalogError):
    """A finding's identifier has no words in the readable-names table; the message names both."""


def spaced(identifier: str) -> str:
    """``careerGap`` → ``career gap``, ``unknown_regional`` → ``unknown regional``."""
    return _CAMEL.sub(" ", str(identifier)).replace("_", " ").lower()


@dataclass(frozen=True)
class Words:
    """The readable-names table and the job descriptions' titles."""

    table: Mapping[str, Any]
    jd_titles: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    source: str = NAMES_FILE

    def _missing(self, where: str, key: str, finding: str) -> str:
        if self.strict:
            raise MissingReadableName(
                f"{self.source}: no readable name for {key!r} under `{where}` (finding {finding!r}); add one"
            )
        return spaced(key)

    def lookup(self, section: str, key: str, finding: str = "") -> str:
        value = (self.table.get(section) or {}).get(str(key))
        return str(value) if value is not None else self._missing(section, str(key), finding or str(key))

    def level(self, axis: str, level: str, finding: str = "") -> str:
        """What a probe axis' level puts on a résumé, a noun phrase."""
        levels = ((self.table.get("axes") or {}).get(axis) or {}).get("levels") or {}
        if str(level) in levels:
            return str(levels[str(level)])
        return self._missing(f"axes.{axis}.levels", str(level), finding)

    def family(self, axis: str, finding: str = "") -> str:
        value = ((self.table.get("axes") or {}).get(axis) or {}).get("family")
        return str(value) if value is not None else self._missing(f"axes.{axis}.family", axis, finding)

    def group(self, key: str, finding: str = "") -> str:
        """A name group, as EEO-1 words: a seniority name group, a probe name level, a race or a sex."""
        key = str(key)
        if key in (self.table.get("groups") or {}):
            return str(self.table["groups"][key])
        names = ((self.table.get("axes") or {}).get("firstName") or {}).get("levels") or {}
        if key in names:
            return str(names[key])
        for section in ("race_ethnicity", "sex"):
            if key in (self.table.get(section) or {}):
                return f"{self.table[section][key]} names"
        race, _, sex = key.rpartition("_")  # an intersection: <race/ethnicity>_<sex>
        races, sexes = self.table.get("race_ethnicity") or {}, self.table.get("sex") or {}
        if race in races and sex in sexes:
            return f"{races[race]} {sexes[sex]} names"
        return self._missing("groups", key, finding)

    def family_of(self, row: Any) -> str:
        """The family a finding belongs to, in words (the "ruled out" line of a family)."""
        family, finding = str(_get(row, "family")), str(_get(row, "finding"))
        head, _, rest = family.partition(":")
        if head in ("probe", "placebo", "anonymize", "prompt_injection", "names") and rest:
            return self.family(rest.split(":")[0], finding)
        if head == "impact":
            selection, _, dimension = rest.partition(":")
            # A ranking's impact ratios are per job; the studies', per sex, race/ethnicity or both.
            by = (
                f"for {self.jd(dimension)}"
                if _get(row, "study") == "ranking"
                else (f"by {self.lookup('dimensions', dimension, finding)}")
            )
            return f"how often each group is {self.selection(selection, finding)}, {by}"
        if head == "validity":
            return self.lookup("studies", "validity", finding)
        return self.lookup("families", family, finding)

    def jd(self, jd: str) -> str:
        return self.jd_titles.get(str(jd), spaced(jd))

    def unit(self, kind: str) -> tuple[str, str]:
        """The unit of a kind of finding and the scale it is on."""
        entry = (self.table.get("units") or {}).get(kind)
        if entry is None:
            self._missing("units", kind, kind)
            return "", ""
        return str(entry.get("unit") or ""), str(entry.get("scale") or "")

    def selection(self, selection: str, finding: str = "") -> str:
        if selection.startswith("score_at_least_"):
            cut = selection.removeprefix("score_at_least_")
            return self.lookup("selections", "score_at_least", finding).format(cut=cut)
        return self.lookup("selections", selection, finding)

    def finding(self, row: Any) -> str:
        """The readable name of a verdict row's finding (its ``finding`` and ``description``)."""
        finding = str(_get(row, "finding"))
        head, _, rest = finding.partition(":")
        if head == "validity":
            return self._validity(rest, finding, str(_get(row, "description") or ""))
        if head == "fit_level":
            axis, _, level = rest.partition("_")
            return self.level(axis, level, finding)
        if head == "fit_group":
            if rest == "sex":
                return f"female against male names ({self.family('firstName', finding)})"
            race = rest.partition(":")[2]
            return f"{self.group(race, finding)} against White names"
        if head == "style_shift":
            return f"{self.lookup('styles', rest, finding)} against {self.lookup('styles', 'neutral', finding)}"
        if head == "seniority_bias":
            return self.lookup("name_contrasts", rest, finding)
        if head == "inconsistency":
            return self.lookup("inconsistency", rest, finding)
        if head == "impact_ratio":
            selection, dimension, group = (rest.split(":", 2) + ["", ""])[:3]
            reference = _reference(str(_get(row, "description") or ""), " against ", ", ")
            against = f", relative to {self.group(reference, finding)}" if reference else ""
            return f"how often {self.group(group, finding)} are {self.selection(selection, finding)}{against}"
        return self._missing("validity", finding, finding)

    def _validity(self, rest: str, finding: str, description: str) -> str:
        parts = rest.split(":")
        form, group = parts[0], ""
        if parts[0] in ("pairwise", "ranking") and len(parts) > 1:
            form = f"{parts[0]}_{parts[1]}"
            parts = [form, *parts[2:]]
            if form == "pairwise_position_a":
                form = "pairwise_position"
        if form == "criterion" and len(parts) > 1:
            return self.lookup("validity", "criterion_jd", finding).format(jd=self.jd(parts[1]))
        if form == "accuracy" and len(parts) > 2:
            form, parts = "accuracy_group", ["accuracy_group", parts[2]]
        if len(parts) > 1:
            group = parts[-1]
            if form == "pairwise_abstention":
                form = "pairwise_abstention_group"
        template = self.lookup("validity", form, finding)
        reference = _reference(description, " minus ", " names") or _reference(description, " against ", ",")
        return template.format(
            group=self.group(group, finding) if group else "",
            reference=self.group(reference, finding) if reference else "the other names",
        )


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name, None)


def _reference(description: str, before: str, after: str) -> str:
    """The reference group's identifier in a description ``... <before><ref><after>...``."""
    if before not in description:
        return ""
    tail = description.split(before, 1)[1]
    ref = tail.split(after, 1)[0].strip() if after in tail else ""
    return ref if ref and re.fullmatch(r"[a-z0-9_]+", ref) else ""


def load_words(catalog_dir=None, *, strict: bool = False) -> Words:
    """The readable-names table (a user's catalog folder first) and the job descriptions' titles."""
    table = load_yaml(NAMES_FILE, catalog_dir) or {}
    if not isinstance(table, Mapping):
        raise CatalogError(f"{catalog_path(NAMES_FILE, catalog_dir)}: must map sections ({', '.join(SECTIONS)})")
    titles: dict[str, str] = {}
    try:
        from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions

        jds = load_job_descriptions(catalog_dir=catalog_dir)
        titles = dict(zip(jds["jd"].astype(str), jds["title"].astype(str)))
    except CatalogError:
        pass  # no job descriptions: their ids, spaced out
    return Words(table, titles, strict, str(catalog_path(NAMES_FILE, catalog_dir)))


def number(x: float, digits: int = 2) -> str:
    """A figure as a reader writes it: no scientific notation, trailing zeros dropped."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def pvalue(p: float) -> str:
    """A p-value as a reader writes it: never in scientific notation."""
    if p < 0.0001:
        return "< 0.0001"
    return f"{p:.4f}".rstrip("0").rstrip(".") if p < 0.01 else f"{p:.2f}"
