// The Nexmark benchmark's Flink SQL (nexmark/nexmark, nexmark-flink/src/main/resources/queries),
// verbatim but for the ${NEXMARK_TABLE} template the runner substitutes.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

TEST(ParserNexmark, DatagenTable) {
  EXPECT_EQ(dump(R"sql(CREATE TABLE datagen (
    event_type int,
    person ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        dateTime TIMESTAMP(3),
        extra  VARCHAR>,
    auction ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        dateTime  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        dateTime  TIMESTAMP(3),
        extra  VARCHAR>,
    dateTime AS
        CASE
            WHEN event_type = 0 THEN person.dateTime
            WHEN event_type = 1 THEN auction.dateTime
            ELSE bid.dateTime
        END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '${TPS}',
    'next-event.rate' = '${TPS}',
    'events.num' = '${EVENTS_NUM}',
    'person.proportion' = '${PERSON_PROPORTION}',
    'auction.proportion' = '${AUCTION_PROPORTION}',
    'bid.proportion' = '${BID_PROPORTION}'
);)sql"),
            "CREATE TABLE datagen (event_type INT, person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, cred"
            "itCard VARCHAR, city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>, auction ROW<id B"
            "IGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP("
            "3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>, bid ROW<auction BIGINT, bi"
            "dder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra VARCHAR>, dateTime AS CASE WHEN (event_type "
            "= 0) THEN person.dateTime WHEN (event_type = 1) THEN auction.dateTime ELSE bid.dateTime END, WATERMA"
            "RK FOR dateTime AS (dateTime - INTERVAL '4' SECOND)) WITH ('connector' = 'nexmark', 'first-event.rat"
            "e' = '${TPS}', 'next-event.rate' = '${TPS}', 'events.num' = '${EVENTS_NUM}', 'person.proportion' = '"
            "${PERSON_PROPORTION}', 'auction.proportion' = '${AUCTION_PROPORTION}', 'bid.proportion' = '${BID_PRO"
            "PORTION}')");
}

TEST(ParserNexmark, PersonView) {
  EXPECT_EQ(dump(R"sql(CREATE VIEW person AS
SELECT
    person.id,
    person.name,
    person.emailAddress,
    person.creditCard,
    person.city,
    person.state,
    customTime,
    person.extra
FROM datagen WHERE event_type = 0;)sql"),
            "CREATE VIEW person AS SELECT person.id, person.name, person.emailAddress, person.creditCard, person."
            "city, person.state, customTime, person.extra FROM datagen WHERE (event_type = 0)");
}

TEST(ParserNexmark, Q18Deduplication) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, dateTime, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;)sql"),
            "INSERT INTO nexmark_q18 SELECT auction, bidder, price, channel, url, dateTime, extra FROM (SELECT *,"
            " ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number FROM bid) WH"
            "ERE (rank_number <= 1)");
}

TEST(ParserNexmark, Q14Calculation) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q14
SELECT 
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(dateTime) >= 8 AND HOUR(dateTime) <= 18 THEN 'dayTime'
        WHEN HOUR(dateTime) <= 6 OR HOUR(dateTime) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    dateTime,
    extra,
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;)sql"),
            "INSERT INTO nexmark_q14 SELECT auction, bidder, (0.908 * price) AS price, CASE WHEN ((HOUR(dateTime)"
            " >= 8) AND (HOUR(dateTime) <= 18)) THEN 'dayTime' WHEN ((HOUR(dateTime) <= 6) OR (HOUR(dateTime) >= "
            "20)) THEN 'nightTime' ELSE 'otherTime' END AS bidTimeType, dateTime, extra, count_char(extra, 'c') A"
            "S c_counts FROM bid WHERE (((0.908 * price) > 1000000) AND ((0.908 * price) < 50000000))");
}

