#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# Validate JSON files against a JSON Schema (Debian's python3-jsonschema).
#   check_schema.py SCHEMA FILE...   prints one line per invalid file, exits 1 if any
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    try:
        doc = json.load(open(path))
    except ValueError as e:
        print(f"{path}: not JSON: {e}")
        bad += 1
        continue
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.path))[:3]:
        where = "/".join(str(p) for p in err.path)
        print(f"{path}: at /{where}: {err.message[:200]}")
        bad += 1
sys.exit(1 if bad else 0)
