// The cluster's pages: the job list (with the cluster's totals), the workers, and the
// submit-SQL form. Each page is {mount(root, params), refresh()}: mount draws what does
// not change, refresh (every couple of seconds, app.js) what does.
'use strict';

(function () {
  const esc = UI.esc;

  function card(label, value, id) {
    return `<div class="card"><div class="card-value" id="${id}">${esc(value)}</div><div class="card-label">${esc(label)}</div></div>`;
  }

  function jobRow(j) {
    const t = j.tasks || {};
    return `<tr class="job-row" data-job-id="${esc(j.jid)}">
      <td><a href="#/jobs/${esc(j.jid)}" class="job-name">${esc(j.name)}</a><div class="sub mono">${esc(j.jid)}</div></td>
      <td>${UI.fmtTime(j['start-time'])}</td>
      <td>${UI.fmtDuration(j.duration)}</td>
      <td>${t.running ?? 0} running · ${t.finished ?? 0} finished${t.failed ? ` · ${t.failed} failed` : ''} / ${t.total ?? 0}</td>
      <td class="job-state">${UI.stateBadge(j.state)}</td></tr>`;
  }

  function jobTable(jobs, empty) {
    if (!jobs.length) return `<p class="empty">${esc(empty)}</p>`;
    return `<table class="table"><thead><tr><th>Job</th><th>Started</th><th>Duration</th><th>Tasks</th><th>State</th></tr></thead>
      <tbody>${jobs.map(jobRow).join('')}</tbody></table>`;
  }

  // The job list and the cluster's totals (/overview, /jobs/overview).
  UI.pages.jobs = {
    mount(root) {
      root.innerHTML = `<h1>Jobs</h1>
        <div class="cards" id="cluster-cards"></div>
        <h2>Running jobs</h2><div id="running-jobs"></div>
        <h2>Completed jobs</h2><div id="completed-jobs"></div>`;
    },
    async refresh() {
      const [overview, list] = await Promise.all([UI.get('/overview'), UI.get('/jobs/overview')]);
      document.getElementById('cluster-cards').innerHTML =
        card('Workers', overview.taskmanagers, 'card-workers') +
        card('Slots available / total', `${overview['slots-available']} / ${overview['slots-total']}`, 'card-slots') +
        card('Running jobs', overview['jobs-running'], 'card-running') +
        card('Finished', overview['jobs-finished'], 'card-finished') +
        card('Canceled', overview['jobs-cancelled'], 'card-canceled') +
        card('Failed', overview['jobs-failed'], 'card-failed');
      const jobs = list.jobs || [];
      const done = (j) => UI.TERMINAL_STATES.includes(j.state);
      document.getElementById('running-jobs').innerHTML = jobTable(jobs.filter((j) => !done(j)), 'No job is running.');
      document.getElementById('completed-jobs').innerHTML = jobTable(jobs.filter(done), 'No job has ended yet.');
    },
  };

  // The workers (task managers) with their slots and memory (/taskmanagers), and the
  // coordinator's configuration (/jobmanager/config).
  UI.pages.workers = {
    mount(root) {
      root.innerHTML = `<h1>Workers</h1><div id="workers"></div>
        <h2>Coordinator configuration</h2><div id="coordinator-config"></div>`;
    },
    async refresh() {
      const [tms, config] = await Promise.all([UI.get('/taskmanagers'), UI.get('/jobmanager/config')]);
      const rows = (tms.taskmanagers || []).map((tm) => {
        const hw = tm.hardware || {};
        const used = tm.slotsNumber - tm.freeSlots;
        const share = tm.slotsNumber > 0 ? used / tm.slotsNumber : 0;
        const memUsed = hw.physicalMemory > 0 ? 1 - hw.freeMemory / hw.physicalMemory : 0;
        return `<tr class="worker-row" data-worker-id="${esc(tm.id)}">
          <td class="mono">${esc(tm.id)}<div class="sub">${esc(tm.path)}</div></td>
          <td><div class="bar"><div class="bar-fill" style="width:${share * 100}%"></div></div>
              <span class="worker-slots">${used} of ${tm.slotsNumber} slots used</span> (${tm.freeSlots} free)</td>
          <td>${hw.cpuCores ?? '–'}</td>
          <td><div class="bar"><div class="bar-fill" style="width:${memUsed * 100}%"></div></div>
              ${UI.fmtBytes(hw.freeMemory)} free of ${UI.fmtBytes(hw.physicalMemory)}</td>
          <td>${tm.dataPort >= 0 ? tm.dataPort : '–'}</td>
          <td>${UI.fmtDuration(tm.timeSinceLastHeartbeat)} ago</td></tr>`;
      });
      document.getElementById('workers').innerHTML = rows.length
        ? `<table class="table"><thead><tr><th>Worker</th><th>Slots</th><th>CPU cores</th><th>Memory</th><th>Data port</th><th>Last heartbeat</th></tr></thead>
           <tbody>${rows.join('')}</tbody></table>`
        : '<p class="empty">No worker has registered.</p>';
      const entries = (config || []).map((e) => `<tr><td class="mono">${esc(e.key)}</td><td class="mono">${esc(e.value)}</td></tr>`);
      document.getElementById('coordinator-config').innerHTML = entries.length
        ? `<table class="table compact"><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody>${entries.join('')}</tbody></table>`
        : '<p class="empty">Defaults only.</p>';
    },
  };

  // "key: value" lines (Flink's flat configuration keys) into the options object.
  function parseOptions(text) {
    const options = {};
    text.split('\n').forEach((line, i) => {
      const trimmed = line.trim();
      if (!trimmed || trimmed.startsWith('#')) return;
      const sep = trimmed.search(/[:=]/);
      if (sep <= 0) throw new Error(`options, line ${i + 1}: expected "key: value", got "${trimmed}"`);
      options[trimmed.slice(0, sep).trim()] = trimmed.slice(sep + 1).trim();
    });
    return options;
  }

  const EXAMPLE = `CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE,
  ts AS LOCALTIMESTAMP,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '100');

CREATE TABLE sink (id BIGINT, amount DOUBLE) WITH ('connector' = 'blackhole');

INSERT INTO sink SELECT id, amount FROM orders WHERE amount > 0.5;`;

  // A SQL script run on the coordinator (POST /api/v1/jobs/sql): its DDL into the
  // coordinator's catalog, each INSERT or statement set a job.
  UI.pages.submit = {
    mount(root) {
      root.innerHTML = `<h1>Submit SQL</h1>
        <p class="hint">A Flink SQL script: CREATE TABLE / VIEW / FUNCTION statements go into the coordinator's catalog
          (kept for later scripts); each INSERT or statement set starts a job. SELECTs need a client that shows rows
          (<span class="mono">clink sql</span>).</p>
        <label for="sql-script">Script</label>
        <textarea id="sql-script" class="code" rows="16" spellcheck="false"></textarea>
        <label for="sql-options">Options <span class="hint">(one "key: value" a line, Flink's configuration keys, e.g.
          execution.checkpointing.interval: 10 s)</span></label>
        <textarea id="sql-options" class="code" rows="4" spellcheck="false"></textarea>
        <div class="actions"><button id="sql-submit" class="primary">Submit</button>
          <button id="sql-example">Insert an example</button></div>
        <div id="sql-result"></div>`;
      const result = document.getElementById('sql-result');
      document.getElementById('sql-example').onclick = () => { document.getElementById('sql-script').value = EXAMPLE; };
      document.getElementById('sql-submit').onclick = async () => {
        const button = document.getElementById('sql-submit');
        button.disabled = true;
        UI.showMessage(result, 'info', 'Submitting…');
        try {
          const options = parseOptions(document.getElementById('sql-options').value);
          const answer = await UI.post('/api/v1/jobs/sql', { script: document.getElementById('sql-script').value, options });
          const ids = answer.jobids || [];
          result.innerHTML = ids.length
            ? `<div class="message message-ok">Submitted ${ids.length === 1 ? 'a job' : ids.length + ' jobs'}: ` +
              ids.map((id) => `<a class="mono submitted-job" href="#/jobs/${esc(id)}">${esc(id)}</a>`).join(', ') + '</div>'
            : '<div class="message message-ok">Done: the script started no job (DDL only).</div>';
        } catch (e) {
          const text = e.status === 404 ? 'This server does not run SQL scripts (POST /api/v1/jobs/sql answered 404).' : e.message;
          UI.showMessage(result, 'error', text);
        } finally {
          button.disabled = false;
        }
      };
    },
    async refresh() {},  // nothing changes by itself; a refresh would clear what is typed
  };
})();
