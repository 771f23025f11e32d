"""JupyterLab for learners: its menus in the lesson's language, and no news pop-up.

JupyterLab takes default settings from ``overrides.json`` and ``overrides.d/*.json`` in
its *application settings directory* (``LabApp.app_settings_dir``). Defaults only: a
setting the learner chose in *Settings* stays theirs (JupyterLab keeps those in
``~/.jupyter/lab/user-settings``). Two defaults are set:

- ``@jupyterlab/apputils-extension:notification``: never ask whether to fetch "official
  Jupyter news" (a pop-up at the first start, and a request to a website if accepted);
- ``@jupyterlab/translation-extension:plugin``: the interface's locale, that of the
  lesson's language (its language pack is among the course's pins).

``course lab --lang pt-br`` writes both into a settings directory of its own, so that
the Python environment's JupyterLab is left as it was. JupyterLab reads these defaults
once, when it starts, so a Binder session, started by mybinder.org, cannot get its
language that way. Instead, ``binder/postBuild`` turns the news off in the environment's
directory, and a small server extension (:func:`_load_jupyter_server_extension`, on for
learners in ``jupyter-config/learner``) answers ``/course/lab/<language>/<path>``, where
each language's Binder link points: it writes the locale into the learner's own settings
of that one plugin, but only where the learner has none or the file is still the one it
wrote (:data:`MARK`), and opens ``<path>``. JupyterLab reads user settings at each request,
so the page it opens is in that language.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from course_helpers.languages import LANGUAGES, language

NEWS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}
LOCALE_PLUGIN = "@jupyterlab/translation-extension:plugin"
#: The file the language goes into, beside any other override files.
LANGUAGE_FILE = Path("overrides.d") / "course-language.json"
#: The learner's settings file of the language plugin, under JupyterLab's user settings.
USER_LANGUAGE_FILE = Path("@jupyterlab") / "translation-extension" / "plugin.jupyterlab-settings"
#: The first line of a user settings file this module wrote; JupyterLab drops it as soon as
#: the learner changes the setting, and from then on the file is theirs.
MARK = (
    "// Written by the course's link (course_tools/lab_settings.py); your own choice replaces it."
)


def default_settings_dir() -> Path:
    """The application settings directory that JupyterLab uses in this environment when
    nobody sets another: ``<prefix>/share/jupyter/lab/settings``."""
    return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"


def course_settings_dir() -> Path:
    """Where ``course lab`` keeps its settings directory: the user's cache folder."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "tf-agents-course" / "lab-settings"


def locale_overrides(code: str) -> dict[str, Any]:
    """The default that shows JupyterLab's menus in the course language ``code``."""
    return {LOCALE_PLUGIN: {"locale": language(code).lab_locale}}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
    ) as file:
        json.dump(data, file, indent=2, ensure_ascii=False)
        file.write("\n")
    os.replace(file.name, path)


def without_news(settings_dir: Path, based_on: Path | None = None) -> Path:
    """Write ``settings_dir/overrides.json``: the overrides already there, or those of
    ``based_on`` (another settings directory, such as the environment's), with the news
    pop-up turned off.

    An ``overrides.json`` that cannot be read is reported, never replaced: it may hold an
    administrator's settings.
    """
    merged: dict[str, Any] = {}
    path = (based_on or settings_dir) / "overrides.json"
    if path.exists():
        try:
            merged = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(
                f"{path} is not valid JSON ({error}); fix or remove it, then run this again."
            ) from error
    for plugin, values in NEWS.items():
        merged.setdefault(plugin, {}).update(values)
    target = settings_dir / "overrides.json"
    write_json(target, merged)
    return target


def set_language(settings_dir: Path, code: str | None) -> None:
    """Make ``code``'s locale JupyterLab's default in ``settings_dir``; ``None``: no default."""
    path = settings_dir / LANGUAGE_FILE
    if code is None:
        path.unlink(missing_ok=True)
    else:
        write_json(path, locale_overrides(code))


def set_user_language(user_settings_dir: Path, code: str) -> bool:
    """Write ``code``'s locale as the learner's setting, unless the learner chose one: only
    where there is no file yet, or the one there still starts with :data:`MARK`.

    Returns whether the file was written.
    """
    path = user_settings_dir / USER_LANGUAGE_FILE
    if path.exists() and not path.read_text(encoding="utf-8").startswith(MARK):
        return False
    locale = locale_overrides(code)[LOCALE_PLUGIN]["locale"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
    ) as file:
        file.write(f'{MARK}\n{{\n    "locale": "{locale}"\n}}\n')
    os.replace(file.name, path)
    return True


def prepare(code: str | None) -> Path:
    """The settings directory for ``course lab``: the environment's overrides, no news, and
    ``code``'s menus (or JupyterLab's own choice where ``code`` is None)."""
    settings_dir = course_settings_dir()
    without_news(settings_dir, based_on=default_settings_dir())
    set_language(settings_dir, code)
    return settings_dir


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "course_tools.lab_settings"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Answer ``/course/lab/<language>/<path>``: set the locale, then open ``<path>``."""
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from tornado import web

    def user_settings_dir() -> Path:
        for app in serverapp.extension_manager.extension_apps.get("jupyterlab", ()):
            if getattr(app, "user_settings_dir", None):
                return Path(app.user_settings_dir)
        return Path.home() / ".jupyter" / "lab" / "user-settings"

    class OpenInLanguage(JupyterHandler):
        @web.authenticated
        def get(self, code: str, path: str) -> None:
            set_user_language(user_settings_dir(), code)
            self.redirect(url_path_join(self.base_url, "lab", "tree", path))

    codes = "|".join(sorted(LANGUAGES, key=len, reverse=True))
    route = url_path_join(serverapp.base_url, "course", "lab", f"({codes})", "(.*)")
    serverapp.web_app.add_handlers(".*$", [(route, OpenInLanguage)])


if __name__ == "__main__":  # binder/postBuild: no news pop-up in the environment's JupyterLab
    print(f"wrote {without_news(default_settings_dir())}")
