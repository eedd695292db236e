#!/usr/bin/env python3
"""Drives clink's web UI in a real headless Chromium (Debian's chromium and
chromium-driver, through Selenium) and checks what a person would see: the job in the
list, its graph's vertices, a records counter increasing, a checkpoint in the history, a
savepoint triggered from the page completing, the SQL text and plan, the workers, the
submit-SQL page, and cancel. Saves a screenshot of each page into --screenshots.

Run by tests/cluster/test_webui.cpp (test_cluster_webui); exits non-zero naming the
first check that failed (a missing browser is a failure, not a skip).

  webui_check.py --url http://127.0.0.1:PORT --job JOBID --sql "INSERT ..." \
      --vertices datagen_source,group_aggregate --screenshots DIR [--embedded]
"""
import argparse
import os
import re
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("CLINK_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CLINK_CHROMEDRIVER", "/usr/bin/chromedriver")


class CheckFailed(Exception):
    pass


class Browser:
    def __init__(self, base_url, screenshots):
        for path in (CHROMIUM, CHROMEDRIVER):
            if not os.path.exists(path):
                raise CheckFailed(f"{path} is missing: install Debian's chromium and chromium-driver "
                                  "(scripts/setup --services)")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    "--window-size=1500,1000"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.base = base_url.rstrip("/")
        self.screenshots = screenshots
        self.shots = 0

    def quit(self):
        self.driver.quit()

    def open(self, fragment):
        self.driver.get(f"{self.base}/{fragment}")

    def wait(self, what, condition, seconds=30):
        """Waits until condition(driver) is truthy; its value. Fails naming `what`."""
        try:
            # The pages redraw every two seconds: an element found before a redraw is stale
            # after it; the next poll finds the new one.
            return WebDriverWait(self.driver, seconds, poll_frequency=0.2,
                                 ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition(d))
        except TimeoutException:
            raise CheckFailed(f"{what}: not seen within {seconds} s (page {self.driver.current_url})")

    # The page re-renders on every refresh (2 s): elements found just before one go stale,
    # so a read is retried on the new ones.
    def _read(self, read):
        for _ in range(20):
            try:
                return read()
            except StaleElementReferenceException:
                time.sleep(0.05)
        return read()

    def text(self, css):
        def read():
            found = self.driver.find_elements(By.CSS_SELECTOR, css)
            return found[0].text if found else None
        return self._read(read)

    def texts(self, css):
        return self._read(lambda: [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)])

    def click(self, css):
        # Found and clicked in one step, retried while a redraw makes the element stale.
        def found_and_clicked(d):
            found = d.find_elements(By.CSS_SELECTOR, css)
            if not found:
                return False
            found[0].click()
            return True
        self.wait(f"'{css}' to click", found_and_clicked)

    def screenshot(self, name):
        self.shots += 1
        path = os.path.join(self.screenshots, f"{self.shots:02d}-{name}.png")
        self.driver.save_screenshot(path)
        print(f"screenshot: {path}", flush=True)

    def js_errors(self):
        """The page's JavaScript errors and failed requests so far."""
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


def ok(message):
    print(f"ok: {message}", flush=True)


def count(text):
    """'1,234' -> 1234."""
    return int(text.replace(",", ""))


def records_out(b, vertex_prefix):
    """The 'out N' the graph shows for the vertex whose name starts with vertex_prefix
    (its box's text read in one script call: the graph is redrawn every two seconds)."""
    text = b.driver.execute_script(
        "for (const g of document.querySelectorAll('svg.job-graph g.vertex'))"
        "  if (g.dataset.vertexName.startsWith(arguments[0]))"
        "    return [...g.querySelectorAll('text')].map((t) => t.textContent).join(' ');"
        "return null;", vertex_prefix)
    m = re.search(r"out ([\d,]+)", text or "")
    return count(m.group(1)) if m else None


def check_job_list(b, job):
    b.open("#/")
    b.wait("the job in the running jobs", lambda d: d.find_elements(By.CSS_SELECTOR, f"#running-jobs tr[data-job-id='{job}']"))
    state = b.text(f"tr[data-job-id='{job}'] .job-state")
    if state != "RUNNING":
        raise CheckFailed(f"job list: the job's state shows '{state}', expected RUNNING")
    b.wait("the cluster's cards", lambda d: b.text("#card-workers") not in (None, ""))
    ok(f"job list shows {b.text(f'tr[data-job-id={chr(39)}{job}{chr(39)}] .job-name')} RUNNING; "
       f"workers {b.text('#card-workers')}, slots {b.text('#card-slots')}")
    b.screenshot("jobs")


