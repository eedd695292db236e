#!/usr/bin/env python3
"""Scrapes a Prometheus endpoint and parses it with prometheus_client's text-format
parser (the real one, not a test's regexes); prints the samples as JSON lines:
{"family": ..., "type": ..., "help": ..., "name": ..., "labels": {...}, "value": ...}.
Exit 1 (the parser's message on stderr) when the text does not parse.

Usage: prometheus_scrape.py http://127.0.0.1:PORT/metrics
Run with the test venv's Python (tests/flink/setup installs prometheus_client).
"""
import json
import math
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main():
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=30) as r:
        content_type = r.headers.get("Content-Type", "")
        text = r.read().decode("utf-8")
    if not content_type.startswith("text/plain"):
        print(f"{url}: Content-Type {content_type!r}, expected text/plain; version=0.0.4", file=sys.stderr)
        return 1
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                value = s.value
                if math.isnan(value):
                    value = "NaN"
                print(json.dumps({"family": family.name, "type": family.type, "help": family.documentation,
                                  "name": s.name, "labels": s.labels, "value": value}))
    except Exception as e:  # the parser's complaint is the test's failure message
        print(f"{url}: does not parse: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
