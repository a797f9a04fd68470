#!/usr/bin/env python3
"""tests/check_api_docs.py - every exported function (a PX_API declaration) in include/parex/*.h
has a doc comment: a /** ... */ block ending right above it, or, for a run of declarations
with no blank line between them, above the first of the run (a documented group such as the
builtin reducers). Prints each undocumented declaration and exits 1 if there is any."""
import glob
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
missing = []
for path in sorted(glob.glob(os.path.join(root, "include", "parex", "*.h"))):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("PX_API") or "(" not in line:
            continue
        j = i - 1
        # Skip back over the continuation lines of earlier declarations in the same run.
        while j >= 0 and lines[j].strip() and not lines[j].strip().endswith("*/"):
            j -= 1
        if j < 0 or not lines[j].strip().endswith("*/"):
            missing.append(f"{os.path.relpath(path, root)}:{i + 1}: {line.strip()[:80]}")
for m in missing:
    print("undocumented:", m)
print(f"check_api_docs: {len(missing)} undocumented PX_API declarations")
sys.exit(1 if missing else 0)
