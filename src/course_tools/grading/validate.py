"""``course validate``: nbgrader's validation, told in the notebook's language.

nbgrader's Validator decides (which test cells changed, which fail); its printed report,
"Success!" included, is English-only and not configurable. This module asks the
Validator for its results and writes the report from the course's catalogs instead.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from traitlets.config import Config

from course_helpers.i18n import translator
from course_tools.grading.feedback import recorded_language
from course_tools.grading.settings import success_message, validator_messages


def validate(path: Path, *, cell_timeout: int = 300) -> tuple[bool, str]:
    """Run the notebook's tests as nbgrader would; (passed, report in its language)."""
    from nbgrader.validator import Validator

    if not path.is_file():
        raise FileNotFoundError(f"{path} is not a notebook file.")
    language = recorded_language(nbformat.read(path, as_version=4))
    _ = translator(language)
    messages = validator_messages(language)
    config = Config()
    config.Execute.timeout = cell_timeout
    for name, text in messages.items():
        setattr(config.Validator, name, text)
    results = Validator(config=config).validate(str(path))
    lines: list[str] = []
    rule = "=" * 60
    if results.get("type_changed"):
        lines.append(
            messages["type_changed_warning"].format(num_changed=len(results["type_changed"]))
        )
        for cell in results["type_changed"]:
            lines += [
                rule,
                _("This {old} cell is now a {new} cell:").format(
                    old=cell["old_type"], new=cell["new_type"]
                ),
                cell["source"],
            ]
    elif results.get("changed"):
        lines.append(messages["changed_warning"].format(num_changed=len(results["changed"])))
        for cell in results["changed"]:
            lines += [rule, _("This test cell has changed:"), cell["source"]]
    elif results.get("failed"):
        lines.append(messages["failed_warning"].format(num_failed=len(results["failed"])))
        for cell in results["failed"]:
            error = cell["raw_error"]
            if error == "You did not provide a response.":
                error = _("You did not provide a response.")
            elif error == "Partial credit; passed some but not all of the tests":
                error = _("Partial credit: some of the tests pass, not all.")
            lines += [rule, _("This cell failed:"), cell["source"], _("The error was:"), error]
    else:
        return True, success_message(language)
    return False, "\n".join(lines)
