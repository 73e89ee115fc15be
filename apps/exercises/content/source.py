"""The author's text of a chapter file, kept as written: a head, one block per exercise, a tail.

A chapter file is a mapping whose ``exercises:`` is a list of mappings. Its text is cut into the
head (everything before the first item's ``- `` line), one block per item (from its ``- `` line up
to the next item's, so comments that follow an item belong to it) and a tail (from the next
top-level key after ``exercises``, usually nothing). Joined in order they are the file byte for
byte. Nothing here re-dumps text that was read: what an author wrote is stored and downloaded as
written. What the text *means* is read as ``loader.load_workbook`` reads a file: ``chapter_load``
applies the same rules to a chapter's text, for an upload in the admin and for an exercise edited there.

The items' lines come from a YAML parser's node marks, not from pattern matching: PyYAML's composer
(libyaml), the parser family whose reading the loader's is. ruamel.yaml's round-trip parser gives
the same lines (``CommentedSeq.lc.item``) but, without its C extension (not installed), took 28 ms a
file against 0.75 ms (all 47 chapter files: 1.3 s against 35 ms), which ``sync_content`` and the edit
loop pay on every run. ruamel writes the one text made here: the block for an exercise that has no
author's text (``dump_block``), as round-trip YAML with literal blocks for multi-line prose.
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import LiteralScalarString

from apps.exercises.content import loader
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec


class SourceError(loader.LoadError):
    """A chapter's or an exercise's text that does not read. The message names the line."""


@dataclass(frozen=True)
class Block:
    id: str | None  # the item's ``id:`` (None when it has none: the schema refuses it later)
    line: int  # 1-based line of the item's ``- `` in the chapter file
    text: str


@dataclass(frozen=True)
class ChapterText:
    name: str  # the file's name, ``03-memory-budget.yaml``
    head: str
    blocks: tuple[Block, ...]
    tail: str
    number: int | None = None  # the chapter's ``number:``

    @property
    def text(self) -> str:
        return join(self.head, [b.text for b in self.blocks], self.tail)

    def block(self, exercise_id: str) -> str | None:
        return next((b.text for b in self.blocks if b.id == exercise_id), None)


def join(head: str, blocks: Sequence[str], tail: str) -> str:
    return head + "".join(blocks) + tail


def _dumper() -> YAML:
    """ruamel's round-trip writer, 100 columns, writing only what the loader reads back the same."""
    rt = YAML(typ="rt")
    rt.Representer = _Representer
    rt.width = 100
    return rt


_STR = "tag:yaml.org,2002:str"
_READER = yaml.resolver.Resolver()


class _Representer(RoundTripRepresenter):
    """Writes what the loader (PyYAML, YAML 1.1) reads back as the same value: ruamel writes YAML
    1.2, where ``No``, ``on`` or ``1_000`` are text, left bare; the loader would read a bool, a number."""

    def represent_str(self, data: str) -> Any:
        if _READER.resolve(yaml.ScalarNode, data, (True, False)) != _STR:  # type: ignore[no-untyped-call]
            return self.represent_scalar(_STR, data, style="'")
        return super().represent_str(data)


_Representer.add_representer(str, _Representer.represent_str)


_ITEM = re.compile(r"^\s*-\s+number:\s*(\S.*?)\s*$")


def _within(text: str, exc: Exception) -> str:
    """Which exercise a parse error falls in: the nearest ``- number:`` line above it."""
    where = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if where is None:
        return ""
    lines = text.splitlines()[: where.line + 1]
    for i in range(len(lines) - 1, -1, -1):
        found = _ITEM.match(lines[i])
        if found:
            return f" (in exercise {found.group(1)}, which starts at line {i + 1})"
    return ""


def mark(exc: Exception) -> str:
    """Where a YAML error is, and what: the line the parser stopped at and, when it says so, the
    line of what it was reading (an unclosed bracket is there, not where it noticed)."""
    at = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {at.line + 1}, column {at.column + 1}" if at is not None else "somewhere"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context, since = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and since is not None and since is not at:
        problem += f" ({context} that starts at line {since.line + 1}, column {since.column + 1})"
    return f"{where}: {problem}"


_FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # YAML's line breaks, which its marks count


def _lines(text: str) -> list[str]:
    """The text's lines with their ends, split where YAML counts a line (not ``str.splitlines``'s
    wider set, which would count a form feed)."""
    out, at = [], 0
    for found in _BREAK.finditer(text):
        out.append(text[at : found.end()])
        at = found.end()
    if at < len(text):
        out.append(text[at:])
    return out


