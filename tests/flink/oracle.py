#!/usr/bin/env python3
"""Differential oracle: runs clink's SQL .test cases (tests/sql/*.test) on Apache Flink
through PyFlink and compares Flink's output with each case's @expect.

Run it with the venv that tests/flink/setup creates:

  tests/flink/setup
  ~/.cache/clink/flink-venv/bin/python tests/flink/oracle.py tests/sql/group_by.test
  ~/.cache/clink/flink-venv/bin/python tests/flink/oracle.py --all --out /tmp/flink-oracle

One JVM per .test file (a child process of this script, so a JVM that hangs or dies
costs one file, not the run); a fresh TableEnvironment (and so a fresh catalog) per case
in that JVM. See docs/flink-oracle.md.
"""

import argparse
import glob
import json
import multiprocessing as mp
import os
import re
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SQL_DIR = os.path.join(ROOT, "tests", "sql")

HEADER_RE = re.compile(r"^\s*(?:#|--)\s*flink:\s*(.*?)\s*$")
BATCH_MODE_RE = re.compile(r"^SET\s+'execution\.runtime-mode'\s*=\s*'batch'\s*$", re.I)

# --------------------------------------------------------------------------------------
# .test parsing (mirrors tests/sql/sql_test_case.cpp)


class Case:
    def __init__(self, file, line, name, inputs, setup):
        self.file = file
        self.line = line
        self.name = name
        self.inputs = list(inputs)  # [(name, ext, text)]
        self.setup = setup
        self.sql = ""
        self.expect = "ordered"  # ordered | unordered | final | error
        self.expected = []
        self.header = None  # text after "flink:" on the line above @case
        self.header_line = None  # 1-based line number of that header, if any
        self.above_section = None  # the section the line above @case belongs to


def parse_test_file(path):
    cases = []
    file_inputs = []
    setup = ""
    section = "none"
    current = None
    cur_input = None  # [name, ext, text]
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip(" \r\t")
        if line.startswith("# flink:"):  # a case's header, never part of a section (as clink's parser)
            continue
        if line.startswith("@"):
            parts = line[1:].split(None, 1)
            word = parts[0] if parts else ""
            rest = parts[1].strip() if len(parts) > 1 else ""
            if word == "input":
                r = rest.split()
                cur_input = [r[0], r[1] if len(r) > 1 else "csv", ""]
                (current.inputs if current else file_inputs).append(cur_input)
                section = "input"
            elif word == "setup":
                section = "setup"
            elif word == "case":
                c = Case(os.path.basename(path)[:-5], n, rest, file_inputs, setup)
                c.above_section = section
                if n >= 2:
                    m = HEADER_RE.match(lines[n - 2])
                    if m:
                        c.header = m.group(1)
                        c.header_line = n - 1
                cases.append(c)
                current = c
                section = "sql"
            elif word == "expect":
                current.expect = {"unordered": "unordered", "final": "final"}.get(rest, "ordered")
                section = "expect"
            elif word == "error":
                current.expect = "error"
                section = "expect"
            elif word == "matrix":
                pass
            continue
        if section == "input":
            cur_input[2] += line + "\n"
        elif section == "setup":
            setup += line + "\n"
        elif section == "sql":
            current.sql += line + "\n"
        elif section == "expect":
            if line and not line.startswith("#"):
                current.expected.append(line)
    # The inputs were shared lists; freeze them as tuples. Blank lines ending an input
    # separate it from what follows (clink's readers skip them; Flink's CSV fails on one).
    for c in cases:
        c.inputs = [(n, ext, text.rstrip("\n") + "\n" if text.strip() else text) for n, ext, text in c.inputs]
    return cases


# --------------------------------------------------------------------------------------
# SQL script handling


