-- A regular join under mini-batch: sql_join takes mini_batch_size / mini_batch_latency_ms
-- (Flink's Join with miniBatch=[true]), for the insert-only input as for the updating one.
CREATE TABLE orders (id INT, `user` STRING, amount INT) WITH ('connector' = 'filesystem', 'path' = '/data/orders.csv', 'format' = 'csv');
CREATE TABLE users (`user` STRING, city STRING) WITH ('connector' = 'filesystem', 'path' = '/data/users.csv', 'format' = 'csv');
CREATE TABLE out_print (`user` STRING, cnt BIGINT, city STRING) WITH ('connector' = 'print');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.mini-batch.size' = '500';
INSERT INTO out_print SELECT a.`user`, a.cnt, u.city FROM (SELECT `user`, COUNT(*) AS cnt FROM orders GROUP BY `user`) a LEFT JOIN users u ON a.`user` = u.`user`;
