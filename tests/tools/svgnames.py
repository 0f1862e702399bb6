#!/usr/bin/env python3
"""svgnames.py - parses a buildtrace flame graph with an XML parser (which fails on invalid UTF-8 or
characters XML forbids) and checks each frame's label against its name: the whole name, nothing, or
the name's first characters followed by "..". Prints each frame's name, non-ASCII characters as
\\uXXXX escapes, one a line, then "cut N" (labels shortened); exits 1 on a label that is none of those.

Usage: svgnames.py FILE.svg"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    root = ET.parse(sys.argv[1]).getroot()
    cut = 0
    for g in root.iter(NS + "g"):
        name = g.get("data-name")
        label = g.find(NS + "text").text or ""
        title = g.find(NS + "title").text
        if not title.startswith(name + " ("):
            print("title %r does not start with the name %r" % (title, name))
            return 1
        if label.endswith("..") and label != name:
            if not name.startswith(label[:-2]) or len(label) >= len(name) + 2:
                print("label %r is not a prefix of %r" % (label, name))
                return 1
            cut += 1
        elif label not in ("", name):
            print("label %r is not the name %r" % (label, name))
            return 1
        print(name.encode("ascii", "backslashreplace").decode("ascii"))
    print("cut %d" % cut)
    return 0


if __name__ == "__main__":
    sys.exit(main())
