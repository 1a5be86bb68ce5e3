"""Validates JSON bodies against a JSON Schema (draft 2020-12), one per line.

Used by tests/properties/parsers.rs to check that the published OpenAPI schema and
the server's validator agree. Reads the schema from argv[1] and the bodies
(JSON lines) from argv[2]; prints per body a JSON line [valid, [errors...]].

The validator is `jsonschema_rs` (the Python binding of the Rust
`jsonschema` crate, pinned in .ci/run): it reads patterns as ECMA-262
regular expressions, as OpenAPI tools do, and checks formats.
"""

import json
import sys

import jsonschema_rs


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema_rs.validator_for(schema, validate_formats=True)
    out = []
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            body = json.loads(line)
            errors = [f"{e.message} at {list(e.instance_path)}" for e in validator.iter_errors(body)]
            out.append(json.dumps([not errors, errors[:3]]))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
