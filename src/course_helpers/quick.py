"""Quick mode: one switch that shrinks a lesson's loops so CI can run it in minutes.

A lesson shows its real hyperparameters in one cell and lists, in the same cell, the
few values quick mode replaces. Learners get the full values; CI sets
``COURSE_QUICK=1`` and gets a run that exercises every line in a fraction of the time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from course_helpers.i18n import gettext

#: The environment variable that turns quick mode on.
QUICK_MODE_VARIABLE = "COURSE_QUICK"

#: Sets chosen hyperparameters without editing the lesson, e.g.
#: ``COURSE_HYPERPARAMETERS="num_iterations=5000,eval_interval=1000"``. For benchmarks
#: and for instructors who want a shorter run in class. It wins over quick mode.
OVERRIDES_VARIABLE = "COURSE_HYPERPARAMETERS"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def is_quick_mode() -> bool:
    """True when ``COURSE_QUICK`` is set to 1/true/yes/on, False when unset or 0/false/no/off."""
    raw = os.environ.get(QUICK_MODE_VARIABLE, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(
        gettext(
            "{variable}={value} is not understood. Set it to 1 for quick mode "
            "or 0 (or leave it unset) for the full run."
        ).format(variable=QUICK_MODE_VARIABLE, value=repr(raw))
    )


class Hyperparameters(Mapping[str, Any]):
    """A lesson's hyperparameters, read as attributes: ``hp.batch_size``.

    It remembers the full values, so the notebook can show what quick mode changed.
    """

    def __init__(
        self,
        full: Mapping[str, Any],
        quick_values: Mapping[str, Any],
        quick_mode: bool,
        overridden: Mapping[str, Any] | None = None,
    ):
        self._full = dict(full)
        self._quick = dict(quick_values)
        self._overridden = dict(overridden or {})
        self.quick_mode = quick_mode
        self._values = {**self._full, **(self._quick if quick_mode else {}), **self._overridden}

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(
            gettext("There is no hyperparameter named {name}. Known: {known}.").format(
                name=repr(name), known=", ".join(sorted(values))
            )
        )

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def _rows(self) -> list[tuple[str, str, str]]:
        rows = []
        for name, value in self._values.items():
            note = ""
            if name in self._overridden:
                note = gettext("set by {variable} (full: {value})").format(
                    variable=OVERRIDES_VARIABLE, value=_show(self._full[name])
                )
            elif self.quick_mode and name in self._quick:
                note = gettext("quick mode (full: {value})").format(value=_show(self._full[name]))
            rows.append((name, _show(value), note))
        return rows

    def _header(self) -> str:
        return gettext(
            "Quick mode is ON: the values marked below are shrunk for a fast run."
            if self.quick_mode
            else "Full-size run (quick mode is off)."
        )

    def __repr__(self) -> str:
        rows = self._rows()
        width = max((len(name) for name, _, _ in rows), default=0)
        lines = [f"{name:<{width}}  {value}  {note}".rstrip() for name, value, note in rows]
        return "\n".join([self._header(), *lines])

    def _repr_html_(self) -> str:
        import html

        body = "".join(
            f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(v)}</td>"
            f"<td>{html.escape(note)}</td></tr>"
            for n, v, note in self._rows()
        )
        return f"<p>{html.escape(self._header())}</p><table><tbody>{body}</tbody></table>"


#: How COURSE_HYPERPARAMETERS may write a switch (a hyperparameter whose value is a bool).
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def overrides(full: Mapping[str, Any]) -> dict[str, Any]:
    """Parse ``COURSE_HYPERPARAMETERS`` against the full values (names and types must match)."""
    raw = os.environ.get(OVERRIDES_VARIABLE, "").strip()
    result: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in full:
            raise ValueError(
                gettext(
                    "{variable}: cannot use {item}. Write name=value pairs separated by "
                    "commas, with names from: {names}."
                ).format(variable=OVERRIDES_VARIABLE, item=repr(item), names=", ".join(full))
            )
        kind = type(full[name])
        try:
            value = (
                float(text)
                if kind is float
                else int(text.replace("_", ""))
                if kind is int
                else _BOOLEANS.get(text.strip().lower())
                if kind is bool
                else None
            )
        except ValueError:
            value = None
        if value is None:
            raise ValueError(
                gettext("{variable}: {name} must be a {kind}, got {value}.").format(
                    variable=OVERRIDES_VARIABLE,
                    name=name,
                    kind=kind.__name__,
                    value=repr(text.strip()),
                )
            )
        result[name] = value
    return result


def hyperparameters(
    *,
    quick: Mapping[str, Any] | None = None,
    multiples_of: Mapping[str, Sequence[str]] | None = None,
    **full: Any,
) -> Hyperparameters:
    """Collect a lesson's hyperparameters; in quick mode, the ``quick`` values win.

    Args:
        quick: the values quick mode replaces. Every key must also be a full
            hyperparameter, with a value of the same type.
        multiples_of: ``{base: (name, ...)}``: each named value must be a whole multiple
            of ``base``'s, checked on the values the run will use (full, quick or set by
            ``COURSE_HYPERPARAMETERS``). For a loop that counts in steps of ``base`` and
            would silently skip a check at, say, every 500 steps when it counts 40 at a time.
        **full: the real hyperparameters, as a learner runs them.

    Example:
        >>> hp = hyperparameters(num_iterations=20_000, batch_size=64,
        ...                      quick=dict(num_iterations=300))
        >>> hp.batch_size
        64
    """
    quick = dict(quick or {})
    unknown = sorted(set(quick) - set(full))
    if unknown:
        raise ValueError(
            gettext(
                "quick=... names {unknown}, not among the hyperparameters ({names}). Check "
                "the spelling, or add the full value too."
            ).format(unknown=", ".join(map(repr, unknown)), names=", ".join(full))
        )
    for name, value in quick.items():
        if type(value) is not type(full[name]):
            raise TypeError(
                gettext(
                    "The quick value of {name} is a {quick} but the full value a {full}; "
                    "give both the same type."
                ).format(
                    name=repr(name), quick=type(value).__name__, full=type(full[name]).__name__
                )
            )
    result = Hyperparameters(full, quick, is_quick_mode(), overrides(full))
    _check_multiples(result, multiples_of or {})
    return result


def _check_multiples(hp: Hyperparameters, multiples_of: Mapping[str, Sequence[str]]) -> None:
    """Raise, naming both values and where each was set, unless every multiple is whole."""
    for base, names in multiples_of.items():
        for name in (base, *names):
            if name not in hp:
                raise ValueError(
                    gettext(
                        "multiples_of=... names {name}, not among the hyperparameters "
                        "({names}). Check the spelling."
                    ).format(name=repr(name), names=", ".join(hp))
                )
        for name in names:
            if hp[name] % hp[base] != 0:
                raise ValueError(
                    gettext(
                        "{name} = {value} is not a multiple of {base} = {base_value}: a "
                        "loop that advances {base_value} at a time never lands on {value}. "
                        "Change one of them ({where})."
                    ).format(
                        name=name,
                        value=_show(hp[name]),
                        base=base,
                        base_value=_show(hp[base]),
                        where=_where(hp, name, base),
                    )
                )


def _where(hp: Hyperparameters, *names: str) -> str:
    """Where the values were set: the lesson's cell, or the environment variable."""
    if any(name in hp._overridden for name in names):
        return gettext("in {variable}, or in the cell that sets the hyperparameters").format(
            variable=OVERRIDES_VARIABLE
        )
    if hp.quick_mode and any(name in hp._quick for name in names):
        return gettext("in the quick=... values of the cell that sets the hyperparameters")
    return gettext("in the cell that sets the hyperparameters")


def _show(value: Any) -> str:
    """Numbers as the lesson's language writes them (20,000; 20.000 in Portuguese; 0,99 in
    French), everything else as str()."""
    from course_helpers.numbers import number

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    return str(value)
