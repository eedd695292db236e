"""Flink 2.3's changelog mode at the sink of every examples/nexmark query.

PyFlink has no nexmark connector, so the generator table becomes a `datagen` table with the
same schema (the computed dateTime and its watermark unchanged); the views, sink and INSERT
are the example's own. Prints, per query, the changelog mode of the sink's input as
`EXPLAIN CHANGELOG_MODE` shows it: into the example's blackhole sink with Flink's defaults,
the same with Nexmark's configuration (nexmark-flink's flink-conf.yaml: mini-batch 2 s /
50000, split distinct aggregation), and into a print sink with the defaults (Flink's
blackhole asks its input to drop UPDATE_BEFORE, the print sink takes every row kind).

  ~/.cache/clink/flink-venv/bin/python tests/flink/nexmark_changelog.py [q5 q7 ...]
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "nexmark")

NEXMARK_CONF = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "2s",
    "table.exec.mini-batch.size": "50000",
    "table.optimizer.distinct-agg.split.enabled": "true",
}


def statements(text):
    text = "\n".join(l for l in text.splitlines() if not l.strip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def flink_quoted(stmt):
    # Flink 2.3's parser reserves DATETIME: Nexmark's bare `dateTime` needs backticks there.
    return re.sub(r"(?<!`)\bdateTime\b(?!`)", "`dateTime`", stmt)


def as_datagen(stmt, sink):
    if "'connector' = 'blackhole'" in stmt:
        return stmt.replace("'connector' = 'blackhole'", "'connector' = '%s'" % sink)
    if "'connector' = 'nexmark'" not in stmt:
        return stmt
    head = stmt[: stmt.index(") WITH (")]
    return head + ") WITH ('connector' = 'datagen')"


def sink_mode(plan):
    # The physical plan with changelog modes: the sink's line is the first (its own mode is
    # NONE: it emits nothing); the line below it is the input, whose mode the sink receives.
    section = plan.split("== Optimized Physical Plan ==")[1].split("== Optimized Execution Plan ==")[0]
    lines = [l for l in section.splitlines() if l.strip()]
    m = re.search(r"changelogMode=\[([^\]]*)\]", lines[1])
    return m.group(1) if m else "?"


def main():
    from pyflink.table import EnvironmentSettings, TableEnvironment
    from pyflink.table.explain_detail import ExplainDetail

    names = sys.argv[1:] or sorted(
        (os.path.basename(p)[:-4] for p in glob.glob(os.path.join(EXAMPLES, "q*.sql"))),
        key=lambda n: (len(n), n))
    for name in names:
        stmts = statements(open(os.path.join(EXAMPLES, name + ".sql")).read())
        modes = []
        for conf, sink in (({}, "blackhole"), (NEXMARK_CONF, "blackhole"), ({}, "print")):
            env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
            c = env.get_config()
            c.set("parallelism.default", "1")
            c.set("table.local-time-zone", "UTC")
            for k, v in conf.items():
                c.set(k, v)
            insert = None
            try:
                for s in stmts:
                    if s.upper().startswith("INSERT"):
                        insert = flink_quoted(s)
                    else:
                        env.execute_sql(flink_quoted(as_datagen(s, sink)))
                plan = env.explain_sql(insert, ExplainDetail.CHANGELOG_MODE)
                modes.append(sink_mode(plan))
                if os.environ.get("SHOW_PLAN"):
                    print(plan)
            except Exception as e:  # noqa: BLE001 - report and go on with the next query
                je = getattr(e, "java_exception", None)
                msg = je.getMessage() if je is not None else str(e)
                modes.append("error: " + " ".join(str(msg).split())[:200])
        print("\t".join([name] + modes), flush=True)


if __name__ == "__main__":
    main()
