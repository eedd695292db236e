-- VALUES is a bounded source at parallelism 1.
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
SET 'parallelism.default' = '2';
INSERT INTO totals VALUES ('a', 1), ('bb', CAST(NULL AS BIGINT));
