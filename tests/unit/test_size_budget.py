"""The size budget of `bot/` (`make lint` runs this file): no function over 60 lines, no module
over 400, so each reads in one sitting. A function counts from its first decorator to its last
line, docstring included; a module, every line of its file.

Data catalogues are exempt from the module limit: they are lists, read one entry at a time,
and splitting them would only scatter what is looked up in one place. A module being rewritten
elsewhere is exempt for a while, with the reason; the exception goes when the module does.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400

CATALOGUES = {
    "bot/i18n/catalogue/*.py": "every text the bot says, a small function per text",
    "bot/config/model.py": (
        "the runtime config's settings, one Field each with its default, range and "
        "description, the reference docs/CONFIGURATION.md follows; its few validators and "
        "helpers are short and still within the function limit"
    ),
}
"""Exempt from the module limit, never from the function limit."""

TEMPORARY: dict[str, str] = {}
"""Exempt from both limits for now; each entry must still name a module of `bot/`."""


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """Each function and method of `source` (nested ones too): name, first line, length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append((node.name, first, (node.end_lineno or first) - first + 1))
    return found


def over_budget(root: Path) -> list[str]:
    """What breaks the budget under `root` (the repository), one line each."""
    problems = []
    for path in sorted((root / "bot").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if any(Path(name).match(pattern) for pattern in TEMPORARY):
            continue
        source = path.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        catalogue = any(Path(name).match(pattern) for pattern in CATALOGUES)
        if lines > MAX_MODULE_LINES and not catalogue:
            problems.append(f"{name}: {lines} lines (module budget {MAX_MODULE_LINES})")
        for function, first, length in function_lengths(source):
            if length > MAX_FUNCTION_LINES:
                problems.append(
                    f"{name}:{first} {function}: {length} lines "
                    f"(function budget {MAX_FUNCTION_LINES})"
                )
    return problems


def test_bot_keeps_its_size_budget():
    problems = over_budget(REPO)
    assert not problems, (
        "Over the size budget; split by concern into named parts (see this file's docstring):\n"
        + "\n".join(problems)
    )


def test_every_exception_still_names_a_module():
    for pattern in [*CATALOGUES, *TEMPORARY]:
        assert list(REPO.glob(pattern)), f"{pattern} names no module any more: remove it here"


def write(root: Path, name: str, source: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")


def function_of(lines: int, decorated: bool = False) -> str:
    """A function `lines` long in all, its decorator included when `decorated`."""
    head = ["@staticmethod"] if decorated else []
    head.append("def long():")
    return "\n".join([*head, *["    x = 1"] * (lines - len(head))]) + "\n"


def test_a_function_over_60_lines_is_named_with_its_length_and_one_of_60_is_not(tmp_path):
    write(tmp_path, "bot/fits.py", function_of(60))
    write(tmp_path, "bot/long.py", function_of(61, decorated=True))

    assert over_budget(tmp_path) == ["bot/long.py:1 long: 61 lines (function budget 60)"]


def test_a_module_over_400_lines_is_named_unless_it_is_a_catalogue(tmp_path):
    write(tmp_path, "bot/fits.py", "x = 1\n" * 400)
    write(tmp_path, "bot/tall.py", "x = 1\n" * 401)
    write(tmp_path, "bot/i18n/catalogue/texts.py", "x = 1\n" * 900)

    assert over_budget(tmp_path) == ["bot/tall.py: 401 lines (module budget 400)"]