def check_graph(b, job, vertices):
    b.click(f"tr[data-job-id='{job}'] a.job-name")
    b.wait("the job page", lambda d: b.text("#job-id") == job)
    names = b.wait("the graph's vertices", lambda d: [g.get_attribute("data-vertex-name") for g in
                                                      d.find_elements(By.CSS_SELECTOR, "svg.job-graph g.vertex")])
    for prefix in vertices:
        if not any(n.startswith(prefix) for n in names):
            raise CheckFailed(f"graph: no vertex named {prefix}...; it shows {names}")
    edges = b.driver.find_elements(By.CSS_SELECTOR, "svg.job-graph g.edge")
    if len(edges) < len(vertices) - 1:
        raise CheckFailed(f"graph: {len(edges)} edges for {len(vertices)} vertices")
    ok(f"graph shows vertices {names} and {len(edges)} edge(s)")
    # A counter increasing: the source's records out, two looks three seconds apart.
    first = b.wait("the source's records out", lambda d: records_out(b, vertices[0]))
    time.sleep(3)
    second = b.wait("the source's records out growing", lambda d: (records_out(b, vertices[0]) or 0) > first and records_out(b, vertices[0]))
    ok(f"records out of {vertices[0]} went from {first:,} to {second:,}")
    b.screenshot("job-graph")


def check_subtasks(b, vertices, parallelism, worker):
    b.click(f"svg.job-graph g.vertex[data-vertex-name^='{vertices[-1]}']")
    b.wait("the vertex's subtasks", lambda d: len(d.find_elements(By.CSS_SELECTOR, "table.subtasks tr.subtask-row")) == parallelism)
    title = b.text("#subtasks-title")
    if vertices[-1] not in title:
        raise CheckFailed(f"subtasks: the panel is titled '{title}'")
    # Busy / backpressured / idle are ratios (the backpressure endpoint's, from the
    # tasks' ...TimeMsPerSecond), the last column the worker each subtask runs on.
    def rows_read(d):
        cells = b.texts("table.subtasks tr.subtask-row td")
        if len(cells) != 11 * parallelism:
            return None
        rows = [cells[i * 11:(i + 1) * 11] for i in range(parallelism)]
        return rows if all(re.fullmatch(r"\d+%", c) for r in rows for c in r[4:7]) else None
    rows = b.wait("the subtasks' busy, backpressured and idle percentages", rows_read)
    if worker and any(r[10] != worker for r in rows):
        raise CheckFailed(f"subtasks: the workers shown are {[r[10] for r in rows]}, expected {worker}")
    ok(f"{title}: {parallelism} subtask rows ({' | '.join(rows[0])})")
    b.screenshot("subtasks")


def check_checkpoints(b, job, savepoint_dir):
    b.click("#tab-checkpoints")
    b.wait("a completed checkpoint in the history",
           lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "table.checkpoint-history tr.checkpoint-row") if "COMPLETED" in r.text])
    ok(f"checkpoint history: {b.text('#checkpoints-completed')} completed; newest: {b.text('tr.checkpoint-row')}")
    # A savepoint from the page (into the directory typed, else the configured one): its
    # location shown once it completed.
    if savepoint_dir:
        b.driver.find_element(By.ID, "savepoint-dir").send_keys(savepoint_dir)
    b.click("#trigger-savepoint")
    message = b.wait("the savepoint completing", lambda d: "completed:" in (b.text("#job-operation") or "") and b.text("#job-operation"), 60)
    if not message.startswith("Savepoint completed: "):
        raise CheckFailed(f"savepoint: the page says '{message}'")
    location = message[len("Savepoint completed: "):].strip()
    b.wait("the savepoint in the history", lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "tr.checkpoint-row") if "Savepoint" in r.text])
    ok(f"savepoint triggered from the page completed: {location}")
    print(f"savepoint: {location}", flush=True)
    b.screenshot("checkpoints")


def check_sql(b, sql):
    b.click("#tab-sql")
    shown = b.wait("the SQL text", lambda d: b.text("#job-sql"))
    if shown.strip() != sql.strip():
        raise CheckFailed(f"SQL tab: shows '{shown}', expected '{sql}'")
    plan = b.text("#job-plan") or ""
    if not plan.startswith("Sink(") or "TableSourceScan" not in plan:
        raise CheckFailed(f"SQL tab: the plan is '{plan}'")
    ok(f"SQL tab shows the statement and a {len(plan.splitlines())}-line optimised plan")
    b.screenshot("sql")
    b.click("#tab-exceptions")
    b.wait("the exceptions tab", lambda d: b.text("#no-exceptions"))
    ok("exceptions tab: none")


def check_workers(b):
    b.click("#nav-workers")
    b.wait("a worker", lambda d: d.find_elements(By.CSS_SELECTOR, "tr.worker-row"))
    rows = b.texts("tr.worker-row")
    slots = b.text("tr.worker-row .worker-slots")
    m = re.match(r"(\d+) of (\d+) slots used", slots or "")
    if not m or int(m.group(1)) < 1:
        raise CheckFailed(f"workers: slots show '{slots}', expected some used by the running job")
    row = rows[0].replace("\n", " ")
    if " free of 0 B" in row or "free of" not in row:
        raise CheckFailed(f"workers: no memory shown: '{row}'")
    ok(f"workers page: {len(rows)} worker(s): {row}")
    b.screenshot("workers")


