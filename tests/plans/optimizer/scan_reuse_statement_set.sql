-- Scan reuse across a statement set: the two INSERTs read different columns of one table
-- and run on one source reading both; a scan with other options (a hint) keeps its own.
CREATE TABLE orders (id BIGINT, customer BIGINT, product STRING, amount INT)
  WITH ('connector' = 'filesystem', 'path' = '/data/orders', 'format' = 'json');
CREATE TABLE out1 (product STRING, amount INT) WITH ('connector' = 'blackhole');
CREATE TABLE out2 (id BIGINT, customer BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE out3 (id BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out1 SELECT product, amount FROM orders;
INSERT INTO out2 SELECT id, customer FROM orders;
INSERT INTO out3 SELECT id FROM orders /*+ OPTIONS('json.ignore-parse-errors' = 'true') */;
END;