def _compose(text: str) -> yaml.Node | None:
    """The text's node tree, with the line and column of every node. libyaml's parser when there is
    one (a few hundred times faster than a pure-Python parser on our files; see the module note);
    on any complaint of it, the pure-Python one the loader uses, whose error is the one reported."""
    try:
        return yaml.compose(text, Loader=_FAST)
    except yaml.YAMLError:
        return yaml.compose(text, Loader=yaml.SafeLoader)


def split_chapter(text: str, *, name: str = "chapter") -> ChapterText:
    """Cut a chapter file's text into head, exercise blocks and tail (see the module docstring)."""
    try:
        doc = _compose(text)
    except yaml.YAMLError as exc:
        raise SourceError(f"{name}: not valid YAML at {mark(exc)}{_within(text, exc)}") from None
    if not isinstance(doc, yaml.MappingNode):
        raise SourceError(f"{name}: expected a mapping at the top level (number, title, intro, exercises)")
    lines = _lines(text)
    keys = [k.value if isinstance(k, yaml.ScalarNode) else None for k, _ in doc.value]
    fields = {k: v for k, (_, v) in zip(keys, doc.value, strict=True) if isinstance(k, str)}
    number_node = fields.get("number")
    number = _int(number_node) if isinstance(number_node, yaml.ScalarNode) else None
    items = fields.get("exercises")
    if not isinstance(items, yaml.SequenceNode) or not items.value or items.flow_style:
        # No list of blocks to cut (none yet, or written inline): the whole file is the head.
        return ChapterText(name=name, head=text, blocks=(), tail="", number=number)
    starts = [_dash_line(lines, (item.start_mark.line, item.start_mark.column)) for item in items.value]
    at = keys.index("exercises")
    end = doc.value[at + 1][0].start_mark.line if at + 1 < len(doc.value) else len(lines)
    blocks = []
    for i, start in enumerate(starts):
        stop = starts[i + 1] if i + 1 < len(starts) else end
        blocks.append(Block(id=_id(items.value[i]), line=start + 1, text="".join(lines[start:stop])))
    return ChapterText(
        name=name,
        head="".join(lines[: starts[0]]),
        blocks=tuple(blocks),
        tail="".join(lines[end:]),
        number=number,
    )


def _int(node: yaml.ScalarNode) -> int | None:
    value = yaml.safe_load(yaml.serialize(node))  # the scalar as the loader reads it
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _id(item: yaml.Node) -> str | None:
    if not isinstance(item, yaml.MappingNode):
        return None
    for key, value in item.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "id" and isinstance(value, yaml.ScalarNode):
            return str(value.value)
    return None


def _dash_line(lines: Sequence[str], position: tuple[int, int]) -> int:
    """The line of the ``- `` that opens the item whose value starts at ``position`` (0-based line,
    column): its own line (``- number: ...``) or, for ``-`` alone on a line, the one above."""
    line, column = position
    for i in range(line, -1, -1):
        head = lines[i][:column] if i == line else lines[i]
        if head.strip().startswith("-"):
            return i
    return line


def read_chapter(path: Path) -> ChapterText:
    """A chapter file's text as stored on disk: bytes decoded, line endings untouched."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: {exc}") from None
    return split_chapter(text, name=path.name)


def workbook_texts(workbook_dir: Path, chapter_glob: str = "*") -> dict[int, ChapterText]:
    """Each chapter file of a workbook folder, by chapter number (the files ``load_workbook`` reads)."""
    out: dict[int, ChapterText] = {}
    for path in sorted((workbook_dir / "chapters").glob(f"{chapter_glob}.yaml")):
        chapter = read_chapter(path)
        if chapter.number is None:
            raise SourceError(f"{path}: `number` must be an integer")
        out[chapter.number] = chapter
    return out


# ---------------------------------------------------------------------------------------------
# Blocks on their own: the admin's editor
# ---------------------------------------------------------------------------------------------


def indent_of(blocks: Sequence[str]) -> str:
    """The indentation of the ``- `` of a chapter's items (two spaces in our files)."""
    for text in blocks:
        for line in text.splitlines():
            if line.strip().startswith("-"):
                return line[: len(line) - len(line.lstrip())]
    return "  "


def as_block(text: str, *, indent: str = "  ") -> str:
    """An exercise's text as a list item of its chapter: a mapping (``number: ...``) is indented
    under a ``- ``; a block (``  - number: ...``) is kept as written. Ends with a newline."""
    if not text.endswith("\n"):
        text += "\n"
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    if first.lstrip().startswith("- ") or first.strip() == "-":
        return text
    pad = indent + "  "
    out, opened = [], False
    for line in text.splitlines(keepends=True):
        if not opened and line.strip() and not line.lstrip().startswith("#"):
            out.append(f"{indent}- {line}")
            opened = True
        else:
            out.append(pad + line if line.strip() else line)
    return "".join(out)


