-- An upsert-kafka table reaches the plan as a retract stream: the source's upserts are
-- normalised by the primary key (Flink's ChangelogNormalize) before the aggregate.
CREATE TABLE users (id BIGINT, region STRING NOT NULL, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE per_region (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'per-region', 'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO per_region SELECT region, COUNT(*) FROM users GROUP BY region;