def split_statements(script):
    """Splits on ';' outside quotes and comments; drops comment-only pieces."""
    out, cur, i, n = [], [], 0, len(script)
    meaningful = False
    while i < n:
        ch = script[i]
        if script.startswith("--", i):
            j = script.find("\n", i)
            j = n if j < 0 else j
            cur.append(script[i:j])
            i = j
        elif script.startswith("/*", i):
            j = script.find("*/", i + 2)
            j = n if j < 0 else j + 2
            cur.append(script[i:j])
            i = j
        elif ch in "'\"`":
            j = i + 1
            while j < n:
                if script[j] == ch:
                    if j + 1 < n and script[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            cur.append(script[i:j + 1])
            meaningful = True
            i = j + 1
        elif ch == ";":
            if meaningful:
                out.append("".join(cur).strip())
            cur, meaningful = [], False
            i += 1
        else:
            if not ch.isspace():
                meaningful = True
            cur.append(ch)
            i += 1
    if meaningful:
        out.append("".join(cur).strip())
    # EXECUTE STATEMENT SET BEGIN ...; ...; END: one statement for Flink.
    merged, buf = [], None
    for s in out:
        w = first_words(s, 3)
        if buf is not None:
            buf.append(s)
            if w[:1] == ["END"]:
                merged.append(";\n".join(buf[:-1]) + ";\nEND")
                buf = None
            continue
        if w[:3] == ["EXECUTE", "STATEMENT", "SET"] or w[:3] == ["STATEMENT", "SET", "BEGIN"]:
            buf = [s]
            continue
        merged.append(s)
    if buf is not None:
        merged.extend(buf)
    return merged


def first_words(stmt, k=2):
    s = re.sub(r"--[^\n]*", " ", stmt)
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return [w.upper() for w in re.findall(r"[A-Za-z_]+|\(", s)[:k]]


def is_query(stmt):
    return first_words(stmt, 1)[:1] in (["SELECT"], ["WITH"], ["VALUES"], ["TABLE"], ["("])


def strip_header_comments(script):
    """Drops the '# flink: ...' header lines (any section may hold one: the C++ runner skips them)."""
    return "\n".join(l for l in script.split("\n") if not HEADER_RE.match(l))


# --------------------------------------------------------------------------------------
# Comparison


def materialise(lines):
    """Applies a changelog; returns the sorted rows as +I[...] lines (a retraction of a row
    that is not there shows as 'missing: ...'); other lines (SHOW text) stay as they are."""
    table, texts = {}, []
    for l in lines:
        m = re.match(r"^([+-][IUD])(\[.*)$", l)
        if not m:
            texts.append(l)
            continue
        kind, body = m.groups()
        table[body] = table.get(body, 0) + (1 if kind in ("+I", "+U") else -1)
    out = list(texts)
    for body, k in table.items():
        out += ["+I" + body] * k if k > 0 else ["missing: " + body] * -k
    return sorted(out)


def is_insert_only(lines):
    return all(not re.match(r"^[+-][IUD]\[", l) or l.startswith("+I[") for l in lines)


def multiset_diff(a, b):
    """Lines in a not in b (multiset)."""
    rest = list(b)
    extra = []
    for l in a:
        if l in rest:
            rest.remove(l)
        else:
            extra.append(l)
    return extra


def short(s, n=90):
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def compare(case, flink):
    """flink: {'lines': [...], 'error': str|None, 'timeout': bool}. Returns (result, reason)."""
    if flink.get("skip"):
        return "skipped", flink["skip"]
    if case.expect == "error":
        # Flink failing in the file's setup never reached the case: no confirmation.
        if flink["error"] and flink.get("setup_failed"):
            return "flink-fails", "setup: " + short(flink["error"], 110)
        if flink["error"]:
            return "same", "both fail"
        return "differs", "Flink accepts it (clink: %s)" % short(" ".join(case.expected), 60)
    if flink["error"]:
        return "flink-fails", short(flink["error"], 120)
    got, want = flink["lines"], case.expected
    if any(l.startswith("+--") for l in want) and table_rows(want) == table_rows(got):
        return "same", "table rows"
    if case.expect == "final":
        g, w = materialise(got), sorted(want)
        if g == w:
            return "same", "final table"
        return "differs", diff_reason(g, w, "final table")
    if is_insert_only(got) and is_insert_only(want):
        if sorted(got) == sorted(want):
            return "same", "multiset"
        return "differs", diff_reason(got, want, "rows")
    if got == want:
        return "same", "changelog"
    ub = lambda ls, k: sum(1 for l in ls if l.startswith(k))
    if ub(got, "-U[") < ub(got, "+U[") and ub(want, "-U[") == ub(want, "+U["):
        # Flink's planner dropped UPDATE_BEFORE (an upsert changelog keyed by the result's
        # unique key): it cannot be applied without that key
        if [l for l in want if not l.startswith("-U[")] == got:
            return "differs", "Flink's changelog omits -U (upsert by the unique key); the rest is the same"
        return "differs", "Flink's changelog omits -U (upsert by the unique key) and differs otherwise"
    if materialise(got) == materialise(want):
        return "differs", "changelog only (the final table is the same)"
    return "differs", diff_reason(materialise(got), materialise(want), "final table")


def table_rows(lines):
    """The data rows of SHOW / DESCRIBE output, as cell lists: clink's SQL-client table
    (+---+ boxes, a header row) or Flink's rows joined with ' | ' (Python's None / True /
    False for NULL and booleans). Anything else (a changelog line) is kept as it is."""
    rows, in_table, header_next = [], False, False
    for l in lines:
        if l.startswith("+--"):
            if not in_table:  # a table's first border: its header row follows
                in_table, header_next = True, True
            continue
        if not l.strip() or re.match(r"^\d+ rows? in set$|^Empty set$", l):
            in_table = False  # a case may print several tables, each with a header
            continue
        if l.startswith("|"):
            if header_next:
                header_next = False
                continue
            cells = [c.strip() for c in l.strip()[1:-1].split(" | ")]  # a cell may hold '||'
        else:
            cells = [c.strip() for c in l.split(" | ")]
        rows.append([{"None": "", "True": "TRUE", "False": "FALSE"}.get(c, c) for c in cells])
    return rows


def diff_reason(got, want, what):
    extra = multiset_diff(got, want)
    missing = multiset_diff(want, got)
    parts = ["%s: Flink %d, clink %d" % (what, len(got), len(want))]
    if extra:
        parts.append("Flink has %s" % short(extra[0], 70))
    if missing:
        parts.append("clink has %s" % short(missing[0], 70))
    return "; ".join(parts)


# --------------------------------------------------------------------------------------
# The Flink side: runs in a child process (one JVM per .test file)


def skip_reason(case):
    text = case.setup + case.sql
    for w in ("'kafka'", "'nexmark'"):
        if w in text:
            return "the %s connector is not in PyFlink's jars" % w.strip("'")
    for s in split_statements(case.sql):
        if first_words(s, 1) == ["EXPLAIN"]:
            return "EXPLAIN: the plan text is clink's own"
    return None


def flink_worker(conn, timeout):
    """Child process: receives cases as dicts, answers with Flink's output."""
    from pyflink.java_gateway import get_gateway

    gw = get_gateway()
    jvm = gw.jvm
    EnvironmentSettings = jvm.org.apache.flink.table.api.EnvironmentSettings
    TableEnvironment = jvm.org.apache.flink.table.api.TableEnvironment

    def new_tenv(batch=False):
        conf = jvm.org.apache.flink.configuration.Configuration()
        conf.setString("parallelism.default", "1")
        conf.setString("table.local-time-zone", "UTC")
        conf.setString("rest.bind-port", "0")
        builder = EnvironmentSettings.newInstance()
        builder = builder.inBatchMode() if batch else builder.inStreamingMode()
        settings = builder.withConfiguration(conf).build()
        return TableEnvironment.create(settings)

    def java_error(e):
        je = getattr(e, "java_exception", None)
        if je is None:
            return str(e).strip().split("\n")[0]
        msgs = []
        t = je
        while t is not None:
            m = t.getMessage()
            msgs.append("%s: %s" % (t.getClass().getSimpleName(), m))
            t = t.getCause()
        # the outermost message names the statement, the innermost the cause
        return msgs[0] if len(msgs) == 1 else msgs[0] + " <- " + msgs[-1]

    while True:
        msg = conn.recv()
        if msg is None:
            break
        case_dir = msg["dir"]
        lines, text_lines, error = [], [], None
        jobs = []
        in_setup = False  # whether the statement running is the setup's
        try:
            stmts = [(s, True) for s in split_statements(msg["setup"])] + [(s, False) for s in split_statements(msg["sql"])]
            # Flink fixes the runtime mode when the environment is created (its SQL client
            # makes a new one on SET): a case that sets batch mode runs in a batch environment.
            batch = any(BATCH_MODE_RE.match(s) for s, _ in stmts)
            tenv = new_tenv(batch)
            deadline = time.time() + timeout
            for stmt, _in_setup in stmts:
                in_setup = _in_setup
                # SET / RESET belong to Flink's SQL client, not to executeSql: the table config
                m = re.match(r"^SET\s+'([^']*)'\s*=\s*'([^']*)'\s*$", stmt, re.I | re.S)
                if m and m.group(1) == "execution.runtime-mode":
                    continue  # the environment was created in that mode
                if m:
                    tenv.getConfig().getConfiguration().setString(m.group(1), m.group(2))
                    continue
                if first_words(stmt, 1) in (["SET"], ["RESET"]):
                    raise RuntimeError("harness: no SET/RESET form like this in executeSql: " + short(stmt, 60))
                res = tenv.executeSql(stmt)
                jc = res.getJobClient()
                if jc.isPresent():
                    jobs.append(jc.get())
                kind = str(res.getResultKind())
                if is_query(stmt):
                    rows, box = [], {}

                    def pull(res=res, rows=rows, box=box):
                        try:
                            it = res.collect()
                            while it.hasNext():
                                rows.append(it.next().toString())
                            it.close()
                        except Exception as e:  # noqa: BLE001
                            box["error"] = e

                    t = threading.Thread(target=pull, daemon=True)
                    t.start()
                    t.join(max(1.0, deadline - time.time()))
                    if t.is_alive():
                        raise TimeoutError("timeout after %d s" % timeout)
                    if "error" in box:
                        raise box["error"]
                    lines.extend(rows)
                elif jc.isPresent():
                    box = {}

                    def wait(res=res, box=box):
                        try:
                            res.await_()
                        except Exception as e:  # noqa: BLE001
                            box["error"] = e

                    # py4j exposes Java's await() as await_? fall back to the job's result
                    def wait_job(jc=jc.get(), box=box):
                        try:
                            jc.getJobExecutionResult().get()
                        except Exception as e:  # noqa: BLE001
                            box["error"] = e

                    t = threading.Thread(target=wait_job, daemon=True)
                    t.start()
                    t.join(max(1.0, deadline - time.time()))
                    if t.is_alive():
                        raise TimeoutError("timeout after %d s" % timeout)
                    if "error" in box:
                        raise box["error"]
                elif kind == "SUCCESS_WITH_CONTENT" and not _in_setup:
                    w = first_words(stmt, 1)
                    it = res.collect()
                    while it.hasNext():
                        r = it.next()
                        if r.getArity() == 1 and "\n" in str(r.getField(0)):
                            # SHOW CREATE: one row of text, which clink's client prints as its lines
                            text_lines.extend(str(r.getField(0)).rstrip("\n").split("\n"))
                        else:
                            text_lines.append(" | ".join(str(r.getField(i)) for i in range(r.getArity())))
                    it.close()
        except TimeoutError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001
            error = java_error(e)
        for j in jobs:
            try:
                st = str(j.getJobStatus().get())
                if st not in ("FINISHED", "FAILED", "CANCELED"):
                    j.cancel().get()
            except Exception:  # noqa: BLE001
                pass
        out = [l.replace(case_dir, "${dir}") for l in lines + text_lines]
        conn.send({"lines": out, "error": error.replace(case_dir, "${dir}") if error else None,
                   "setup_failed": bool(error) and in_setup})


class FlinkProcess:
    def __init__(self, timeout):
        self.timeout = timeout
        self.start()

    def start(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=flink_worker, args=(child, self.timeout), daemon=True)
        self.proc.start()

    def run(self, msg):
        self.conn.send(msg)
        # the JVM's start costs the first case some seconds; the worker times out jobs itself
        if self.conn.poll(self.timeout + 120):
            return self.conn.recv()
        self.kill()
        self.start()
        return {"lines": [], "error": "timeout (the Flink JVM did not answer; restarted)"}

    def kill(self):
        try:
            self.proc.kill()
            self.proc.join(10)
        except Exception:  # noqa: BLE001
            pass

    def close(self):
        try:
            self.conn.send(None)
            self.proc.join(30)
        except Exception:  # noqa: BLE001
            pass
        if self.proc.is_alive():
            self.kill()


def run_case_on_flink(flink, case, tmp_root):
    reason = skip_reason(case)
    if reason:
        return {"skip": reason}
    d = os.path.join(tmp_root, "%s.%d" % (case.file, case.line))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, ext, text in case.inputs:
        p = os.path.join(d, name + "." + ext)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)

    def subst(sql):
        for name, ext, _ in case.inputs:
            sql = sql.replace("${input:%s}" % name, os.path.join(d, name + "." + ext))
        return sql.replace("${dir}", d)

    res = flink.run({"dir": d, "setup": subst(strip_header_comments(case.setup)), "sql": subst(case.sql)})
    shutil.rmtree(d, ignore_errors=True)
    return res


