-- Scan reuse: a table read twice with different projections (top-level columns and a
-- narrowed ROW) runs as one source reading the union (kind, note, r ROW<a, b, ts>): the
-- join's side reads kind, note and r.a, r.b, the window reads r.a only (and r.ts, the
-- rowtime); the computed column and the WATERMARK above the source run once, and each
-- consumer reads its columns from them.
CREATE TABLE events (
  kind INT, note STRING,
  r ROW<a BIGINT, b STRING, c STRING, ts TIMESTAMP(3)>,
  ts AS r.ts,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '/data/events', 'format' = 'json');
SELECT x.a, x.b, x.note, y.maxa FROM
  (SELECT r.a AS a, r.b AS b, note FROM events WHERE kind = 1) x
JOIN
  (SELECT MAX(r.a) AS maxa FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
   GROUP BY window_start, window_end) y
ON x.a = y.maxa;
