-- File sources report malformed records to the dead-letter sink when one is set.
CREATE TABLE orders (
  id BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '/data/orders.json', 'format' = 'json',
        'json.ignore-parse-errors' = 'true');
CREATE TABLE clicks (url STRING, ts TIMESTAMP(3)) WITH ('connector' = 'datagen',
  'number-of-rows' = '100', 'event_time_column' = 'ts', 'watermark_lag_ms' = '1000',
  'allowed_lateness_ms' = '500', 'late_records_to_dlq' = 'true');
CREATE TABLE totals (product STRING, total BIGINT) WITH ('connector' = 'print', 'print-identifier' = 't');
CREATE TABLE file_sink (product STRING, total BIGINT) WITH ('connector' = 'filesystem', 'path' = '/out',
  'format' = 'csv');
CREATE TABLE windows (ws TIMESTAMP(3), we TIMESTAMP(3), url STRING, n BIGINT)
  WITH ('connector' = 'collect', 'name' = 'w');
CREATE TABLE events (k STRING, ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts)
    WITH ('connector' = 'nexmark', 'scan.watermark.emit.strategy' = 'on-event',
    'scan.watermark.idle-timeout' = '1 min', 'scan.watermark.alignment.group' = 'g',
    'scan.watermark.alignment.max-drift' = '20s');
SET 'sql.dead-letter' = '/tmp/dlq';
SET 'table.local-time-zone' = 'Europe/Berlin';
INSERT INTO totals SELECT product, id FROM orders;
