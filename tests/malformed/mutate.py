"""Deterministic mutations of the lit inputs and the examples: malformed IR for the
robustness corpus (``tests/malformed/run.py``).

Seeds are the ``// -----`` chunks of ``tests/filecheck/**/*.mlir`` and
``examples/*.mlir`` without their comment lines. ``mutation(i)`` is the ``i``-th
mutant: one to three edits chosen by ``random.Random(i)`` of a seed, two times in three
one that parses and verifies (so that the passes and the interpreter are reached).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TOKEN = re.compile(r'%[\w.$-]+|@[\w.$-]+|"[^"\n]*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\w+|\S')
NUMBER = re.compile(r"(?<![\w%@#.])-?\d+(?![\w.])")
SSA = re.compile(r"%[\w.$-]+")
DTYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|index)\b")
STRING = re.compile(r'"[^"\n]*"')
ATTR_NAME = re.compile(r"\b(\w+) = ")

NUMBERS = ["0", "-1", "1", "-7", "2", "9223372036854775807", "9223372036854775808",
           "18446744073709551616", "100000000000000000000000000000", "4611686018427387904"]
DTYPES = ["f16", "bf16", "f32", "f64", "f80", "f128", "f8E4M3FN", "i1", "i7", "i32", "i64",
          "ui8", "si32", "index", "complex<f32>", "tensor<4xf32>", "none", "vector<4xf32>"]
CHARS = list('{}()[]<>,:=%@"x0-?!#^.') + [" ", "\n", "\\"]
TOKENS = ["fuser.output", "fuser.add", "hir.launch", "hir.for", "{", "}", "(", ")", "->", ":",
          ",", "=", "%0", "%x", "@f", "array<i64: -5>", "dense<1.0>", "?", "x", "0", "-1",
          "!fuser.tensor<4xf32>", "!fuser.tensor<?xf32>", "f80", "unit", '"TIDx"']


@cache
def seeds() -> tuple[str, ...]:
    """The seed texts, in a fixed order."""
    files = sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")) + sorted(
        (ROOT / "examples").glob("*.mlir")
    )
    out: list[str] = []
    for path in files:
        if "Output" in path.parts:
            continue
        for chunk in path.read_text().split("// -----"):
            lines = [ln for ln in chunk.splitlines() if not ln.lstrip().startswith("//")]
            text = "\n".join(lines).strip()
            if text:
                out.append(text + "\n")
    return tuple(out)


@cache
def valid_seeds() -> tuple[int, ...]:
    """Indices of the seeds that parse and verify."""
    from fuser.ir.context import parse_module

    good: list[int] = []
    for i, text in enumerate(seeds()):
        try:
            parse_module(text)
        except Exception:  # noqa: BLE001 - an invalid seed (the lit invalid-input tests)
            continue
        good.append(i)
    return tuple(good)


# ---- edits: each takes the text and a Random and returns the new text ------------------------


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if len(lines) < 2:
        return text
    i = rng.randrange(len(lines) - 1)
    j = i + 1 if rng.random() < 0.7 else rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def delete_char(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text))
    return text[:i] + text[i + 1 :]


def insert_char(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(CHARS) + text[i:]


def _tokens(text: str) -> list[re.Match[str]]:
    return list(TOKEN.finditer(text))


def delete_token(text: str, rng: random.Random) -> str:
    toks = _tokens(text)
    m = rng.choice(toks)
    return text[: m.start()] + text[m.end() :]


def duplicate_token(text: str, rng: random.Random) -> str:
    m = rng.choice(_tokens(text))
    return text[: m.end()] + " " + m.group() + text[m.end() :]


def insert_token(text: str, rng: random.Random) -> str:
    m = rng.choice(_tokens(text))
    return text[: m.start()] + rng.choice(TOKENS) + " " + text[m.start() :]


def _replace_match(text: str, pattern: re.Pattern[str], rng: random.Random, new: str) -> str:
    found = list(pattern.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + new + text[m.end() :]


def change_number(text: str, rng: random.Random) -> str:
    return _replace_match(text, NUMBER, rng, rng.choice(NUMBERS))


def change_extent(text: str, rng: random.Random) -> str:
    """An extent inside a shape (``4x8``, ``<8x``): to 0, huge, symbolic."""
    pattern = re.compile(r"(?<=[<x])\d+(?=x)|(?<=x)\d+(?=x|[a-z])")
    return _replace_match(text, pattern, rng, rng.choice(["0", "?", "9223372036854775807",
                                                           "4294967296", "1"]))


def change_dtype(text: str, rng: random.Random) -> str:
    return _replace_match(text, DTYPE, rng, rng.choice(DTYPES))


def change_all_dtypes(text: str, rng: random.Random) -> str:
    old = [m.group() for m in DTYPE.finditer(text)]
    if not old:
        return text
    src, dst = rng.choice(old), rng.choice(DTYPES)
    return re.sub(rf"\b{re.escape(src)}\b", dst, text)


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text))]


def unterminated_string(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text) + 1)
    word = "".join(rng.choice("abcdefgh") for _ in range(rng.randrange(20, 60)))
    return text[:i] + '"' + word + ("\\" if rng.random() < 0.3 else "") + text[i:]


def unbalance_brackets(text: str, rng: random.Random) -> str:
    found = [i for i, c in enumerate(text) if c in "{}()[]<>"]
    if not found:
        return text
    i = rng.choice(found)
    if rng.random() < 0.5:
        return text[:i] + text[i + 1 :]
    return text[:i] + rng.choice("{}()[]<>") + text[i + 1 :]


def swap_ssa_names(text: str, rng: random.Random) -> str:
    names = sorted({m.group() for m in SSA.finditer(text)})
    if len(names) < 2:
        return text
    a, b = rng.sample(names, 2)
    if rng.random() < 0.5:  # one use renamed
        return _replace_match(text, re.compile(re.escape(a) + r"\b"), rng, b)
    return re.sub(re.escape(a) + r"\b", "\0", re.sub(re.escape(b) + r"\b", a, text)).replace("\0", b)


def change_string(text: str, rng: random.Random) -> str:
    return _replace_match(text, STRING, rng, rng.choice(['"TIDx"', '""', '"pointwise"',
                                                         '"no_op"', '"\\00"', '"x y"']))


def rename_attribute(text: str, rng: random.Random) -> str:
    found = list(ATTR_NAME.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    new = rng.choice(["dims", "alias_inputs", "kind", "shape", "value", "step", "bogus"])
    return text[: m.start(1)] + new + text[m.end(1) :]


EDITS: tuple[Callable[[str, random.Random], str], ...] = (
    delete_line, duplicate_line, swap_lines, delete_char, insert_char, delete_token,
    duplicate_token, insert_token, change_number, change_extent, change_dtype,
    change_all_dtypes, truncate, unterminated_string, unbalance_brackets, swap_ssa_names,
    change_string, rename_attribute,
)


@dataclass(frozen=True)
class Mutant:
    index: int
    seed: int
    edits: tuple[str, ...]
    text: str


def mutation(index: int) -> Mutant:
    """The ``index``-th mutant (deterministic)."""
    all_seeds = seeds()
    rng = random.Random(index)
    valid = valid_seeds()
    seed = valid[(index // 3) % len(valid)] if index % 3 else (index // 3) % len(all_seeds)
    text = all_seeds[seed]
    names: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        edit = rng.choice(EDITS)
        if text:
            text = edit(text, rng)
        names.append(edit.__name__)
    return Mutant(index, seed, tuple(names), text)