def dump_block(spec: dict[str, Any], *, indent: str = "  ") -> str:
    """A block written from a stored spec, for an exercise that has no author's text (made in the
    admin before texts were kept): content-file YAML, code folded back to its folder reference."""
    with contextlib.suppress(ValidationError):  # the schema's key order (jsonb keeps its own)
        spec = ExerciseSpec.model_validate(spec).model_dump(mode="json")
    data = _uninlined(spec)
    if isinstance(data.get("code"), dict):
        data["code"] = {"entry": data["code"].get("entry"), "dir": data["code"].get("dir")}
    data = {k: _literal(v) for k, v in data.items() if v not in (None, [], {}, "") or k == "prompt"}
    out = io.StringIO()
    rt = _dumper()
    rt.indent(mapping=2, sequence=len(indent) + 2, offset=len(indent))  # ``indent`` before each ``- ``
    rt.dump([data], out)
    return out.getvalue()


def _uninlined(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored spec as its author would write it: what the loader copied in from the chapter's
    scenario (its givens, derived values and draw rules) and from presets.yaml (the rows) taken out
    again, so the block reads back through ``chapter_load`` as the same spec."""
    data = copy.deepcopy(spec)
    vary = data.get("vary") if isinstance(data.get("vary"), dict) else None
    scenario = vary.pop("scenario", None) if vary is not None else None
    if isinstance(scenario, dict):
        for key, inlined in (("givens", scenario.get("seed") or {}), ("derived", scenario.get("derived") or {})):
            own = data.get(key) or {}
            data[key] = {k: v for k, v in own.items() if k not in inlined or inlined[k] != v}
    for use in (vary or {}).get("presets") or []:
        if isinstance(use, dict):
            use.pop("rows", None)
    if vary is not None and not any(v not in (None, [], {}) for v in vary.values()):
        data.pop("vary")
    return data


def scenarios_of(specs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A chapter's ``scenarios:`` as written, from its exercises' stored specs (the loader copied each
    scenario into the exercises that name it, as ``vary.scenario``)."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        inlined = (spec.get("vary") or {}).get("scenario") if isinstance(spec.get("vary"), dict) else None
        if not isinstance(inlined, dict) or inlined.get("name") in out:
            continue
        presets = [{k: v for k, v in use.items() if k != "rows"} for use in inlined.get("presets") or []]
        vary = {
            k: v
            for k, v in (("givens", inlined.get("givens")), ("presets", presets), ("require", inlined.get("require")))
            if v
        }
        scenario = {"givens": inlined.get("seed") or {}, "derived": inlined.get("derived") or {}}
        out[str(inlined["name"])] = {k: v for k, v in scenario.items() if v} | ({"vary": vary} if vary else {})
    return out


def dump_head(chapter: Any, scenarios: dict[str, dict[str, Any]] | None = None) -> str:
    """A chapter file's head written from a chapter row (one synced before texts were kept, or made
    in the admin), with the scenarios its exercises' specs carry."""
    data = {"number": chapter.number, "title": chapter.title}
    data |= {k: v for k, v in (("givens", chapter.givens), ("derived", chapter.derived)) if v}
    if scenarios:
        data["scenarios"] = scenarios
    data["intro"] = chapter.intro
    out = io.StringIO()
    rt = _dumper()
    rt.dump(_literal(data), out)
    return out.getvalue() + "exercises:\n"