TEST(ParserNexmark, Q7HighestBid) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q7
SELECT B.auction, B.bidder, B.price, B.dateTime, B.extra
from bid B
JOIN (
  SELECT MAX(price) AS maxprice, window_end as dateTime
  FROM TABLE(
          TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.dateTime BETWEEN B1.dateTime  - INTERVAL '10' SECOND AND B1.dateTime;)sql"),
            "INSERT INTO nexmark_q7 SELECT B.auction, B.bidder, B.price, B.dateTime, B.extra FROM (bid AS B JOIN "
            "(SELECT MAX(price) AS maxprice, window_end AS dateTime FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateT"
            "ime), INTERVAL '10' SECOND)) GROUP BY window_start, window_end) AS B1 ON (B.price = B1.maxprice)) WH"
            "ERE (B.dateTime BETWEEN (B1.dateTime - INTERVAL '10' SECOND) AND B1.dateTime)");
}

TEST(ParserNexmark, Q5HotItems) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;)sql"),
            "INSERT INTO nexmark_q5 SELECT AuctionBids.auction, AuctionBids.num FROM ((SELECT auction, count(*) A"
            "S num, window_start AS starttime, window_end AS endtime FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTim"
            "e), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end) AS Aucti"
            "onBids JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime FROM (SELECT "
            "count(*) AS num, window_start AS starttime, window_end AS endtime FROM TABLE(HOP(TABLE bid, DESCRIPT"
            "OR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end"
            ") AS CountBids GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids ON (((AuctionBids.startti"
            "me = MaxBids.starttime) AND (AuctionBids.endtime = MaxBids.endtime)) AND (AuctionBids.num >= MaxBids"
            ".maxn)))");
}

TEST(ParserNexmark, Q8MonitorNewUsers) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q8
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
            TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
        TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;)sql"),
            "INSERT INTO nexmark_q8 SELECT P.id, P.name, P.starttime FROM ((SELECT id, name, window_start AS star"
            "ttime, window_end AS endtime FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SEC"
            "OND)) GROUP BY id, name, window_start, window_end) AS P JOIN (SELECT seller, window_start AS startti"
            "me, window_end AS endtime FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECON"
            "D)) GROUP BY seller, window_start, window_end) AS A ON (((P.id = A.seller) AND (P.starttime = A.star"
            "ttime)) AND (P.endtime = A.endtime)))");
}

TEST(ParserNexmark, Q11UserSessions) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q11
SELECT
    B.bidder,
    count(*) as bid_count,
    SESSION_START(B.dateTime, INTERVAL '10' SECOND) as starttime,
    SESSION_END(B.dateTime, INTERVAL '10' SECOND) as endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND);)sql"),
            "INSERT INTO nexmark_q11 SELECT B.bidder, count(*) AS bid_count, SESSION_START(B.dateTime, INTERVAL '"
            "10' SECOND) AS starttime, SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime FROM bid AS B GRO"
            "UP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)");
}

// The select list is shortened to its distinct shapes (the full query repeats them).
TEST(ParserNexmark, Q16ChannelStatistics) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q16
SELECT
    channel,
    DATE_FORMAT(dateTime, 'yyyy-MM-dd') as `day`,
    max(DATE_FORMAT(dateTime, 'HH:mm')) as `minute`,
    count(*) AS total_bids,
    count(*) filter (where price < 10000) AS rank1_bids,
    count(distinct bidder) filter (where price >= 10000 and price < 1000000) AS rank2_bidders
FROM bid
GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd');)sql"),
            "INSERT INTO nexmark_q16 SELECT channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd') AS day, max(DATE_FORMAT("
            "dateTime, 'HH:mm')) AS minute, count(*) AS total_bids, count(*) FILTER (WHERE (price < 10000)) AS ra"
            "nk1_bids, count(DISTINCT bidder) FILTER (WHERE ((price >= 10000) AND (price < 1000000))) AS rank2_bi"
            "dders FROM bid GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd')");
}

// Q13 parses (FOR SYSTEM_TIME AS OF is kept on the table); binding rejects its
// processing-time temporal join as Flink does (tests/sql/temporal_join.test).
TEST(ParserNexmark, Q13TemporalJoin) {
  EXPECT_EQ(dump(R"sql(INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.customTime,
    S.`value`
FROM (SELECT *, PROCTIME() as p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;)sql"),
            "INSERT INTO nexmark_q13 SELECT B.auction, B.bidder, B.price, B.customTime, S.value FROM ((SELECT *, PROC"
            "TIME() AS p_time FROM bid) AS B JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON (mod(B.auction, 1"
            "0000) = S.key))");
}

}  // namespace
}  // namespace clink::test
