"""Fonts for the PNG drawing: matplotlib's default font plus, when the machine has one, a font
with CJK glyphs, and a test of whether a label can be drawn without missing-glyph boxes.

A CJK font is looked for among the fonts matplotlib knows (system fonts and any added with
``matplotlib.font_manager.fontManager.addfont``): first by the names of common CJK families,
then by whether the font has a glyph for 图 (matplotlib's own "Last Resort" font, whose every
glyph is a placeholder box, does not count). Without one, labels that need it are not drawn as
boxes; :mod:`trilha.graph.export.drawing` shows a number instead and says so on the picture.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_CJK_FAMILIES = (
    "Noto Sans CJK",
    "Noto Sans SC",
    "Noto Sans TC",
    "Source Han Sans",
    "WenQuanYi",
    "Droid Sans Fallback",
    "Microsoft YaHei",
    "SimHei",
    "PingFang",
    "Hiragino Sans GB",
    "Heiti",
    "AR PL",
    "Arial Unicode",
)
_PROBE = ord("图")
#: Fonts that map every character to a placeholder box (matplotlib ships "Last Resort").
_PLACEHOLDERS = ("Last Resort",)


@lru_cache(maxsize=64)
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError):
        return frozenset()


def _known_fonts() -> list[Any]:
    from matplotlib import font_manager

    return list(font_manager.fontManager.ttflist)


def cjk_font() -> str | None:
    """The family name of a font with CJK glyphs, or None when matplotlib knows none."""
    fonts = [f for f in _known_fonts() if not f.name.startswith(_PLACEHOLDERS)]
    named = [f for f in fonts if any(f.name.startswith(n) for n in _CJK_FAMILIES)]
    for f in [*sorted(named, key=lambda f: f.name), *fonts]:
        if _PROBE in _charmap(f.fname):
            return str(f.name)
    return None


def default_font_path() -> str:
    """The file of matplotlib's default sans-serif font."""
    from matplotlib import font_manager

    return str(font_manager.findfont(font_manager.FontProperties(family=["sans-serif"])))


def drawable(text: str, fonts: tuple[str, ...]) -> bool:
    """True when every visible character of ``text`` has a glyph in one of the font files."""
    maps = [_charmap(path) for path in fonts]
    return all(c.isspace() or any(ord(c) in m for m in maps) for c in text)


def font_paths(cjk: str | None) -> tuple[str, ...]:
    """The files of the default font and of the CJK family ``cjk`` (when there is one)."""
    paths = [default_font_path()]
    if cjk is not None:
        from matplotlib import font_manager

        paths.append(str(font_manager.findfont(font_manager.FontProperties(family=[cjk]))))
    return tuple(paths)
