#!/usr/bin/env python3
"""Writes a fuzz target's seed inputs into a directory: fuzz/corpus/<target>/ as they are,
and for sql_frontend every case of tests/sql/*.test (its file's @setup, then the case's
SQL) and examples/sql/*.sql. Usage: seeds.py TARGET OUT_DIR"""
import hashlib
import pathlib
import re
import shutil
import sys

root = pathlib.Path(__file__).resolve().parent.parent
target, out = sys.argv[1], pathlib.Path(sys.argv[2])
shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)


def write(data: bytes):
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


for f in sorted((root / "fuzz" / "corpus" / target).glob("*")):
    write(f.read_bytes())

if target == "sql_frontend":
    def paths(sql):  # the cases' input files do not exist here: nothing reads them
        return re.sub(r"\$\{(input:)?(\w+)\}", r"/nonexistent/\2", sql)

    for test in sorted((root / "tests" / "sql").glob("*.test")):
        setup, cases, section, lines = [], [], None, []

        def close():
            if section == "setup":
                setup.extend(lines)
            elif section == "case":
                cases.append("\n".join(lines))

        for line in test.read_text().splitlines():
            if line.startswith("@"):
                close()
                section, lines = line[1:].split(" ")[0], []
            elif section in ("setup", "case") and not line.startswith("#"):
                lines.append(line)
        close()
        for case in cases:
            seed = paths("\n".join(setup) + "\n" + case)
            if "catalog" not in seed.lower() and "materialized" not in seed.lower():  # the target skips those
                write(seed.encode())
    for example in sorted((root / "examples" / "sql").glob("*.sql")):
        write(example.read_bytes())
print(f"{len(list(out.iterdir()))} seeds for {target}")
