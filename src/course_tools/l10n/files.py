"""Writing several files so that a failure leaves every one of them as it was.

Each file is first written in full next to its target, then all are moved into place
with ``os.replace``, which is atomic on one file system. A reader never sees a half-
written catalog or notebook, and an error before the moves changes nothing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_all(contents: dict[Path, str]) -> None:
    """Write every text to its path (UTF-8), all or nothing."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in contents.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(
                dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
            )
            staged.append((temporary, path))
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
            if path.exists():
                os.chmod(temporary, path.stat().st_mode & 0o777)
            else:
                os.chmod(temporary, 0o644)
    except BaseException:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise
    for temporary, path in staged:
        os.replace(temporary, path)