# --------------------------------------------------------------------------------------
# Headers


def header_kind(h):
    if h is None:
        return None
    if h.startswith("same"):
        return "same"
    if h.startswith("differs"):
        return "differs"
    if h.startswith("n/a"):
        return "n/a"
    return "?"


def found_kind(result):
    return {"same": "same", "differs": "differs", "flink-fails": "n/a", "skipped": "n/a"}[result]


def header_for(result, reason):
    reason = re.sub(r"\b(?:[a-z_]+\.){2,}([A-Z]\w+)", r"\1", reason)  # org.apache...X -> X
    reason = re.sub(r"SQL validation failed\. |SQL parse failed\. ", "", reason).split(" <- ")[0]
    if result == "same":
        return "flink: same"
    if result == "differs":
        return "flink: differs: " + reason
    if result == "flink-fails":
        return "flink: n/a (Flink fails: %s)" % short(reason, 100)
    return "flink: n/a (%s)" % reason


def write_headers(path, cases, results):
    """Puts (or replaces) the header line above each case's @case that ran."""
    lines = open(path, encoding="utf-8").read().split("\n")
    # from the bottom so line numbers stay valid
    for idx, c in sorted(enumerate(cases), key=lambda ic: -ic[1].line):
        r = results.get(idx)
        if r is None:
            continue
        if c.header_line is not None and r[0] != "same" and header_kind(c.header) == found_kind(r[0]) and c.header != "same":
            continue  # keep a hand-written reason of the same kind
        if c.header_line is not None and header_kind(c.header) == "n/a" and r == ("same", "both fail"):
            continue  # keep a recorded n/a: both failing is no confirmation
        text = "# " + header_for(*r)  # the C++ runner skips '# flink:' lines in any section
        if c.header_line is not None:
            lines[c.header_line - 1] = text
        else:
            lines.insert(c.line - 1, text)
    open(path, "w", encoding="utf-8").write("\n".join(lines))


