#!/usr/bin/env python3
"""Every relative link of the repository's Markdown documents names a file
or folder inside the repository (the documents stand alone: no link leaves
it), and every #anchor names a heading of its target.

  check-doc-links.py REPOSITORY_ROOT
"""
import pathlib
import re
import sys


def anchors(path):
    """GitHub's anchors of the headings of a Markdown file."""
    result = set()
    for line in path.read_text().splitlines():
        m = re.match(r"#+ (.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            result.add(slug.replace(" ", "-"))
    return result


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    documents = [root / "README.md", root / "bench" / "README.md"]
    documents += sorted((root / "docs").glob("*.md"))
    documents += sorted((root / "fuzz").rglob("*.md"))
    bad = []
    links = 0
    for doc in documents:
        text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            links += 1
            path, _, anchor = target.partition("#")
            resolved = (doc.parent / path).resolve() if path else doc
            where = "%s: (%s)" % (doc.relative_to(root), target)
            if root not in resolved.parents and resolved != root:
                bad.append(where + " leaves the repository")
            elif not resolved.exists():
                bad.append(where + " names nothing")
            elif anchor and resolved.suffix == ".md" and \
                    anchor not in anchors(resolved):
                bad.append(where + " names no heading of " +
                           str(resolved.relative_to(root)))
    for b in bad:
        print(b, file=sys.stderr)
    print("doc links: %d checked in %d documents, %d bad" %
          (links, len(documents), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
