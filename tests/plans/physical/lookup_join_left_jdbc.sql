-- A LEFT lookup join into a sink: the sql_lookup_join op chained after the probe side
-- (forward edge), its lookup keys, pre-filter (the ON condition on the probe side),
-- remaining condition, the table's options for the jdbc lookup source, and the session's
-- async lookup settings.
SET 'table.exec.async-lookup.output-mode' = 'ALLOW_UNORDERED';
SET 'table.exec.async-lookup.buffer-capacity' = '500';
CREATE TABLE orders (id BIGINT, customer INT, amount INT, proc_time AS PROCTIME())
  WITH ('connector' = 'datagen', 'number-of-rows' = '100');
CREATE TABLE customers (id INT, name STRING, credit INT)
  WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://localhost:5432/shop', 'table-name' = 'customers',
        'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10000',
        'lookup.partial-cache.expire-after-write' = '10 min', 'lookup.max-retries' = '5');
CREATE TABLE enriched (id BIGINT, name STRING) WITH ('connector' = 'print');
INSERT INTO enriched SELECT o.id, c.name FROM orders AS o
  LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
  ON o.customer = c.id AND o.amount > 0 AND o.amount <= c.credit;