def _literal(value: Any) -> Any:
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    if isinstance(value, dict):
        return {k: _literal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Reading a chapter's text with the loader's rules
# ---------------------------------------------------------------------------------------------

CodeRule = Callable[[dict[str, Any]], None]
"""What a ``code: {dir: ...}`` reference becomes: reads the folder (``sync_content``, an upload)
or keeps the current version's files (an edit in the admin). May raise LoadError."""


def chapter_load(
    text: str,
    *,
    name: str,
    presets: dict[str, dict[str, dict[str, Any]]],
    code: CodeRule,
    skip: Callable[[dict[str, Any]], bool] | None = None,
) -> tuple[ChapterSpec, ChapterText]:
    """A chapter file's text read as ``load_workbook`` reads the file: PyYAML, the chapter's
    scenarios, code and presets inlined, the schema. ``skip`` leaves an exercise out (a code
    exercise that needs the sandbox, when there is none) as ``Expected.skip_unavailable`` does.
    Raises SourceError naming the line."""
    chapter = split_chapter(text, name=name)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SourceError(f"{name}: not valid YAML at {mark(exc)}{_within(text, exc)}") from None
    if not isinstance(raw, dict):
        raise SourceError(f"{name}: expected a mapping at the top level (number, title, intro, exercises)")
    lines = [b.line for b in chapter.blocks]
    try:
        loader._inline_scenarios(raw, presets)  # the loader's own rules, not a copy
        kept = []
        for i, ex in enumerate(raw.get("exercises") or []):
            if isinstance(ex, dict):
                try:
                    code(ex)
                except loader.SandboxNeeded:
                    if skip is None or not skip(ex):
                        raise
                    continue
                except loader.LoadError as exc:
                    raise SourceError(f"{name}: line {_line(lines, i)}: {exc}") from None
                loader._inline_presets(ex, presets)
            kept.append(ex)
        if isinstance(raw.get("exercises"), list):
            raw["exercises"] = kept
        spec = ChapterSpec.model_validate(raw)
    except ValidationError as exc:
        raise SourceError(_explain(name, exc, lines)) from None
    except SourceError:
        raise
    except loader.LoadError as exc:
        raise SourceError(f"{name}: {exc}") from None
    return spec, chapter


def _line(lines: Sequence[int], index: int) -> str:
    return str(lines[index]) if index < len(lines) else "?"


def _explain(name: str, exc: ValidationError, lines: Sequence[int]) -> str:
    """The schema's complaints, each with the line of the exercise it is about."""
    out = [f"{name}:"]
    for err in exc.errors():
        loc = err["loc"]
        where = ".".join(str(p) for p in loc)
        if len(loc) > 1 and loc[0] == "exercises" and isinstance(loc[1], int):
            where = f"line {_line(lines, loc[1])} (exercise {loc[1] + 1}): {where}"
        out.append(f"  {where}: {err['msg']}")
    return "\n".join(out)


@dataclass(frozen=True)
class Edit:
    block: str  # the exercise's block as it is to be stored (the author's text, as a list item)
    spec: ExerciseSpec
    line: int  # where the block starts in its chapter file


def block_read(
    text: str, *, chapter: ChapterText, key: str | None, presets: dict[str, dict[str, dict[str, Any]]], code: CodeRule
) -> Edit:
    """An exercise's text as edited (in the admin, in a draft) read as part of its chapter file, by
    the loader's rules: it takes the place of exercise ``key``'s block (a new exercise, ``None``,
    goes after the last), and the chapter text is read with ``chapter_load`` (its scenarios and
    presets apply). A mapping without its ``- `` is made a list item like the chapter's others;
    CRLF line ends (a browser's textarea) become the file's own. Raises SourceError naming the line."""
    if "\r\n" not in chapter.text:
        text = text.replace("\r\n", "\n")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SourceError(f"Not valid YAML at {mark(exc)}") from None
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    if not isinstance(raw, dict):
        raise SourceError("Expected one exercise: a mapping with number, id, title, kind, format, ...")
    others = [b.text for b in chapter.blocks if key is None or b.id != key]
    block = as_block(text, indent=indent_of(others))
    at = next((i for i, b in enumerate(chapter.blocks) if key is not None and b.id == key), len(others))
    blocks = [*others[:at], block, *others[at:]]
    line = len(_lines(chapter.head)) + sum(len(_lines(b)) for b in blocks[:at]) + 1
    try:
        spec, _ = chapter_load(join(chapter.head, blocks, chapter.tail), name=chapter.name, presets=presets, code=code)
    except loader.LoadError as exc:
        raise SourceError(
            f"{exc}\n(Line numbers are the chapter file's: this exercise starts at line {line}.)"
        ) from None
    return Edit(block=block, spec=spec.exercises[at], line=line)


def kept_code(current: dict[str, dict[str, Any]]) -> CodeRule:
    """Code references resolved as the admin always has: an exercise's code files are kept from its
    current version (they are edited in the content folder), only ``entry`` may change here."""

    def rule(ex: dict[str, Any]) -> None:
        ref = ex.get("code")
        kept = current.get(str(ex.get("id")))
        if isinstance(ref, dict) and kept is not None:
            ex["code"] = {**kept, "entry": ref.get("entry", kept.get("entry"))}

    return rule


def folder_code(workbook_dir: Path, expected: loader.Expected | None) -> CodeRule:
    """Code references resolved as ``sync_content`` resolves them: from the workbook's code folder."""

    def rule(ex: dict[str, Any]) -> None:
        loader._inline_code(ex, workbook_dir, expected=expected)

    return rule
