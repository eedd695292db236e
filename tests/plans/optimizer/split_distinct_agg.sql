-- Split distinct aggregation (Flink's SplitAggregateRule): a partial aggregate by the keys
-- and MOD(HASH_CODE(arg), 1024) of each DISTINCT argument (and MAX's), each row expanded
-- once per group set ($e), and a final aggregate by the keys summing the partial counts.
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING) WITH ('connector' = 'datagen');
SET 'table.optimizer.distinct-agg.split.enabled' = 'true';
SELECT channel, COUNT(*) AS n, COUNT(DISTINCT bidder) FILTER (WHERE price < 100) AS cheap_bidders,
  COUNT(DISTINCT auction) AS auctions, MAX(price) AS top
FROM bids GROUP BY channel;
