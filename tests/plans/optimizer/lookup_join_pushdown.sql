-- A processing-time lookup join (Flink's LookupJoin): WHERE conjuncts on the probe side go
-- below the join; an INNER join takes those on the table into its condition, where a
-- constant equality becomes a lookup key and a table-only conjunct the filter on fetched
-- rows (where=[...]); only the table columns read are fetched.
CREATE TABLE orders (id BIGINT, customer INT, amount INT, proc_time AS PROCTIME())
  WITH ('connector' = 'datagen');
CREATE TABLE customers (id INT, name STRING, country STRING, active BOOLEAN, since DATE)
  WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://localhost:5432/shop', 'table-name' = 'customers');
SELECT o.id, c.name, o.amount FROM orders o
  JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id AND c.active
  WHERE o.amount > 100 AND c.country = 'NL' AND o.amount < c.id;