# --------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help=".test files or their names (group_by)")
    ap.add_argument("--all", action="store_true", help="every tests/sql/*.test")
    ap.add_argument("--case", type=int, action="append", help="only the case(s) at these lines")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per case (default 60)")
    ap.add_argument("--out", help="directory for a report: <file>.<line>.flink (Flink's output) and results.json")
    ap.add_argument("--write-headers", action="store_true", help="record '# flink: ...' above each case that ran")
    ap.add_argument("--headers-from", help="write the headers from a results.json of an earlier run (runs nothing)")
    ap.add_argument("--budget", type=int, default=0, help="stop starting new files after this many seconds")
    args = ap.parse_args()

    if args.headers_from:
        recs = json.load(open(args.headers_from))
        by_file = {}
        for r in recs:
            by_file.setdefault(r["file"], {})[r["index"]] = (r["result"], r["reason"])
        for f, results in sorted(by_file.items()):
            path = os.path.join(SQL_DIR, f + ".test")
            write_headers(path, parse_test_file(path), results)
            print("headers: %s (%d cases)" % (path, len(results)))
        return 0

    files = []
    if args.all:
        files = sorted(glob.glob(os.path.join(SQL_DIR, "*.test")))
    for f in args.files:
        if not f.endswith(".test"):
            f = os.path.join(SQL_DIR, f + ".test")
        files.append(f)
    if not files:
        ap.error("name .test files or --all")
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    totals = {}
    mismatches = 0
    all_results = []
    start = time.time()
    tmp_root = tempfile.mkdtemp(prefix="clink-flink-oracle-")
    print("%-28s %5s  %-48s %s" % ("file", "line", "case", "result"))
    try:
        for path in files:
            if args.budget and time.time() - start > args.budget:
                print("(budget spent: %s and later files not run)" % os.path.basename(path))
                break
            cases = parse_test_file(path)
            if args.case:
                cases = [c if c.line in args.case else None for c in cases]
            flink = FlinkProcess(args.timeout)
            results = {}
            try:
                for idx, c in enumerate(cases):
                    if c is None:
                        continue
                    t0 = time.time()
                    res = run_case_on_flink(flink, c, tmp_root)
                    result, reason = compare(c, res)
                    results[idx] = (result, reason)
                    totals[result] = totals.get(result, 0) + 1
                    shown = result if result == "same" else "%s: %s" % (result, reason)
                    hk = header_kind(c.header)
                    # Both failing does not say they fail for the same reason: a recorded
                    # n/a (Flink cannot run the statement at all) is consistent with it.
                    vacuous = hk == "n/a" and result == "same" and reason == "both fail"
                    if hk is not None and hk != found_kind(result) and not vacuous:
                        mismatches += 1
                        shown += "  [HEADER MISMATCH: recorded '%s']" % c.header
                    print("%-28s %5d  %-48s %s  (%.1fs)" % (c.file, c.line, short(c.name, 48), shown, time.time() - t0), flush=True)
                    rec = {"file": c.file, "index": idx, "line": c.line, "name": c.name, "result": result, "reason": reason,
                           "header": c.header, "expect": c.expect}
                    all_results.append(rec)
                    if args.out:
                        with open(os.path.join(args.out, "%s.%d.flink" % (c.file, c.line)), "w") as f:
                            if res.get("error"):
                                f.write("@error\n" + res["error"] + "\n")
                            f.write("\n".join(res.get("lines", [])) + "\n")
                            f.write("# ---- clink's @expect %s\n" % c.expect)
                            f.write("\n".join(c.expected) + "\n")
            finally:
                flink.close()
                if args.out:  # after each file, so a stopped run leaves its results
                    with open(os.path.join(args.out, "results.json"), "w") as f:
                        json.dump(all_results, f, indent=1)
            if args.write_headers:
                write_headers(path, parse_test_file(path), results)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
        if args.out:
            with open(os.path.join(args.out, "results.json"), "w") as f:
                json.dump(all_results, f, indent=1)
    n = sum(totals.values())
    print("\ntotal %d: %s; header mismatches: %d  (%.0fs)" % (
        n, ", ".join("%s %d" % (k, totals[k]) for k in ("same", "differs", "flink-fails", "skipped") if k in totals),
        mismatches, time.time() - start))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
