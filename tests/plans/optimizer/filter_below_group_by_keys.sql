-- A filter on GROUP BY keys goes below the aggregate; one on an aggregate result stays above.
CREATE TABLE orders (
  id BIGINT, customer BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '/data/orders', 'format' = 'json',
        'statistics.row-count' = '100000', 'statistics.columns.product.ndv' = '50',
        'statistics.columns.customer.ndv' = '5000');
CREATE TABLE customers (id BIGINT, name STRING, country STRING)
  WITH ('connector' = 'filesystem', 'path' = '/data/customers', 'format' = 'json',
        'statistics.row-count' = '5000', 'statistics.columns.id.ndv' = '5000',
        'statistics.columns.country.ndv' = '20');
CREATE TABLE countries (code STRING, region STRING)
  WITH ('connector' = 'filesystem', 'path' = '/data/countries', 'format' = 'json',
        'statistics.row-count' = '20', 'statistics.columns.code.ndv' = '20');
CREATE TABLE gen (a INT, b STRING, c DOUBLE) WITH ('connector' = 'datagen');
SELECT * FROM (SELECT b, COUNT(*) AS n FROM gen GROUP BY b) AS s WHERE b <> 'z' AND n > 2;
