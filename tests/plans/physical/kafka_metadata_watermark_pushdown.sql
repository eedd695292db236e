-- A kafka table: its metadata columns follow the physical ones out of the source, the
-- projection restores the declared order, and the WATERMARK is pushed into the source
-- (generated per partition): no sql_watermark_assigner op.
CREATE TABLE bids (
  auction BIGINT,
  price DOUBLE,
  ts BIGINT,
  part INT METADATA FROM 'partition' VIRTUAL,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'bids', 'properties.bootstrap.servers' = 'localhost:9092',
        'format' = 'json', 'scan.watermark.idle-timeout' = '5 s');
CREATE TABLE out (auction BIGINT, part INT, c BIGINT) WITH ('connector' = 'print');
INSERT INTO out
SELECT auction, part, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(rt), INTERVAL '10' SECOND))
GROUP BY auction, part, window_start, window_end;
