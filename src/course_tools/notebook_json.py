"""Read and write lesson notebooks as nbformat 4 JSON, without importing nbformat.

``course l10n`` commands should answer in about a second, and importing nbformat costs
most of one (it imports jsonschema to validate). The translation tooling only reads
lessons whose JSON it checks itself (:func:`units.read_lesson`) and writes them back
with their cells' text changed, so it uses the JSON layout nbformat writes (one-space
indent, sorted keys, sources split into lines, a final newline);
``tests/test_l10n_build.py`` proves the bytes equal ``nbformat.write``'s on every
lesson. Validation still happens: CI's notebook tests read every built lesson with
nbformat.
"""

from __future__ import annotations

import copy
import json
from typing import Any


class Node(dict):
    """A dict whose keys read as attributes, like nbformat's NotebookNode."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(name) from error

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def _nodes(value: Any) -> Any:
    if isinstance(value, dict):
        return Node({key: _nodes(item) for key, item in value.items()})
    if isinstance(value, list):
        return [_nodes(item) for item in value]
    return value


def reads(text: str) -> Node:
    """A notebook from its JSON, with each cell's source joined into one string."""
    notebook = _nodes(json.loads(text))
    for cell in notebook.get("cells", []):
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    return notebook


def writes(notebook: dict) -> str:
    """The notebook's JSON as ``nbformat.write`` saves it."""
    data = copy.deepcopy(notebook)
    for cell in data.get("cells", []):
        source = cell.get("source")
        if isinstance(source, str):
            cell["source"] = source.splitlines(True)
        cell.get("metadata", {}).pop("trusted", None)
    data.get("metadata", {}).pop("orig_nbformat", None)
    return (
        json.dumps(data, sort_keys=True, indent=1, separators=(",", ": "), ensure_ascii=False)
        + "\n"
    )


def markdown_cell(cell_id: str, source: str, metadata: dict | None = None) -> Node:
    return Node(cell_type="markdown", id=cell_id, metadata=_nodes(metadata or {}), source=source)
