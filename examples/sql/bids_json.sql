-- Flink's window TVF documentation example on a JSON file: the Bid table, totals per
-- 10-minute tumbling window (a SELECT: shown as a table with the changelog's op column)
-- and per supplier (an unbounded GROUP BY: its updates show as -U/+U).
CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/bids.json',
  'format' = 'json'
);

SELECT window_start, window_end, SUM(price) AS total_price
FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;

SELECT supplier_id, COUNT(*) AS bids, SUM(price) AS total
FROM Bid
GROUP BY supplier_id;
