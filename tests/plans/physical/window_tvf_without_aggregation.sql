-- A window TVF without aggregation assigns windows; late records go to the dead-letter table.
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
CREATE TABLE tvf_out (url STRING, ws TIMESTAMP(3), we TIMESTAMP(3)) WITH ('connector' = 'collect');
SET 'sql.dead-letter' = 'dlq_table';
CREATE TABLE dlq_table (reason STRING, origin STRING, position STRING, payload STRING) WITH ('connector' = 'collect', 'name' = 'dlq');
INSERT INTO tvf_out SELECT url, window_start, window_end FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND));
