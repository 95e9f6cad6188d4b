#!/usr/bin/env python3
"""Every relative markdown link of README.md and docs/*.md resolves: the file (or folder) exists, and
a #anchor names a heading of the target page as GitHub renders it (lowercase, punctuation dropped,
spaces to hyphens, -1, -2, ... for repeats). Links inside code blocks and inline code are not links.

usage: check_links.py CHECKOUT        (or --self-test)
exit 0: all resolve; 1: one line per broken link, naming the page, its line and the link.
"""
import re
import sys
from pathlib import Path

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, re.sub(r"`[^`]*`", lambda m: "`" + " " * (len(m.group(0)) - 2) + "`", line)


def slug(heading):
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # GitHub keeps letters, digits, _, - and spaces
    return text.replace(" ", "-")


def anchors(text):
    found, seen = set(), {}
    fence = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links(checkout):
    pages = [checkout / "README.md"] + sorted((checkout / "docs").glob("*.md"))
    problems = []
    for page in pages:
        text = page.read_text()
        for number, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                where = f"{page.relative_to(checkout)}:{number}: {target}"
                resolved = (page.parent / path).resolve() if path else page
                if not resolved.exists():
                    problems.append(f"{where}: no such file")
                    continue
                if anchor:
                    if resolved.suffix != ".md" or resolved.is_dir():
                        problems.append(f"{where}: an anchor into a file that is not markdown")
                    elif anchor not in anchors(resolved.read_text()):
                        problems.append(f"{where}: no heading #{anchor} in {resolved.name}")
    return problems, len(pages)


def self_test():
    assert slug("Exit codes of `ccbench compare`") == "exit-codes-of-ccbench-compare"
    assert slug("Leaf-spine: hosts that share an uplink") == "leaf-spine-hosts-that-share-an-uplink"
    assert slug("ccbench compare: ❌ **regression** (exit 1)") == "ccbench-compare--regression-exit-1"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n## B?\n") == {"a", "a-1", "b"}
    lines = list(prose_lines("x [a](b.md) `[c](d.md)`\n```\n[e](f.md)\n```\n"))
    assert [LINK.findall(line) for _, line in lines] == [["b.md"]], lines
    print("check_links: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems, pages = broken_links(Path(sys.argv[1]).resolve())
    for p in problems:
        print(p)
    print(f"check_links: {pages} pages, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
