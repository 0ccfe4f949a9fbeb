#!/usr/bin/env python3
"""rooms_test.py SOURCE_DIR

Strata's code lives in rooms (src/<room>/ with its public headers in
include/strata/<room>/), built in the order CMakeLists.txt adds them with
strata_add_subdirs. A room may use the rooms added before it, never one added
after: inference must not reach into the training loop, nor a parallel
dimension into the models built on it. Reads every #include "..." of src/ and
include/strata/ and names each one that runs up, with its file; exits 1 if
there is any.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
calls = re.findall(r"^\s*strata_add_subdirs\(([^)]*)\)",
                   (root / "CMakeLists.txt").read_text(), re.M)
order = [room for call in calls for room in call.split()]
rank = {room: i for i, room in enumerate(order)}
if len(order) < 2:
    sys.exit("rooms_test: found no strata_add_subdirs(...) order in CMakeLists.txt")


def room_of_include(path):
    """src/<room>/... is included as "<room>/...", public headers as
    "strata/<room>/..." or the umbrella "strata/<room>.h"."""
    parts = path.split("/")
    if parts[0] == "strata":
        parts = parts[1:]
        if len(parts) == 1:
            return parts[0][:-2] if parts[0].endswith(".h") else None
    return parts[0] if len(parts) > 1 else None


def rooms_of_tree():
    for base in (root / "src", root / "include" / "strata"):
        for f in sorted(base.rglob("*")):
            if f.suffix not in (".h", ".cpp", ".in"):
                continue
            rel = f.relative_to(base).parts
            room = rel[0] if len(rel) > 1 else f.stem
            if room in rank:
                yield f, room


upward = []
for f, room in rooms_of_tree():
    for included in re.findall(r'^\s*#include "([^"]+)"', f.read_text(), re.M):
        target = room_of_include(included)
        if target in rank and rank[target] > rank[room]:
            upward.append(f"{f.relative_to(root)} (room {room}) includes {included} "
                          f"(room {target}, added after it)")
for line in upward:
    print(line, file=sys.stderr)
if upward:
    sys.exit(f"rooms_test: {len(upward)} include(s) reach up; rooms in order: {' '.join(order)}")
print(f"rooms_test: {len(rank)} rooms, none reaches up: {' '.join(order)}")
