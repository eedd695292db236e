// The router and the refresh loop. Routes are the URL's fragment:
//   #/                       the job list          #/workers   the workers
//   #/jobs/<id>[/<tab>]      one job               #/submit    submit SQL
// The shown page refreshes every REFRESH_MS while "Auto-refresh" is on.
'use strict';

(function () {
  const REFRESH_MS = 2000;
  let page = null;       // the shown page
  let timer = null;
  let running = false;   // a refresh is under way: the next waits for it
  let again = false;     // a refresh was asked for meanwhile

  function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] === 'jobs' && parts[1]) return ['job', parts.slice(1)];
    if (parts[0] === 'workers') return ['workers', []];
    if (parts[0] === 'submit') return ['submit', []];
    return ['jobs', []];
  }

  function status(text, error) {
    const s = document.getElementById('refresh-status');
    s.textContent = text;
    s.classList.toggle('error', !!error);
  }

  async function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    const shown = page;
    try {
      await shown.refresh();
      if (shown === page) {
        status(`Updated ${UI.fmtTime(Date.now()).slice(11)}`);
        document.getElementById('page-error').innerHTML = '';
      }
    } catch (e) {
      if (shown === page) {
        status('Update failed', true);
        UI.showMessage(document.getElementById('page-error'), 'error', e.message);
      }
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      refresh();
    }
  }
  // Redraws the page now (after an action, a click on a vertex).
  UI.refreshNow = refresh;

  function schedule() {
    clearInterval(timer);
    timer = null;
    if (document.getElementById('auto-refresh').checked) timer = setInterval(refresh, REFRESH_MS);
  }

  function show() {
    const [name, params] = route();
    document.querySelectorAll('#nav a').forEach((a) => a.classList.toggle('active', a.dataset.page === (name === 'job' ? 'jobs' : name)));
    page = UI.pages[name];
    document.getElementById('page-error').innerHTML = '';
    page.mount(document.getElementById('page'), params);
    refresh();
  }

  async function version() {
    try {
      const config = await UI.get('/config');
      document.getElementById('version').textContent = `${config['flink-revision']} · Flink REST ${config['flink-version']}`;
    } catch (e) {
      document.getElementById('version').textContent = '';
    }
  }

  window.addEventListener('hashchange', show);
  window.addEventListener('DOMContentLoaded', () => {
    document.getElementById('auto-refresh').addEventListener('change', schedule);
    version();
    show();
    schedule();
  });
})();