def check_submit(b):
    b.click("#nav-submit")
    script = ("CREATE TABLE ui_nums (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n"
              "CREATE TABLE ui_sink (n BIGINT) WITH ('connector' = 'blackhole');\n"
              "INSERT INTO ui_sink SELECT n FROM ui_nums;")
    b.wait("the script box", lambda d: d.find_elements(By.ID, "sql-script"))[0].send_keys(script)
    b.click("#sql-submit")
    link = b.wait("the submitted job's link", lambda d: d.find_elements(By.CSS_SELECTOR, "a.submitted-job") or
                  ("message-error" in (d.find_element(By.ID, "sql-result").get_attribute("innerHTML")) and
                   CheckFailed(f"submit: {b.text('#sql-result')}")))
    if isinstance(link, CheckFailed):
        raise link
    submitted = b.text("a.submitted-job")
    ok(f"submit-SQL page started job {submitted}")
    b.screenshot("submit")
    return submitted


def check_cancel(b, job):
    b.open(f"#/jobs/{job}")
    b.wait("the job page", lambda d: b.text("#job-id") == job)
    b.click("#cancel-job")
    b.wait("the confirmation", lambda d: d.switch_to.alert).accept()
    b.wait("the job CANCELED", lambda d: b.text("#job-state") == "CANCELED", 60)
    ok("cancel from the page: the job shows CANCELED")
    b.screenshot("canceled")
    b.open("#/")
    b.wait("the job among the completed jobs", lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, f"#completed-jobs tr[data-job-id='{job}']")
                                                          if "CANCELED" in r.text])
    ok("job list: the job is among the completed jobs, CANCELED")
    b.screenshot("jobs-after-cancel")


def check_stop(b, job):
    """Stop with savepoint from the page: its location shown, the job FINISHED (Flink's
    state after a stop)."""
    b.open(f"#/jobs/{job}")
    b.wait("the job page", lambda d: b.text("#job-id") == job and b.text("#job-state") == "RUNNING")
    b.click("#stop-job")
    b.wait("the confirmation", lambda d: d.switch_to.alert).accept()
    message = b.wait("the stop completing", lambda d: "completed:" in (b.text("#job-operation") or "") and b.text("#job-operation"), 60)
    prefix = "Stop with savepoint completed: "
    if not message.startswith(prefix):
        raise CheckFailed(f"stop with savepoint: the page says '{message}'")
    b.wait("the job FINISHED", lambda d: b.text("#job-state") == "FINISHED", 60)
    ok(f"stop with savepoint from the page: FINISHED, savepoint {message[len(prefix):]}")
    print(f"stop savepoint: {message[len(prefix):].strip()}", flush=True)
    b.screenshot("stopped")


def check_failed(b, job, failure):
    """A failed job: FAILED in the list and on its page, its exceptions tab showing the
    restart's cause and the final failure."""
    b.open("#/")
    b.wait("the failed job among the completed jobs", lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, f"#completed-jobs tr[data-job-id='{job}']")
                                                                 if "FAILED" in r.text])
    b.open(f"#/jobs/{job}/exceptions")
    b.wait("the failed job's page", lambda d: b.text("#job-id") == job and b.text("#job-state") == "FAILED")
    entries = b.wait("the exceptions", lambda d: len(b.texts(".exception pre")) >= 2 and b.texts(".exception pre"))
    if not all(failure in e for e in entries):
        raise CheckFailed(f"exceptions tab: expected '{failure}' in each entry, it shows {entries}")
    ok(f"exceptions tab of the failed job: {len(entries)} entries (a restart and the end): {entries[0]}")
    b.screenshot("exceptions")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--job", required=True)
    p.add_argument("--sql", required=True, help="the job's statement, as the SQL tab should show it")
    p.add_argument("--vertices", required=True, help="name prefixes of the graph's vertices, the source first")
    p.add_argument("--parallelism", type=int, default=1)
    p.add_argument("--worker", help="the worker every subtask of the last vertex shows")
    p.add_argument("--stop-job", help="another running job, to stop with a savepoint from its page")
    p.add_argument("--failed-job", help="a job that failed after a restart, with --failure in its exceptions")
    p.add_argument("--failure", help="text each of the failed job's exceptions contains")
    p.add_argument("--screenshots", required=True)
    p.add_argument("--savepoint-dir", help="typed into the page's savepoint directory box")
    p.add_argument("--embedded", action="store_true", help="a `clink run --web-ui` job: no submit-SQL endpoint")
    args = p.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    vertices = args.vertices.split(",")
    b = None
    try:
        b = Browser(args.url, args.screenshots)
        check_job_list(b, args.job)
        check_graph(b, args.job, vertices)
        check_subtasks(b, vertices, args.parallelism, args.worker)
        check_checkpoints(b, args.job, args.savepoint_dir)
        check_sql(b, args.sql)
        check_workers(b)
        if not args.embedded:
            check_submit(b)
        check_cancel(b, args.job)
        if args.stop_job:
            check_stop(b, args.stop_job)
        if args.failed_job:
            check_failed(b, args.failed_job, args.failure)
        errors = b.js_errors()
        if errors:
            raise CheckFailed("the browser logged errors: " + "; ".join(errors))
        ok("no JavaScript error or failed request in the browser's log")
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        if b:
            b.screenshot("failure")
        return 1
    finally:
        if b:
            b.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
