"""User text shown inside Markdown: every Markdown, LaTeX and HTML character made literal."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:=&\"'])")


def md(text: str) -> str:
    """Escape ``text`` for st.markdown / captions so it renders as the characters typed."""
    return _SPECIAL.sub(r"\\\1", text.replace("\n", " "))


def token(text: str) -> str:
    """A token in running Markdown text, quoted and escaped."""
    return f"“{md(text)}”"
